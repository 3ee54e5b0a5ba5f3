/**
 * `mcp-turns watch <batch>`: a batch followed from its shards (src/client/batch-status.ts), whoever
 * started it, shown as `batch` shows its own run (BatchProgressView: a bar on a terminal, else a
 * progress line every 5 s and a line whenever the turns waiting for approval change) until every
 * shard has closed; then the batch's counts, from its result lines read back
 * (src/client/batch-results.ts), and the exit code a run of the batch would have for them.
 */
import type { Client } from '@temporalio/client';
import type { BatchProgress } from '../core/batch';
import { getBatchResults, BatchResultsShortfallError } from '../client/batch-results';
import { batchStatusOf, type BatchStatus } from '../client/batch-status';
import type { BatchShards } from '../client/batch-shards';
import { messageBatchWaits } from '../client/message-batch-status';
import type { ResultLine } from '../client/result-line';
import { countsOf } from './batch-counts';
import { batchExitCode } from './batch-exit-code';
import { BatchProgressView, type BatchStanding } from './batch-progress';
import { resultsCountLine } from './batch-results';
import { CliError } from './cli-error';
import { EXIT, type ExitCode } from './exit-codes';

/** How often the shards are read while the batch runs. */
export const BATCH_WATCH_EVERY_MS = 1000;

/** Queries with an outcome: completed, failed, or skipped (finished in an earlier run of the batch). */
function doneOf(p: BatchProgress): number {
  return p.completed + p.failed + p.skipped;
}

/** `batch q ended: 6 results: 5 answered, 1 failed`, naming how its shards ended when not all completed. */
function endedLine(status: BatchStatus, lines: readonly ResultLine[]): string {
  const ended = [...new Set(status.shards.map((s) => s.status))].filter((s) => s !== 'completed');
  return `batch ${status.name} ended${ended.length ? ` (${ended.join(', ')})` : ''}: ${resultsCountLine(lines)}`;
}

/** Follows the batch of `found` to its end on stderr; resolves with its exit code. */
export async function watchBatch(client: Client, found: BatchShards): Promise<ExitCode> {
  let status = await batchStatusOf(client, found);
  // The view needs the batch's size: it waits for a shard's first answer, saying so once.
  for (let told = false; !status.ended && status.shards.every((s) => s.unread); told = true) {
    if (!told) console.error(`batch ${found.name}: none of its workflows answers its progress query yet (does a worker poll its task queue?): waiting`);
    await new Promise((resolve) => setTimeout(resolve, BATCH_WATCH_EVERY_MS));
    status = await batchStatusOf(client, found);
  }
  const started = Date.now();
  const doneAtStart = doneOf(status.progress);
  const standing = (): BatchStanding => {
    const p = status.progress;
    const done = doneOf(p);
    return {
      total: p.total,
      done,
      // Told apart only by the answers themselves, read once the batch has ended.
      partial: 0,
      notApproved: 0,
      failed: p.failed,
      running: p.running.length,
      waitingApproval: p.waitingApproval.length,
      waitingMessageBatch: p.waitingMessageBatch?.length ?? 0,
      ratePerSecond: (done - doneAtStart) / Math.max(0.001, (Date.now() - started) / 1000),
    };
  };
  const shardIds = found.shards.map((d) => d.id);
  const view = new BatchProgressView(
    found.name,
    standing,
    status.progress.collectors ? { messageBatchWaits: () => messageBatchWaits(client, status.progress.collectors ?? [], shardIds) } : {},
  );
  // Ctrl-C: the bar ends (the cursor shown again) before watch exits 130.
  const stopView = (): void => view.stop();
  process.prependOnceListener('SIGINT', stopView);
  try {
    view.update(status.progress);
    while (!status.ended) {
      await new Promise((resolve) => setTimeout(resolve, BATCH_WATCH_EVERY_MS));
      status = await batchStatusOf(client, found);
      view.update(status.progress);
    }
  } finally {
    view.stop();
    process.off('SIGINT', stopView);
  }
  const lines: ResultLine[] = [];
  let shortfall: BatchResultsShortfallError | undefined;
  try {
    for await (const line of (await getBatchResults(client, found.name)).lines) lines.push(line);
  } catch (err) {
    if (!(err instanceof BatchResultsShortfallError)) throw err;
    shortfall = err;
  }
  console.error(endedLine(status, lines));
  if (shortfall) throw new CliError(shortfall.message, EXIT.failed);
  return batchExitCode(countsOf(lines), 0);
}
