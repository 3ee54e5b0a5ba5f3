/**
 * A batch's answers read back from Temporal, by anyone, while it runs or after it has ended: one
 * result line (src/client/result-line.ts, the very line `mcp-turns batch` writes) per query whose
 * turn has ended, in the order the turns closed.
 *
 * Which turns: visibility lists the batch's turns (`McpTurnsBatch = <name>`, type `chatTurn`); a
 * turn run more than once (a failed query run again) counts by its latest run, and one whose latest
 * run still runs is left out until it ends. Each outcome is then fetched from Temporal (a few at
 * once, in order). Visibility trails the workflows by a moment: once the batch has ended, it is
 * asked again until it lists an ended turn for every query the shards counted (completed, failed,
 * or skipped: finished by an earlier run), for {@link DEFAULT_VISIBILITY_WAIT_MS} at most; past
 * that, the lines it lists are given, then a {@link BatchResultsShortfallError}. A running batch
 * gives the turns ended so far, as listed now.
 */
import type { Client } from '@temporalio/client';
import { FETCHES_AT_ONCE, outcomeOf } from './batch-client';
import { findBatchShards, type FindBatchOptions } from './batch-shards';
import { batchStatusOf, type BatchStatus } from './batch-status';
import { ownerClause, type Viewer } from './owner';
import { resultLine, type ResultLine } from './result-line';
import { quoted } from './visibility-query';
import { WORKFLOW_TYPE_OF_KIND } from './workflow-kind';
import { SA_BATCH } from '../core/search-attributes';

/** How long an ended batch's turns are waited for in visibility. */
export const DEFAULT_VISIBILITY_WAIT_MS = 30_000;
/** Between two asks of visibility while it lists fewer ended turns than the shards counted. */
const VISIBILITY_ASK_EVERY_MS = 1000;

export interface BatchResultsOptions extends FindBatchOptions {
  /** How long visibility is waited for to list every turn an ended batch finished. @default {@link DEFAULT_VISIBILITY_WAIT_MS} */
  visibilityWaitMs?: number;
}

export interface BatchResults extends BatchStatus {
  /**
   * One line per ended turn, fetched as it is read; read it once. It throws
   * {@link BatchResultsShortfallError} after its last line when visibility listed fewer ended turns
   * than the ended batch's shards counted.
   */
  lines: AsyncIterable<ResultLine>;
}

/** Visibility listed fewer ended turns than the ended batch's shards counted, after waiting for it. */
export class BatchResultsShortfallError extends Error {
  override name = 'BatchResultsShortfallError';
  constructor(
    readonly batch: string,
    /** The lines given: the ended turns visibility listed. */
    readonly listed: number,
    /** The queries the shards counted as finished (completed, failed or skipped). */
    readonly expected: number,
    waitedMs: number,
  ) {
    super(
      `batch ${batch}: visibility lists ${listed} of the ${expected} turns its workflows counted as finished after ${Math.round(waitedMs / 1000)} s ` +
        `(it trails the workflows): ${expected - listed} ${expected - listed === 1 ? 'line is' : 'lines are'} missing; ask again in a moment`,
    );
  }
}

/** An ended turn of the batch: its latest run. */
interface EndedTurn {
  workflowId: string;
  runId: string;
  closeTime: number;
}

/** The visibility query of batch `name`'s turns (only `viewer`'s, when given). */
function batchTurnsQuery(name: string, viewer: Viewer | undefined): string {
  const owner = ownerClause(viewer);
  return [`WorkflowType = ${quoted(WORKFLOW_TYPE_OF_KIND.turn)}`, `${SA_BATCH.name} = ${quoted(name)}`, ...(owner ? [owner] : [])].join(' AND ');
}

/** The batch's turns whose latest run has ended, as visibility lists them now, by close time. */
async function endedTurns(client: Client, name: string, viewer: Viewer | undefined): Promise<EndedTurn[]> {
  const latest = new Map<string, { runId: string; start: number; closeTime?: number }>();
  for await (const e of client.workflow.list({ query: batchTurnsQuery(name, viewer), pageSize: 1000 })) {
    const known = latest.get(e.workflowId);
    if (known && known.start >= e.startTime.getTime()) continue;
    latest.set(e.workflowId, { runId: e.runId, start: e.startTime.getTime(), ...(e.closeTime ? { closeTime: e.closeTime.getTime() } : {}) });
  }
  const ended: EndedTurn[] = [];
  for (const [workflowId, run] of latest) if (run.closeTime !== undefined) ended.push({ workflowId, runId: run.runId, closeTime: run.closeTime });
  return ended.sort((a, b) => a.closeTime - b.closeTime || a.workflowId.localeCompare(b.workflowId));
}

/** `fetch` of each of `items`, at most `atOnce` at a time, given in the order of `items`. */
async function* inOrder<T, R>(items: readonly T[], fetch: (item: T) => Promise<R>, atOnce: number): AsyncGenerator<R> {
  const window: Array<Promise<R>> = [];
  let next = 0;
  const more = (): void => {
    while (next < items.length && window.length < atOnce) {
      const fetched = fetch(items[next++]!);
      // Awaited in turn below; a consumer that stops early leaves the rest unread, not unhandled.
      fetched.catch(() => undefined);
      window.push(fetched);
    }
  };
  more();
  while (window.length) {
    const result = await window.shift()!;
    more();
    yield result;
  }
}

async function* resultLines(client: Client, status: BatchStatus, opts: BatchResultsOptions): AsyncGenerator<ResultLine> {
  const waitMs = opts.visibilityWaitMs ?? DEFAULT_VISIBILITY_WAIT_MS;
  const p = status.progress;
  const expected = status.ended ? p.completed + p.failed + p.skipped : 0;
  const deadline = Date.now() + waitMs;
  let turns = await endedTurns(client, status.name, opts.viewer);
  while (turns.length < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, VISIBILITY_ASK_EVERY_MS));
    turns = await endedTurns(client, status.name, opts.viewer);
  }
  const prefix = `${status.name}-`;
  // Ended: each turn's latest run, whatever run visibility listed. Running: the run listed, which
  // has ended (its latest may be running again, and would be waited for).
  const fetch = (t: EndedTurn) =>
    outcomeOf(client, t.workflowId.startsWith(prefix) ? t.workflowId.slice(prefix.length) : t.workflowId, t.workflowId, status.ended ? undefined : t.runId);
  for await (const outcome of inOrder(turns, fetch, FETCHES_AT_ONCE)) {
    if (outcome) yield resultLine(outcome); // none: removed by retention since it was listed
  }
  if (turns.length < expected) throw new BatchResultsShortfallError(status.name, turns.length, expected, waitMs);
}

/**
 * Batch `name`'s status and its result lines (see the module comment). Throws a NotFoundError
 * naming the batch, before any line, when it has no shard (`opts.viewer` may see).
 */
export async function getBatchResults(client: Client, name: string, opts: BatchResultsOptions = {}): Promise<BatchResults> {
  const status = await batchStatusOf(client, await findBatchShards(client, name, opts));
  return { ...status, lines: resultLines(client, status, opts) };
}
