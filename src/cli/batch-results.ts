/**
 * The batch results file (one JSON line per query): where it is by default, what an earlier run
 * left in it, the line the CLI starts with, and the closing summary.
 */
import path from 'node:path';
import type { BatchItemOutcome } from '../client/batch-client';
import { batchChildId } from '../core/batch';
import type { TurnStopReason } from '../core/turn-result';
import { countsOf, partialPart } from './batch-counts';
import { EXIT, exitCodeOf, type ExitCode } from './exit-codes';
import { DEFAULT_MESSAGE_BATCH_DEADLINE_MS } from '../core/message-batches';
import { addUsage, cacheWriteText, ZERO_USAGE, type TokenUsage } from '../core/usage';
import { formatDuration } from './duration';

export interface ResultLine {
  id: string;
  /** `completed`: the turn ended (in full or in part, see `exitCode`); kept by a rerun. `failed`: run again by a rerun. */
  status: 'completed' | 'failed';
  /** What `run` exits with for the same result: 0 answered, 3 partial, 4 not approved, 1 failed. */
  exitCode?: ExitCode;
  answer?: string;
  /** The turn's output: its answer as JSON matching the turn's output schema. */
  output?: unknown;
  /** Why the answer does not match the output schema (`stopReason: "invalid_output"`). */
  outputProblems?: string[];
  stopReason?: TurnStopReason;
  /** The stop sequence the turn stopped at (`stopReason: "stop_sequence"`): its answer may be cut there. */
  stopSequence?: string;
  usage?: TokenUsage;
  costUsd?: number;
  toolCalls?: number;
  durationMs?: number;
  error?: string;
  workflowId: string;
}

export function resultLine(o: BatchItemOutcome): ResultLine {
  const exitCode = o.status === 'completed' && o.result ? exitCodeOf(o.result) : EXIT.failed;
  const line: ResultLine = { id: o.id, status: o.status, exitCode, workflowId: o.workflowId };
  if (o.result) {
    line.answer = o.result.response.conversation;
    if (o.result.output !== undefined) line.output = o.result.output;
    if (o.result.outputReport?.problems?.length) line.outputProblems = o.result.outputReport.problems;
    line.stopReason = o.result.stopReason;
    if (o.result.stopSequence !== undefined) line.stopSequence = o.result.stopSequence;
    line.usage = o.result.usage;
    line.costUsd = o.result.costUsd;
    line.toolCalls = o.result.toolCalls.length;
  }
  if (o.durationMs !== undefined) line.durationMs = o.durationMs;
  if (o.error) line.error = o.error;
  return line;
}

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

/**
 * `9 results in o.jsonl: 7 answered, 1 partial (refusal), 1 not approved, 0 failed; 4 lines of q.jsonl skipped`:
 * partial and not-approved answers and skipped lines are named when there are any.
 */
function countsLine(lines: ResultLine[], out: string, skipped: BatchSummaryOptions['skipped']): string {
  const counts = countsOf(lines);
  const parts = [`${counts.answered} answered`];
  if (counts.partial) parts.push(partialPart(counts));
  if (counts.notApproved) parts.push(`${counts.notApproved} not approved`);
  parts.push(`${counts.failed} failed`);
  const skippedPart = skipped?.lines ? `; ${skipped.lines} ${skipped.lines === 1 ? 'line' : 'lines'} of ${skipped.file} skipped` : '';
  return `${results(lines.length)} in ${out}: ${parts.join(', ')}${skippedPart}`;
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
