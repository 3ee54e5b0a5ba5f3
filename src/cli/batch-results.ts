/** The batch results file (one JSON line per query) and the closing summary. */
import type { BatchItemOutcome } from '../client/batch-client';
import type { TurnStopReason } from '../core/turn-result';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../core/usage';

export interface ResultLine {
  id: string;
  status: 'completed' | 'failed';
  answer?: string;
  stopReason?: TurnStopReason;
  usage?: TokenUsage;
  costUsd?: number;
  toolCalls?: number;
  durationMs?: number;
  error?: string;
  workflowId: string;
}

export function resultLine(o: BatchItemOutcome): ResultLine {
  const line: ResultLine = { id: o.id, status: o.status, workflowId: o.workflowId };
  if (o.result) {
    line.answer = o.result.response.conversation;
    line.stopReason = o.result.stopReason;
    line.usage = o.result.usage;
    line.costUsd = o.result.costUsd;
    line.toolCalls = o.result.toolCalls.length;
  }
  if (o.durationMs !== undefined) line.durationMs = o.durationMs;
  if (o.error) line.error = o.error;
  return line;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function batchSummary(lines: ResultLine[], out: string): string {
  const completed = lines.filter((l) => l.status === 'completed');
  const failed = lines.length - completed.length;
  const usage = completed.reduce<TokenUsage>((u, l) => (l.usage ? addUsage(u, l.usage) : u), ZERO_USAGE);
  const cost = completed.reduce((c, l) => c + (l.costUsd ?? 0), 0);
  const times = completed.map((l) => l.durationMs).filter((t): t is number => t !== undefined).sort((a, b) => a - b);
  return [
    `${lines.length} results in ${out}: ${completed.length} completed, ${failed} failed`,
    `tokens: ${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.cacheReadInputTokens} cache read, ${usage.cacheCreationInputTokens} cache write · cost $${cost.toFixed(4)}`,
    `turn time: p50 ${(percentile(times, 50) / 1000).toFixed(2)} s, p95 ${(percentile(times, 95) / 1000).toFixed(2)} s`,
  ].join('\n');
}
