/**
 * Running a batch from code: starts (or re-attaches to) the `chatBatch` workflow and reports each
 * query's result as it finishes. Safe to call again after a crash: finished queries are never run
 * twice (their workflow ids are deterministic) and results are fetched from Temporal, not recomputed.
 */
import { WorkflowFailedError, WorkflowIdConflictPolicy, type Client, type WorkflowHandle } from '@temporalio/client';
import type { chatBatch } from '../../workflows/batch';
import { batchChildId, batchWorkflowId, type BatchItem, type BatchProgress } from '../core/batch';
import type { ChatTurnResult } from '../core/turn-result';
import { SA_BATCH } from '../core/search-attributes';
import { DEFAULT_TASK_QUEUE } from '../worker/task-queues';
import { describeFailure } from './describe-failure';

export interface BatchItemOutcome {
  id: string;
  workflowId: string;
  status: 'completed' | 'failed';
  result?: ChatTurnResult;
  error?: string;
  /** Start to close of the turn's workflow. */
  durationMs?: number;
}

export interface RunBatchOptions {
  name: string;
  items: BatchItem[];
  /** @default 10 */
  concurrency?: number;
  taskQueue?: string;
  /** Item ids already reported by an earlier run (e.g. read back from the results file). */
  alreadyReported?: Iterable<string>;
  /** Called once per item as it finishes, in completion order. */
  onResult: (outcome: BatchItemOutcome) => void | Promise<void>;
  /** Called on every poll with the batch's progress. */
  onProgress?: (progress: BatchProgress) => void;
  /** @default 500 */
  pollIntervalMs?: number;
}

/** Starts the batch workflow, or attaches to it if one of that name is already running. */
export async function startBatch(client: Client, opts: Omit<RunBatchOptions, 'onResult'>): Promise<WorkflowHandle<typeof chatBatch>> {
  const taskQueue = opts.taskQueue ?? DEFAULT_TASK_QUEUE;
  return client.workflow.start<typeof chatBatch>('chatBatch', {
    workflowId: batchWorkflowId(opts.name),
    taskQueue,
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    staticSummary: `batch ${opts.name}: ${opts.items.length} queries, concurrency ${opts.concurrency ?? 10}`,
    typedSearchAttributes: [{ key: SA_BATCH, value: opts.name }],
    args: [
      {
        name: opts.name,
        concurrency: opts.concurrency ?? 10,
        taskQueue,
        total: opts.items.length,
        items: opts.items,
        itemsOffset: 0,
        nextIndex: 0,
        completed: 0,
        failed: 0,
        skipped: 0,
      },
    ],
  });
}

async function outcomeOf(client: Client, id: string, workflowId: string): Promise<BatchItemOutcome> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const result = (await handle.result()) as ChatTurnResult;
    const d = await handle.describe();
    const durationMs = d.closeTime && d.startTime ? d.closeTime.getTime() - d.startTime.getTime() : undefined;
    return { id, workflowId, status: 'completed', result, ...(durationMs !== undefined ? { durationMs } : {}) };
  } catch (err) {
    if (err instanceof WorkflowFailedError) return { id, workflowId, status: 'failed', error: describeFailure(err) };
    throw err;
  }
}

/**
 * Runs a batch to the end, reporting every item not already reported. Resolves with the final
 * progress of the batch workflow.
 */
export async function runBatch(client: Client, opts: RunBatchOptions): Promise<BatchProgress> {
  const handle = await startBatch(client, opts);
  const reported = new Set(opts.alreadyReported ?? []);
  const inFlight = new Set<string>();
  const fetches: Array<Promise<void>> = [];
  const interval = opts.pollIntervalMs ?? 500;
  let last: BatchProgress | undefined;
  let done = false;
  const finished = handle.result().then(
    (p) => {
      done = true;
      last = p;
    },
    (err: unknown) => {
      done = true;
      throw err;
    },
  );
  finished.catch(() => undefined);

  const collect = (upTo: number, running: Set<string>): void => {
    for (const item of opts.items.slice(0, upTo)) {
      if (reported.has(item.id) || inFlight.has(item.id) || running.has(item.id)) continue;
      inFlight.add(item.id);
      fetches.push(
        outcomeOf(client, item.id, batchChildId(opts.name, item.id)).then(async (outcome) => {
          reported.add(item.id);
          inFlight.delete(item.id);
          await opts.onResult(outcome);
        }),
      );
    }
  };

  while (!done) {
    try {
      const p = await handle.query<BatchProgress>('batchProgress');
      last = p;
      opts.onProgress?.(p);
      collect(p.nextIndex, new Set(p.running));
    } catch {
      // Between runs (continue-as-new) or before the first task: try again on the next tick.
    }
    await Promise.race([finished.catch(() => undefined), new Promise((r) => setTimeout(r, interval))]);
  }
  await finished;
  collect(opts.items.length, new Set());
  await Promise.all(fetches);
  if (last) opts.onProgress?.(last);
  return last!;
}
