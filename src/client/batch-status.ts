/**
 * Where a batch stands, read from its shards (src/client/batch-shards.ts) by anyone, while it runs
 * or after: each running shard's progress query, each closed shard's result (its final progress),
 * summed into one progress as `runBatch` sums them. The batch has ended when every shard has closed.
 */
import type { Client } from '@temporalio/client';
import type { BatchProgress } from '../core/batch';
import { batchProgressQuery } from '../core/workflow-handlers';
import { sumBatchProgress } from './batch-client';
import { findBatchShards, type BatchShards, type FindBatchOptions } from './batch-shards';
import { describeId } from './describe-id';
import type { RunStatus } from './run-status';

/** A shard's progress query (it needs a worker) that has not answered after this long is left out. */
const QUERY_TIMEOUT_MS = 5000;

/** One shard of a batch, as {@link batchStatusOf} read it. */
export interface BatchShardStatus {
  /** The shard's workflow id. */
  id: string;
  status: RunStatus | string;
  /**
   * Its progress could not be read (no worker answered its query in time, it is between two runs,
   * or it ended without a result): it is left out of the batch's progress until it can be.
   */
  unread?: true;
}

export interface BatchStatus {
  name: string;
  /** Every shard has closed: no query of the batch will be started any more. */
  ended: boolean;
  /** The shards' progress as one (of those read, see {@link BatchShardStatus.unread}). */
  progress: BatchProgress;
  shards: BatchShardStatus[];
}

/** A shard's progress: its result once it has one, else its answer to the progress query. */
async function shardProgress(client: Client, id: string): Promise<{ shard: BatchShardStatus; running: boolean; progress?: BatchProgress }> {
  const described = await describeId(client, id);
  if (!described) return { shard: { id, status: 'not_found', unread: true }, running: false };
  const shard: BatchShardStatus = { id, status: described.status };
  const handle = client.workflow.getHandle(id);
  const query = (): Promise<BatchProgress> => client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => handle.query(batchProgressQuery));
  try {
    // A shard that ended otherwise (cancelled, terminated) still answers the query, when a worker runs.
    const progress = described.running || described.status !== 'completed' ? await query() : ((await handle.result()) as BatchProgress);
    return { shard, running: described.running, progress };
  } catch {
    return { shard: { ...shard, unread: true }, running: described.running };
  }
}

/** Where the batch of `found` stands now (its shards are read afresh on every call). */
export async function batchStatusOf(client: Client, found: BatchShards): Promise<BatchStatus> {
  const read = await Promise.all(found.shards.map((d) => shardProgress(client, d.id)));
  return {
    name: found.name,
    ended: read.every((r) => !r.running),
    progress: sumBatchProgress(found.name, read.flatMap((r) => (r.progress ? [r.progress] : []))),
    shards: read.map((r) => r.shard),
  };
}

/** Where batch `name` stands; a NotFoundError naming it when it has no shard (`opts.viewer` may see). */
export async function getBatchStatus(client: Client, name: string, opts: FindBatchOptions = {}): Promise<BatchStatus> {
  return batchStatusOf(client, await findBatchShards(client, name, opts));
}
