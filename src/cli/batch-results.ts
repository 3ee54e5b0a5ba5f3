/**
 * The batch results file (one JSON line per query): what an earlier run left in it, the line the
 * CLI starts with, and the closing summary.
 */
import type { BatchItemOutcome } from '../client/batch-client';
import type { TurnStopReason } from '../core/turn-result';
import { DEFAULT_MESSAGE_BATCH_DEADLINE_MS } from '../core/message-batches';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../core/usage';
import { formatDuration } from './duration';

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

/** What an earlier run of the batch left in its results file, for the queries of this run. */
export interface EarlierResults {
  /** Completed lines, one per query: kept, never run again. */
  kept: ResultLine[];
  /** Queries whose only line is a failure: their turn is started anew (ALLOW_DUPLICATE_FAILED_ONLY). */
  failedBefore: number;
}

/** Sorts the lines of an earlier run: lines of ids not in `ids` (queries no longer in the file) are left out. */
export function earlierResults(lines: ResultLine[], ids: ReadonlySet<string>): EarlierResults {
  const kept = new Map<string, ResultLine>();
  for (const l of lines) if (ids.has(l.id) && l.status === 'completed' && !kept.has(l.id)) kept.set(l.id, l);
  const failed = new Set(lines.filter((l) => ids.has(l.id) && l.status === 'failed' && !kept.has(l.id)).map((l) => l.id));
  return { kept: [...kept.values()], failedBefore: failed.size };
}

function queries(n: number): string {
  return `${n} ${n === 1 ? 'query' : 'queries'}`;
}

/** `; through Message Batches (half price, deadline 24 h)`: the default deadline is the API's own. */
function throughMessageBatches(messageBatches: { deadlineMs?: number }): string {
  const deadline = formatDuration((messageBatches.deadlineMs ?? DEFAULT_MESSAGE_BATCH_DEADLINE_MS) / 1000).replace(/ 0 (min|s)$/, '');
  return `; through Message Batches (half price, deadline ${deadline})`;
}

/**
 * The line a batch starts with: how many queries it has, on a rerun what the results file holds
 * already, and whether its Claude calls go through Message Batches.
 */
export function startLine(opts: {
  name: string;
  total: number;
  earlier: EarlierResults;
  out: string;
  concurrency: number;
  messageBatches?: { deadlineMs?: number };
}): string {
  const { name, total, earlier, out, concurrency } = opts;
  const kept = earlier.kept.length;
  const through = opts.messageBatches ? throughMessageBatches(opts.messageBatches) : '';
  if (!kept && !earlier.failedBefore) return `batch ${name}: ${queries(total)} to run; concurrency ${concurrency}; results in ${out}${through}`;
  const parts = [`${kept} already completed in ${out} (kept)`];
  if (earlier.failedBefore) parts.push(`${earlier.failedBefore} failed before (run again)`);
  parts.push(`${total - kept - earlier.failedBefore} to run`);
  return `batch ${name}: ${queries(total)}; ${parts.join(', ')}; concurrency ${concurrency}${through}`;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The turn time of completed turns only: a failed turn's time says nothing about how long an answer takes. */
function turnTimeLine(completed: ResultLine[]): string {
  const times = completed.map((l) => l.durationMs).filter((t): t is number => t !== undefined).sort((a, b) => a - b);
  if (!times.length) return 'turn time: no completed turn';
  const seconds = (p: number): string => (percentile(times, p) / 1000).toFixed(2);
  return `turn time (${times.length} completed ${times.length === 1 ? 'turn' : 'turns'}): p50 ${seconds(50)} s, p95 ${seconds(95)} s`;
}

/** How the approvals of the batch's tool calls ended, counted over the results of this run. */
export interface ApprovalCounts {
  approved: number;
  denied: number;
  timed_out: number;
}

export interface BatchSummaryOptions {
  /** The batch ran through Message Batches: its costs are at half the standard price. */
  messageBatches?: boolean;
}

/**
 * The closing summary; when a query failed, its last line says so and how to retry. A batch through
 * Message Batches says its cost is at their price (the turns' costs already are).
 */
export function batchSummary(lines: ResultLine[], out: string, approvals?: ApprovalCounts, opts: BatchSummaryOptions = {}): string {
  const completed = lines.filter((l) => l.status === 'completed');
  const failed = lines.length - completed.length;
  const usage = completed.reduce<TokenUsage>((u, l) => (l.usage ? addUsage(u, l.usage) : u), ZERO_USAGE);
  const cost = completed.reduce((c, l) => c + (l.costUsd ?? 0), 0);
  const summary = [
    `${lines.length} results in ${out}: ${completed.length} completed, ${failed} failed`,
    `tokens: ${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.cacheReadInputTokens} cache read, ${usage.cacheCreationInputTokens} cache write · cost $${cost.toFixed(4)}` +
      (opts.messageBatches ? ' (Message Batches: half the standard price)' : ''),
    turnTimeLine(completed),
  ];
  const decided = approvals ? approvals.approved + approvals.denied + approvals.timed_out : 0;
  if (approvals && decided) {
    summary.push(`approvals: ${decided} call(s) waited: ${approvals.approved} approved, ${approvals.denied} denied, ${approvals.timed_out} timed out`);
  }
  if (failed) {
    summary.push(
      `${failed} of ${queries(lines.length)} failed: see ${out} (status "failed") — run the same command again to retry them`,
    );
  }
  return summary.join('\n');
}
