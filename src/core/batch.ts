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

/** A batch's name: 1 to 100 of `A-Z a-z 0-9 . _ -` (its workflows' and its turns' ids begin with it). */
export const BATCH_NAME_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

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

/** The progress of a batch's shards as one; the Message Batch fields only when a shard has them. */
export function sumBatchProgress(name: string, parts: BatchProgress[]): BatchProgress {
  const waitingMessageBatch = parts.some((p) => p.waitingMessageBatch) ? parts.flatMap((p) => p.waitingMessageBatch ?? []) : undefined;
  const collectors = parts.some((p) => p.collectors) ? [...new Set(parts.flatMap((p) => p.collectors ?? []))] : undefined;
  return {
    name,
    total: parts.reduce((n, p) => n + p.total, 0),
    nextIndex: parts.reduce((n, p) => n + p.nextIndex, 0),
    completed: parts.reduce((n, p) => n + p.completed, 0),
    failed: parts.reduce((n, p) => n + p.failed, 0),
    skipped: parts.reduce((n, p) => n + p.skipped, 0),
    running: parts.flatMap((p) => p.running),
    waitingApproval: parts.flatMap((p) => p.waitingApproval ?? []),
    ...(waitingMessageBatch ? { waitingMessageBatch } : {}),
    ...(collectors ? { collectors } : {}),
  };
}
