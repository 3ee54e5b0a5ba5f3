/**
 * mcp-turns' own metrics, exported through the Temporal Runtime's meter (so they appear on the same
 * Prometheus endpoint as Temporal's): tool calls by server, tool and outcome; breaker state per
 * server; Claude calls and tokens by model.
 */
import type { MetricMeter } from '@temporalio/common';
import type { BreakerState, PoolEvents } from '../mcp';
import type { ClaudeMetrics } from '../claude/claude-metrics';

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

export function poolMetrics(meter: MetricMeter): PoolEvents {
  const calls = meter.createCounter('mcp_turns_tool_calls', '1', 'MCP tool calls by server, tool and outcome');
  const breaker = meter.createGauge('mcp_turns_breaker_state', 'int', '1', 'Circuit breaker per server: 0 closed, 1 half-open, 2 open');
  const transitions = meter.createCounter('mcp_turns_breaker_transitions', '1', 'Circuit breaker state changes');
  return {
    onCall: (server, tool, outcome) => calls.add(1, { server, tool, outcome }),
    onBreakerChange: (server, from, to) => {
      breaker.set(BREAKER_VALUE[to], { server });
      transitions.add(1, { server, from, to });
    },
  };
}

export function claudeMetrics(meter: MetricMeter): ClaudeMetrics {
  const calls = meter.createCounter('mcp_turns_claude_calls', '1', 'Claude calls by kind, model and outcome');
  const tokens = meter.createCounter('mcp_turns_claude_tokens', '1', 'Claude tokens by kind, model and token type');
  return {
    record(kind, model, usage, outcome) {
      calls.add(1, { kind, model, outcome });
      tokens.add(usage.inputTokens, { kind, model, type: 'input' });
      tokens.add(usage.outputTokens, { kind, model, type: 'output' });
      tokens.add(usage.cacheReadInputTokens, { kind, model, type: 'cache_read' });
      tokens.add(usage.cacheCreationInputTokens, { kind, model, type: 'cache_creation' });
    },
  };
}
