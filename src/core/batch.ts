/**
 * Shapes and ids of a batch of chat turns, shared by the batch workflow, the client and the CLI.
 * zod-free, like everything the workflow bundle imports; input lines are parsed in
 * src/schemas/batch-lines.ts.
 */
import type { ChatTurnInput } from '../schemas/turn-input';

export interface BatchItem {
  /** From the input line's `id`, else its 1-based line number. */
  id: string;
  input: ChatTurnInput;
}

export interface BatchInput {
  name: string;
  /** Children running at once. */
  concurrency: number;
  /** Task queue of the children; default the batch's own. */
  taskQueue?: string;
  total: number;
  /** Items from `itemsOffset` on (earlier ones were handled by previous runs). */
  items: BatchItem[];
  itemsOffset: number;
  nextIndex: number;
  completed: number;
  failed: number;
  skipped: number;
  /** Every Claude call of the batch's turns goes through Message Batches (each turn's `messageBatches`). */
  messageBatches?: { deadlineMs?: number };
}

export interface BatchProgress {
  name: string;
  total: number;
  /** Items before this index have been started (or skipped) by this batch. */
  nextIndex: number;
  completed: number;
  failed: number;
  /** Already finished (or running) from an earlier run of the same batch: not run again. */
  skipped: number;
  /** Item ids running now. */
  running: string[];
  /**
   * Item ids of running turns that wait for a person's approval: they do not count against the
   * batch's concurrency, so waiting turns never block the others.
   */
  waitingApproval: string[];
  /**
   * Item ids of running turns whose Claude calls go through Message Batches, from their first wait
   * on: they hold no place in the window, so a Message Batch can hold more than the window's requests.
   */
  waitingMessageBatch?: string[];
  /** The Message Batch collectors (workflow ids) the batch's turns have waited for. */
  collectors?: string[];
}

export function batchChildId(batchName: string, itemId: string): string {
  return `${batchName}-${itemId}`;
}

export function batchWorkflowId(batchName: string): string {
  return `batch-${batchName}`;
}

/**
 * A batch workflow's task timeout: thousands of children end in bursts (a Message Batch ends), and a
 * task of a busy worker that replays a long run must finish, not time out and start over.
 */
export const BATCH_TASK_TIMEOUT = '1 minute';

/** The most batch workflows ("shards") one batch is split into. */
export const MAX_BATCH_SHARDS = 8;

/** The workflow id of shard `shard` (from 1) of `shards`; a batch of one shard has the batch's own id. */
export function batchShardWorkflowId(batchName: string, shard: number, shards: number): string {
  return shards === 1 ? batchWorkflowId(batchName) : `${batchWorkflowId(batchName)}-s${shard}-of-${shards}`;
}
