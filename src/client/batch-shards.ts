/**
 * A batch's workflows ("shards", src/client/batch-client.ts) found by its name alone, without
 * visibility: their ids are deterministic (`batchShardWorkflowId(name, i, n)` for every shard count
 * n up to MAX_BATCH_SHARDS), so the first shard of each possible count is described, then the
 * other shards of the counts whose first exists, and those that exist as batch workflows are kept. Whoever started it (the CLI, `runBatch`/`startBatch`, a
 * schedule), the ids are the same.
 *
 * A batch run again with another concurrency has a second set of shards (its turns are the same:
 * their ids do not depend on the shards, and a finished one is not run again but counted as
 * skipped). The batch is then its latest run: the set with a shard still running (the one started
 * last, if several are), else the set that closed last. The earlier sets are counted, not read.
 */
import type { Client } from '@temporalio/client';
import { BATCH_NAME_PATTERN, batchShardWorkflowId, batchWorkflowId, MAX_BATCH_SHARDS } from '../core/batch';
import { describeId, type IdDescription } from './describe-id';
import { NotFoundError } from './not-found';
import { visibleTo, type Viewer } from './owner';

export interface FindBatchOptions {
  /** Only a batch whose shards this viewer may see (src/client/owner.ts): anyone else's is not found. */
  viewer?: Viewer;
}

/** A batch's shards, as {@link findBatchShards} found them. */
export interface BatchShards {
  name: string;
  /** The shards of the batch's latest run, in order (all of one shard count). */
  shards: IdDescription[];
  /** Sets of shards of earlier runs with another concurrency: not part of the batch's progress. */
  earlierRuns: number;
}

/** The moment that orders a set of shards: a running set comes after any closed one. */
function recency(set: readonly IdDescription[]): [number, number] {
  const running = set.filter((d) => d.running);
  if (running.length) return [1, Math.max(...running.map((d) => d.startTime.getTime()))];
  return [0, Math.max(...set.map((d) => d.closeTime?.getTime() ?? d.startTime.getTime()))];
}

function later(a: [number, number], b: [number, number]): boolean {
  return a[0] !== b[0] ? a[0] > b[0] : a[1] > b[1];
}

/**
 * The shards of batch `name` (its latest run, see the module comment); a {@link NotFoundError}
 * naming the batch when none exists, or none that `opts.viewer` may see (told apart from no batch
 * in nothing).
 */
export async function findBatchShards(client: Client, name: string, opts: FindBatchOptions = {}): Promise<BatchShards> {
  const notFound = new NotFoundError(`no batch ${name}: no workflow ${batchWorkflowId(name)} (nor ${batchWorkflowId(name)}-sI-of-N) exists`);
  if (!BATCH_NAME_PATTERN.test(name)) throw notFound;
  const isShard = (d: IdDescription | undefined): d is IdDescription => !!d && d.kind === 'batch' && (!opts.viewer || visibleTo(opts.viewer, d.searchAttributes));
  const counts = Array.from({ length: MAX_BATCH_SHARDS }, (_, i) => i + 1);
  // A set's shards are started together: its first shard is asked for each count, the rest only of
  // the counts whose first exists.
  const firsts = await Promise.all(counts.map((shards) => describeId(client, batchShardWorkflowId(name, 1, shards))));
  const sets = new Map<number, IdDescription[]>();
  await Promise.all(
    counts.map(async (shards, i) => {
      const first = firsts[i];
      if (!isShard(first)) return;
      const rest = await Promise.all(Array.from({ length: shards - 1 }, (_, j) => describeId(client, batchShardWorkflowId(name, j + 2, shards))));
      sets.set(shards, [first, ...rest.filter(isShard)]);
    }),
  );
  let latest: IdDescription[] | undefined;
  for (const set of sets.values()) if (!latest || later(recency(set), recency(latest))) latest = set;
  if (!latest) throw notFound;
  return { name, shards: latest, earlierRuns: sets.size - 1 };
}
