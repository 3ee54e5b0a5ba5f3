/**
 * Running a batch from code: starts (or re-attaches to) the `chatBatch` workflow and reports each
 * query's result as it finishes. Safe to call again after a crash: finished queries are never run
 * twice (their workflow ids are deterministic) and results are fetched from Temporal, not recomputed.
 */
import { ownerSearchAttributes, ownerStartOptions, type Owner } from './owner';
import { WorkflowFailedError, WorkflowIdConflictPolicy, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { chatBatch } from '../../workflows/batch';
import { BATCH_TASK_TIMEOUT, batchChildId, sumBatchProgress, type BatchInput, type BatchItem, type BatchProgress } from '../core/batch';
import { planBatchShards } from '../core/batch-shards';
import { batchProgressQuery } from '../core/workflow-handlers';
import type { ChatTurnResult } from '../core/turn-result';
import { withOutputSpec } from './output-schema';
import type { ChatTurnRequest } from './chat-turn-client';
import { SA_BATCH } from '../core/search-attributes';
import { taskQueueOf } from './client-task-queue';
import { describeFailure } from './describe-failure';

/** The progress of a batch's shards as one (src/core/batch.ts). */
export { sumBatchProgress } from '../core/batch';

/** The workflow ids of a batch's shards (src/core/batch-shards.ts). */
export { batchShardWorkflowIds } from '../core/batch-shards';

export interface BatchItemOutcome {
  id: string;
  workflowId: string;
  status: 'completed' | 'failed';
  result?: ChatTurnResult;
  error?: string;
  /** Start to close of the turn's workflow. */
  durationMs?: number;
}

/** A batch's item as the client API takes it: its input's `output` schema may be a zod schema. */
export interface BatchItemRequest {
  id: string;
  input: ChatTurnRequest;
}

export interface RunBatchOptions {
  name: string;
  items: BatchItemRequest[];
  /** @default 10 ({@link DEFAULT_BATCH_CONCURRENCY}) */
  concurrency?: number;
  taskQueue?: string;
  /** Item ids already reported by an earlier run (e.g. read back from the results file). */
  alreadyReported?: Iterable<string>;
  /** Called once per item as it finishes, in completion order. */
  onResult: (outcome: BatchItemOutcome) => void | Promise<void>;
  /**
   * Called after every poll (each `pollIntervalMs`) with the batch's progress, summed over its
   * shards, once at least one shard has answered: not while none can be asked (no worker yet).
   */
  onProgress?: (progress: BatchProgress) => void;
  /** @default 500 */
  pollIntervalMs?: number;
  /**
   * Every Claude call of the batch's turns goes through Anthropic's Message Batches API: half the
   * price, answered within 24 h, the turns waiting durably meanwhile. `deadlineMs`: a request not
   * answered in this time is sent once more, then fails its turn (default 24 h).
   */
  messageBatches?: boolean | { deadlineMs?: number };
  /**
   * Whose batch it is (src/client/owner.ts): its workflows and every turn carry the owner (only
   * they and admins see them through `serve`) and the owner's fairness key.
   */
  owner?: Owner;
}

/** The batch input's `messageBatches` for the option; undefined when the batch calls Claude directly. */
export function messageBatchesInput(option: RunBatchOptions['messageBatches']): BatchInput['messageBatches'] {
  if (!option) return undefined;
  return option === true || option.deadlineMs === undefined ? {} : { deadlineMs: option.deadlineMs };
}

/** Children running at once when a batch names no `concurrency`. */
export const DEFAULT_BATCH_CONCURRENCY = 10;

export interface BatchShard {
  handle: WorkflowHandle<typeof chatBatch>;
  items: BatchItem[];
}

/** Starts the batch's workflows, or attaches to those of that name that are still running. */
export async function startBatch(client: Client, options: Omit<RunBatchOptions, 'onResult'>): Promise<BatchShard[]> {
  const taskQueue = taskQueueOf(client, options.taskQueue);
  const messageBatches = messageBatchesInput(options.messageBatches);
  const shards = planBatchShards({
    name: options.name,
    items: wireItems(options.items),
    concurrency: options.concurrency ?? DEFAULT_BATCH_CONCURRENCY,
    taskQueue,
    ...(messageBatches ? { messageBatches } : {}),
  });
  return Promise.all(
    shards.map(async (shard) => {
      const handle = await client.workflow.start<typeof chatBatch>('chatBatch', {
        workflowId: shard.workflowId,
        taskQueue,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowTaskTimeout: BATCH_TASK_TIMEOUT,
        staticSummary: shard.staticSummary,
        typedSearchAttributes: [{ key: SA_BATCH, value: options.name }, ...ownerSearchAttributes(options.owner)],
        ...ownerStartOptions(options.owner),
        args: [shard.input],
      });
      return { handle, items: shard.items };
    }),
  );
}

/**
 * The outcome of item `id`'s turn, waiting for it to end; undefined when no turn has that id (the
 * batch workflow never started the item, or retention has removed it). `runId`: that run of the
 * turn (a failed query run again has several), else its latest.
 */
export async function outcomeOf(client: Client, id: string, workflowId: string, runId?: string): Promise<BatchItemOutcome | undefined> {
  const handle = client.workflow.getHandle(workflowId, runId);
  try {
    const result = (await handle.result()) as ChatTurnResult;
    const d = await handle.describe();
    const durationMs = d.closeTime && d.startTime ? d.closeTime.getTime() - d.startTime.getTime() : undefined;
    return { id, workflowId, status: 'completed', result, ...(durationMs !== undefined ? { durationMs } : {}) };
  } catch (err) {
    if (err instanceof WorkflowFailedError) return { id, workflowId, status: 'failed', error: describeFailure(err) };
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}


/**
 * Runs a batch to the end, reporting every item not already reported. Resolves with the final
 * progress of the batch (summed over its shards).
 */
export async function runBatch(client: Client, options: RunBatchOptions): Promise<BatchProgress> {
  const opts = { ...options, items: wireItems(options.items) };
  const reported = new Set(opts.alreadyReported ?? []);
  const unreported = (): BatchItem[] => opts.items.filter((item) => !reported.has(item.id));
  let progress = await runPass(client, opts, reported);
  if (unreported().length) {
    // Items no turn exists for: the pass attached to batch workflows still running from another list
    // of queries (the file was edited after the CLI was stopped). Those have closed now, so a second
    // pass starts new runs with this list; ids that already finished are skipped, never run twice.
    progress = await runPass(client, opts, reported);
  }
  for (const item of unreported()) {
    const workflowId = batchChildId(opts.name, item.id);
    reported.add(item.id);
    await opts.onResult({ id: item.id, workflowId, status: 'failed', error: `batch ${opts.name} did not start ${workflowId} (see the batch workflow's log)` });
  }
  return progress;
}

/** Answers fetched from Temporal at once: a Message Batch ends thousands of turns together. */
export const FETCHES_AT_ONCE = 32;

/**
 * One pass: starts or attaches to the batch's workflows and reports each item once its turn has
 * ended, as its shard's progress says (each poll) or, once a shard has ended, at once for all of its
 * items: what one shard is doing never holds back another's answers.
 */
async function runPass(client: Client, opts: RunBatchOptions, reported: Set<string>): Promise<BatchProgress> {
  const shards = await startBatch(client, opts);
  const interval = opts.pollIntervalMs ?? 500;
  const progress: Array<BatchProgress | undefined> = shards.map(() => undefined);
  const done = shards.map(() => false);
  /** Items whose answer is queued or being fetched. */
  const inFlight = new Set<string>();
  const queue: BatchItem[] = [];
  let fetching = 0;
  let fetchFailed: { err: unknown } | undefined;
  let drained: (() => void) | undefined;

  const fetchNext = (): void => {
    while (fetching < FETCHES_AT_ONCE && queue.length && !fetchFailed) {
      const item = queue.shift()!;
      fetching++;
      outcomeOf(client, item.id, batchChildId(opts.name, item.id))
        .then(async (outcome) => {
          inFlight.delete(item.id);
          if (!outcome) return; // not started: left for the next pass
          reported.add(item.id);
          await opts.onResult(outcome);
        })
        // Kept, so a failed fetch ends the batch with its error rather than crashing the process
        // as an unhandled rejection while the poll loop still runs.
        .catch((err: unknown) => (fetchFailed ??= { err }))
        .finally(() => {
          fetching--;
          fetchNext();
          if (!fetching && (!queue.length || fetchFailed)) drained?.();
        });
    }
  };
  /** Queues the answers of `items` up to `upTo` that are neither reported, queued nor `running`. */
  const collect = (items: BatchItem[], upTo: number, running: ReadonlySet<string>): void => {
    for (let i = 0; i < upTo && i < items.length; i++) {
      const item = items[i]!;
      if (reported.has(item.id) || inFlight.has(item.id) || running.has(item.id)) continue;
      inFlight.add(item.id);
      queue.push(item);
    }
    fetchNext();
  };
  const allFetched = (): Promise<void> =>
    !fetching && (!queue.length || fetchFailed) ? Promise.resolve() : new Promise<void>((resolve) => (drained = resolve));

  const finished = Promise.all(
    shards.map((shard, i) =>
      shard.handle.result().then((p) => {
        done[i] = true;
        progress[i] = p;
        collect(shard.items, shard.items.length, new Set());
      }),
    ),
  );
  let failed: unknown;
  finished.catch((err: unknown) => (failed = err));
  const report = (): void => {
    const known = progress.filter((p): p is BatchProgress => p !== undefined);
    if (known.length) opts.onProgress?.(sumBatchProgress(opts.name, known));
  };

  while (!done.every(Boolean) && failed === undefined && !fetchFailed) {
    await Promise.all(
      shards.map(async (shard, i) => {
        if (done[i]) return;
        try {
          const p = await shard.handle.query(batchProgressQuery);
          if (done[i]) return; // ended while asked: its final progress stands
          progress[i] = p;
          collect(shard.items, p.nextIndex, new Set(p.running));
        } catch {
          // Between runs (continue-as-new) or before the first task: try again on the next tick.
        }
      }),
    );
    report();
    await Promise.race([finished.catch(() => undefined), new Promise((r) => setTimeout(r, interval))]);
  }
  if (fetchFailed) throw fetchFailed.err;
  await finished;
  await allFetched();
  if (fetchFailed) throw (fetchFailed as { err: unknown }).err;
  report();
  return sumBatchProgress(opts.name, progress.filter((p): p is BatchProgress => p !== undefined));
}

/** The items with their `output` as the wire takes it (JSON Schema). */
export function wireItems(items: readonly BatchItemRequest[]): BatchItem[] {
  return items.map((item) => ({ id: item.id, input: withOutputSpec(item.input) }));
}
