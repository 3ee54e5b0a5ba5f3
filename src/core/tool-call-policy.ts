/**
 * How a server's tool calls are scheduled as activities: the one definition of the defaults (the
 * worker config's server entries default to these) and of the rule that turns a server's settings
 * into the policy the workflow schedules with.
 */
import type { ServerCallPolicy } from './contracts';

/** A tool-call activity's start-to-close exceeds the MCP request timeout by this much, so the request times out first. */
export const ACTIVITY_MARGIN_MS = 10_000;

/** Per-server defaults for tool calls. */
export const TOOL_CALL_DEFAULTS = {
  /** MCP request timeout. */
  timeoutMs: 30_000,
  /** Activity heartbeat timeout; progress notifications and a periodic beat keep it alive. */
  heartbeatTimeoutMs: 15_000,
  /** Temporal's retry of a tool call. */
  retry: { maximumAttempts: 3, initialIntervalMs: 1000, backoffCoefficient: 2, maximumIntervalMs: 10_000 },
} as const;

/** The settings of one server that decide its call policy. */
export interface ToolCallSettings {
  timeoutMs: number;
  /** A request that reports progress may run this long in total. */
  maxTotalTimeoutMs?: number;
  heartbeatTimeoutMs: number;
  retry: ServerCallPolicy['retry'];
  /** How long a call waits for a person to answer the server's questions. */
  inputTimeoutMs?: number;
}

/** How long a call waits for a person to answer a server's questions by default: then they are declined. */
export const DEFAULT_INPUT_TIMEOUT_MS = 600_000;

export function toolCallPolicy(s: ToolCallSettings): ServerCallPolicy {
  return {
    localTools: [],
    startToCloseTimeoutMs: Math.max(s.timeoutMs, s.maxTotalTimeoutMs ?? 0) + ACTIVITY_MARGIN_MS,
    heartbeatTimeoutMs: s.heartbeatTimeoutMs,
    retry: { ...s.retry },
    ...(s.inputTimeoutMs !== undefined ? { inputTimeoutMs: s.inputTimeoutMs } : {}),
  };
}

/** The policy of a server the worker sent none for. */
export const DEFAULT_TOOL_CALL_POLICY: ServerCallPolicy = toolCallPolicy(TOOL_CALL_DEFAULTS);
