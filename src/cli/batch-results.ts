/**
 * The batch results file (one JSON line per query, src/client/result-line.ts): where it is by
 * default, what an earlier run left in it, the line the CLI starts with, and the closing summary.
 */
import path from 'node:path';
import type { ResultLine } from '../client/result-line';
import { batchChildId } from '../core/batch';
import { countsOf, partialPart, type BatchCounts } from './batch-counts';
import { DEFAULT_MESSAGE_BATCH_DEADLINE_MS } from '../core/message-batches';
import { addUsage, cacheWriteText, ZERO_USAGE, type TokenUsage } from '../core/usage';
import { formatDuration } from './duration';

/** The batch's name without `--name`: the file's name without its extension, in the characters a workflow id takes. */
export function defaultBatchName(file: string): string {
  return path.basename(file).replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9._-]/g, '-');
}

/**
 * The results file without `--out`: `q.results.jsonl` for q.jsonl under its default name,
 * `q.NAME.results.jsonl` under any other, so each batch name has a results file of its own.
 */
export function defaultResultsFile(file: string, name: string): string {
  const base = file.replace(/\.jsonl?$/, '');
  return name === defaultBatchName(file) ? `${base}.results.jsonl` : `${base}.${name}.results.jsonl`;
}

/**
 * The batch another batch's line in the results file belongs to, or undefined when every line is
 * batch `name`'s: a line's turn is `<batch name>-<id>`.
 */
export function otherBatchIn(lines: readonly ResultLine[], name: string): string | undefined {
  const other = lines.find((l) => l.workflowId !== batchChildId(name, l.id));
  if (!other) return undefined;
  const suffix = `-${other.id}`;
  return other.workflowId.endsWith(suffix) ? other.workflowId.slice(0, -suffix.length) : other.workflowId;
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
  /** Lines of the input file left out (not JSON, no question, a duplicate id), reported by number when it began. */
  skipped?: { lines: number; file: string };
}

function results(n: number): string {
  return `${n} ${n === 1 ? 'result' : 'results'}`;
}

/** `7 answered, 1 partial (refusal), 1 not approved, 0 failed`: partial and not-approved answers are named when there are any. */
export function outcomesPart(counts: BatchCounts): string {
  const parts = [`${counts.answered} answered`];
  if (counts.partial) parts.push(partialPart(counts));
  if (counts.notApproved) parts.push(`${counts.notApproved} not approved`);
  parts.push(`${counts.failed} failed`);
  return parts.join(', ');
}

/** `9 results in o.jsonl: 7 answered, 1 partial (refusal), 1 failed`: the lines counted, and `where` they are (`in o.jsonl`, `on stdout`). */
export function resultsCountLine(lines: readonly ResultLine[], where?: string): string {
  return `${results(lines.length)}${where ? ` ${where}` : ''}: ${outcomesPart(countsOf(lines))}`;
}

/** `9 results in o.jsonl: …; 4 lines of q.jsonl skipped`: skipped lines are named when there are any. */
function countsLine(lines: ResultLine[], out: string, skipped: BatchSummaryOptions['skipped']): string {
  const skippedPart = skipped?.lines ? `; ${skipped.lines} ${skipped.lines === 1 ? 'line' : 'lines'} of ${skipped.file} skipped` : '';
  return `${resultsCountLine(lines, `in ${out}`)}${skippedPart}`;
}

/**
 * The closing summary. Its last lines say what to do about skipped lines, then about failed queries
 * (the worse, last). A batch through Message Batches says its cost is at their price (the turns'
 * costs already are).
 */
export function batchSummary(lines: ResultLine[], out: string, approvals?: ApprovalCounts, opts: BatchSummaryOptions = {}): string {
  const completed = lines.filter((l) => l.status === 'completed');
  const failed = lines.length - completed.length;
  const usage = completed.reduce<TokenUsage>((u, l) => (l.usage ? addUsage(u, l.usage) : u), ZERO_USAGE);
  const cost = completed.reduce((c, l) => c + (l.costUsd ?? 0), 0);
  const summary = [
    countsLine(lines, out, opts.skipped),
    `tokens: ${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.cacheReadInputTokens} cache read, ${cacheWriteText(usage)} · cost $${cost.toFixed(4)}` +
      (opts.messageBatches ? ' (Message Batches: half the standard price)' : ''),
    turnTimeLine(completed),
  ];
  const decided = approvals ? approvals.approved + approvals.denied + approvals.timed_out : 0;
  if (approvals && decided) {
    summary.push(`approvals: ${decided} call(s) waited: ${approvals.approved} approved, ${approvals.denied} denied, ${approvals.timed_out} timed out`);
  }
  const skipped = opts.skipped?.lines ?? 0;
  if (skipped) {
    summary.push(
      `${skipped} ${skipped === 1 ? 'line' : 'lines'} of ${opts.skipped!.file} skipped (reported above by line number): fix them and run the same command again to run them`,
    );
  }
  if (failed) {
    summary.push(
      `${failed} of ${queries(lines.length)} failed: see ${out} (status "failed") — run the same command again to retry them`,
    );
  }
  return summary.join('\n');
}
