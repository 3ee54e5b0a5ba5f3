/**
 * How a batch is split over its batch workflows ("shards"): how many, which items each runs, their
 * workflow ids, inputs and summaries. One rule for every starter of a batch: the client
 * (`startBatch`) and the scheduled batch workflow (`workflows/scheduled-batch.ts`), so a batch has the
 * same shards whoever starts it. Sandbox-safe.
 */
import { batchShardWorkflowId, MAX_BATCH_SHARDS, type BatchInput, type BatchItem } from './batch';

/** The most children one shard runs at once: one parent needs a few workflow tasks per child in sequence. */
const SHARD_WINDOW = 25;

/**
 * Large windows are split over several shards of at most 25 children each, since a single parent
 * caps the throughput. The shard count depends only on the window and the item count, and child ids
 * do not depend on it, so a rerun, even with another window, never runs a finished query twice.
 */
export function shardCount(concurrency: number, items: number): number {
  return Math.max(1, Math.min(Math.ceil(concurrency / SHARD_WINDOW), MAX_BATCH_SHARDS, items));
}

/** The workflow ids of a batch's shards: the parents of its turns. */
export function batchShardWorkflowIds(name: string, concurrency: number, items: number): string[] {
  const shards = shardCount(concurrency, items);
  return Array.from({ length: shards }, (_, i) => batchShardWorkflowId(name, i + 1, shards));
}

/** What a batch is made of, as its starter has it. */
export interface BatchPlanOptions {
  name: string;
  /** The items with their inputs as the wire takes them (defaults applied, `output` as JSON Schema). */
  items: readonly BatchItem[];
  /** Children running at once, over all shards. */
  concurrency: number;
  /** The task queue of the shards and their turns. */
  taskQueue: string;
  /** Every Claude call of the batch's turns goes through Message Batches. */
  messageBatches?: BatchInput['messageBatches'];
}

/** One shard of a batch: the `chatBatch` workflow to start. */
export interface BatchShardPlan {
  workflowId: string;
  /** Its items, a consecutive slice of the batch's. */
  items: BatchItem[];
  /** Its `chatBatch` input. */
  input: BatchInput;
  /** Its one-line summary in the Web UI. */
  staticSummary: string;
}

/** The shards of a batch: the items split in order into equal slices, the window shared among them. */
export function planBatchShards(options: BatchPlanOptions): BatchShardPlan[] {
  const { name, items: all, taskQueue, messageBatches } = options;
  const shards = shardCount(options.concurrency, all.length);
  const size = Math.ceil(all.length / shards);
  const concurrency = Math.ceil(options.concurrency / shards);
  return Array.from({ length: shards }, (_, i) => {
    const items = all.slice(i * size, (i + 1) * size);
    return {
      workflowId: batchShardWorkflowId(name, i + 1, shards),
      items,
      input: {
        name,
        concurrency,
        taskQueue,
        total: items.length,
        items,
        itemsOffset: 0,
        nextIndex: 0,
        completed: 0,
        failed: 0,
        skipped: 0,
        ...(messageBatches ? { messageBatches } : {}),
      },
      staticSummary:
        `batch ${name}${shards > 1 ? ` (shard ${i + 1} of ${shards})` : ''}: ${items.length} queries, concurrency ${concurrency}` +
        (messageBatches ? ', through Message Batches' : ''),
    };
  });
}
