/**
 * How a worker hands requests to a collector: the requests its submit activities make at about the
 * same time (within `lingerMs`) go to one collector as one signal-with-start carrying them all. One
 * workflow takes only so many signals a second, and a round of a large batch is thousands of
 * requests at once; each activity completes only once the signal carrying its request was accepted,
 * so a failed signal fails (and retries) every activity in it, and the collector drops repeats.
 */
import type { Client } from '@temporalio/client';
import { COLLECTOR_TASK_TIMEOUT, collectorWorkflowId, ZERO_COLLECTOR_TOTALS, type CollectorInput, type CollectorRequest, type MessageBatchSettings } from '../core/message-batches';
import { messageBatchRequestSignal } from '../core/workflow-handlers';

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

interface Waiting {
  request: CollectorRequest;
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface Signal {
  client: Client;
  target: CollectorTarget;
  waiting: Waiting[];
  bytes: number;
  timer: NodeJS.Timeout;
}

export class CollectorSubmissions {
  private readonly open = new Map<string, Signal>();
  private readonly lingerMs: number;
  private readonly maxRequests: number;
  private readonly maxBytes: number;

  constructor(opts: CollectorSubmissionOptions) {
    this.lingerMs = opts.lingerMs ?? 10;
    this.maxRequests = opts.maxRequests ?? 200;
    this.maxBytes = opts.storesPayloads ? Infinity : (opts.maxInlineBytes ?? 1024 * 1024);
  }

  /** Resolves once the collector has the request (a signal carrying it was accepted). */
  send(client: Client, target: CollectorTarget, request: CollectorRequest): Promise<void> {
    const bytes = request.entry.bytes;
    const current = this.open.get(target.workflowId);
    if (current && current.bytes + bytes > this.maxBytes) this.flush(target.workflowId);
    return new Promise<void>((resolve, reject) => {
      let signal = this.open.get(target.workflowId);
      if (!signal) {
        signal = { client, target, waiting: [], bytes: 0, timer: setTimeout(() => this.flush(target.workflowId), this.lingerMs) };
        this.open.set(target.workflowId, signal);
      }
      signal.waiting.push({ request, resolve, reject });
      signal.bytes += bytes;
      if (signal.waiting.length >= this.maxRequests) this.flush(target.workflowId);
    });
  }

  private flush(workflowId: string): void {
    const signal = this.open.get(workflowId);
    if (!signal) return;
    this.open.delete(workflowId);
    clearTimeout(signal.timer);
    const { target, waiting } = signal;
    signal.client.workflow
      .signalWithStart('messageBatchCollector', {
        workflowId: target.workflowId,
        taskQueue: target.taskQueue,
        args: [target.start],
        signal: messageBatchRequestSignal,
        signalArgs: waiting.map((w) => w.request),
        staticSummary: target.summary,
        workflowTaskTimeout: COLLECTOR_TASK_TIMEOUT,
      })
      .then(
        () => waiting.forEach((w) => w.resolve()),
        (err: unknown) => waiting.forEach((w) => w.reject(err)),
      );
  }
}
