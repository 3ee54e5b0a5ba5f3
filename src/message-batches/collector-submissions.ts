/**
 * How a worker hands requests to a collector: the requests its submit activities make at about the
 * same time (within `lingerMs`) go to one collector as one signal-with-start carrying them all
 * (signal-groups.ts), and the collector drops repeats, so a failed signal fails (and retries) every
 * activity in it harmlessly. A turn's first request in a batch also tells the batch that the turn
 * waits for Message Batches, grouped the same way: a turn sends no signal of its own for it.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { COLLECTOR_TASK_TIMEOUT, collectorWorkflowId, ZERO_COLLECTOR_TOTALS, type CollectorInput, type CollectorRequest, type MessageBatchSettings } from '../core/message-batches';
import { messageBatchRequestSignal, turnWaitingSignal, type TurnWaiting } from '../core/workflow-handlers';
import { SignalGroups } from './signal-groups';

/** Where a collector's signals go, and how it is started when it is not running. */
export interface CollectorTarget {
  workflowId: string;
  taskQueue: string;
  start: CollectorInput;
  summary: string;
}

/** The collector of a task queue and model; a new one starts with `settings` (the worker's). */
export function collectorTarget(taskQueue: string, model: string, settings: MessageBatchSettings): CollectorTarget {
  return {
    workflowId: collectorWorkflowId(taskQueue, model),
    taskQueue,
    start: { taskQueue, model, settings, batches: [], pending: [], totals: ZERO_COLLECTOR_TOTALS, answered: [] },
    summary: `Message Batches for ${model} on ${taskQueue}`,
  };
}

export interface CollectorSubmissionOptions {
  /**
   * How long a request waits for others to join its signal. A request waits up to the collector's
   * `maxWaitMs` for its Message Batch anyway, so a tenth of that (at most a second) costs it little
   * and turns a round of thousands of requests, made over seconds, into tens of signals.
   * @default 10
   */
  lingerMs?: number;
  /** Requests in one signal. @default 200 */
  maxRequests?: number;
  /** Request bytes in one signal when payloads are not stored (they are then inline). @default 1 MiB */
  maxInlineBytes?: number;
  storesPayloads: boolean;
}

/** The linger for a collector that waits up to `maxWaitMs` to gather a batch: a tenth of it, 10 ms to 1 s. */
export function submissionLingerMs(maxWaitMs: number): number {
  return Math.min(1000, Math.max(10, Math.round(maxWaitMs / 10)));
}

export class CollectorSubmissions {
  private readonly requests: SignalGroups<CollectorTarget, CollectorRequest>;
  private readonly waitingTurns: SignalGroups<string, TurnWaiting>;

  constructor(opts: CollectorSubmissionOptions) {
    const lingerMs = opts.lingerMs ?? 10;
    const maxItems = opts.maxRequests ?? 200;
    this.requests = new SignalGroups({
      lingerMs,
      maxItems,
      maxBytes: opts.storesPayloads ? Infinity : (opts.maxInlineBytes ?? 1024 * 1024),
      workflowIdOf: (target) => target.workflowId,
      deliver: async (client, target, requests) => {
        await client.workflow.signalWithStart('messageBatchCollector', {
          workflowId: target.workflowId,
          taskQueue: target.taskQueue,
          args: [target.start],
          signal: messageBatchRequestSignal,
          signalArgs: requests,
          staticSummary: target.summary,
          workflowTaskTimeout: COLLECTOR_TASK_TIMEOUT,
        });
      },
    });
    this.waitingTurns = new SignalGroups({
      lingerMs,
      maxItems: 1000,
      maxBytes: Infinity,
      workflowIdOf: (parent) => parent,
      deliver: async (client, parent, reports) => {
        try {
          await client.workflow.getHandle(parent).signal(turnWaitingSignal, ...reports);
        } catch (err) {
          // A batch that has ended (or was cancelled) counts no window any more.
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      },
    });
  }

  /**
   * Resolves once the collector has the request (a signal carrying it was accepted) and, with
   * `tellParent`, the turn's batch parent knows the turn waits for Message Batches.
   */
  async send(client: Client, target: CollectorTarget, request: CollectorRequest, { tellParent = false }: { tellParent?: boolean } = {}): Promise<void> {
    const told =
      tellParent && request.parent
        ? this.waitingTurns.send(client, request.parent, { workflowId: request.turn.workflowId, waiting: true, for: 'message-batch', collector: target.workflowId })
        : undefined;
    await Promise.all([this.requests.send(client, target, request, request.entry.bytes), told]);
  }
}
