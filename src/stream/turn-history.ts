/**
 * Reads a turn's history as it grows, as the facts its stream is made of (./turn-facts.ts): a
 * long poll on the history (the server answers when events are added), each page's stored
 * payloads fetched back and decoded with the client's data converter. A dropped connection or a
 * restarted server is retried; a page read again after a reset is not read twice.
 */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import {
  decodeArrayFromPayloads,
  decodeOptionalFailureToOptionalError,
  extstoreInboundOptions,
  visit,
  walkDescribeWorkflowExecutionResponse,
  walkGetWorkflowExecutionHistoryResponse,
} from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import { PENDING_APPROVALS_MEMO, type ApprovalDecision, type PendingApprovalMemo } from '../core/approvals';
import type { TurnFact } from './turn-facts';
import type { CallToolOutput } from '../core/contracts';
import { isStreamRecord, type StreamRecord } from '../core/stream-record';
import { ACTIVITY_TYPES } from '../core/activity-types';
import { failingAttempts, type FailingAttempt } from './failing-call-line';
import { failingTaskLine, isWorkerTaskFailure } from './workflow-task-failure';

/** A run's running activities, as one describe sees them. */
export interface RunningActivities {
  records: Map<string, StreamRecord>;
  failing: FailingAttempt[];
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type IFailure = temporal.api.failure.v1.IFailure;

const RETRY_DELAY_MS = 500;
/**
 * The least time between two reads of the history: events that arrive meanwhile come in one read.
 * A turn writes its events in bursts (a workflow task, an activity's end), so this bounds the reads
 * per subscriber without delaying text, which comes from the running calls' records.
 */
const MIN_READ_INTERVAL_MS = 300;

export class TurnHistory {
  private nextPageToken: Uint8Array | undefined;
  private lastEventId = 0;
  private lastReadAt = 0;
  private readonly activityIds = new Map<string, string>();
  /** When the latest workflow task started: a local activity's marker is recorded at the end of the task it ran in. */
  private taskStartedMs = 0;
  /** Set once the run's last event has been read. */
  closed = false;
  /** Why the worker could not run the run's last workflow task, until a later one completes. */
  taskFailure: string | undefined;

  constructor(
    private readonly client: Client,
    readonly workflowId: string,
    readonly runId?: string,
  ) {}

  /**
   * The facts added since the last call; waits (a long poll) until there are some, the run has
   * closed, or `signal` aborts (then none).
   */
  async next(signal?: AbortSignal): Promise<TurnFact[]> {
    for (;;) {
      if (this.closed || signal?.aborted) return [];
      const wait = this.lastReadAt + MIN_READ_INTERVAL_MS - Date.now();
      if (wait > 0) await sleep(wait);
      this.lastReadAt = Date.now();
      let page: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse;
      try {
        const request = {
          namespace: this.client.options.namespace,
          execution: { workflowId: this.workflowId, ...(this.runId ? { runId: this.runId } : {}) },
          waitNewEvent: true,
          ...(this.nextPageToken ? { nextPageToken: this.nextPageToken } : {}),
        };
        // One signal per read: the SDK listens on it, and the caller's signal lives longer than a read.
        const thisRead = new AbortController();
        const abort = (): void => thisRead.abort();
        signal?.addEventListener('abort', abort, { once: true });
        try {
          page = await this.client.connection.withAbortSignal(thisRead.signal, () => this.client.workflowService.getWorkflowExecutionHistory(request));
        } finally {
          signal?.removeEventListener('abort', abort);
        }
      } catch (err) {
        if (signal?.aborted) return [];
        if (isNotFound(err)) throw err;
        // The server is restarting or the token is stale: read again from the start, skipping what was read.
        this.nextPageToken = undefined;
        await sleep(RETRY_DELAY_MS);
        continue;
      }
      this.nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
      const facts = await this.factsOfPage(page);
      if (facts.length || this.closed) return facts;
      if (!this.nextPageToken && !this.closed) await sleep(RETRY_DELAY_MS);
    }
  }

  /** Every fact recorded so far, read without waiting for more: what a lookup (not a follower) reads. */
  async upToNow(): Promise<TurnFact[]> {
    const facts: TurnFact[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await this.client.workflowService.getWorkflowExecutionHistory({
        namespace: this.client.options.namespace,
        execution: { workflowId: this.workflowId, ...(this.runId ? { runId: this.runId } : {}) },
        ...(nextPageToken ? { nextPageToken } : {}),
      });
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
      facts.push(...(await this.factsOfPage(page)));
    } while (nextPageToken);
    return facts;
  }

  /** The facts of a page's events not read before (its stored payloads fetched back first). */
  private async factsOfPage(page: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse): Promise<TurnFact[]> {
    await visit(page, walkGetWorkflowExecutionHistoryResponse, extstoreInboundOptions(this.client.options.loadedDataConverter.externalStorage));
    const facts: TurnFact[] = [];
    for (const event of page.history?.events ?? []) {
      if (Number(event.eventId) <= this.lastEventId) continue;
      this.lastEventId = Number(event.eventId);
      const fact = await this.factOf(event);
      if (fact) facts.push(fact);
      if (isCloseEvent(event)) this.closed = true;
    }
    return facts;
  }

  /**
   * The run's running activities as described now: the stream records of its Claude calls (their
   * last heartbeat details) by activity id, and the failed attempts being retried.
   */
  async running(): Promise<RunningActivities> {
    const running: RunningActivities = { records: new Map(), failing: [] };
    let described: temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse;
    try {
      described = await this.client.workflowService.describeWorkflowExecution({
        namespace: this.client.options.namespace,
        execution: { workflowId: this.workflowId, ...(this.runId ? { runId: this.runId } : {}) },
      });
    } catch {
      return running; // a restarting server: the next look sees them
    }
    await visit(
      described,
      walkDescribeWorkflowExecutionResponse,
      extstoreInboundOptions(this.client.options.loadedDataConverter.externalStorage),
    );
    const pending = described.pendingActivities ?? [];
    for (const activity of pending) {
      const record = await this.first(activity.heartbeatDetails?.payloads);
      if (activity.activityId && isStreamRecord(record)) running.records.set(activity.activityId, record);
    }
    const runId = described.workflowExecutionInfo?.execution?.runId ?? this.runId ?? '';
    running.failing = failingAttempts(runId, pending);
    // A failing workflow task: its attempt pending now follows the one that failed.
    const taskAttempt = described.pendingWorkflowTask?.attempt ?? 1;
    if (this.taskFailure !== undefined && taskAttempt >= 2) {
      running.failing.push({ key: `${runId}/workflow-task/${taskAttempt - 1}`, line: failingTaskLine(this.workflowId, this.taskFailure, taskAttempt - 1) });
    }
    return running;
  }

  private async first(payloads: Payload[] | null | undefined): Promise<unknown> {
    if (!payloads?.length) return undefined;
    const [value] = await decodeArrayFromPayloads(this.client.options.loadedDataConverter, payloads);
    return value;
  }

  private async factOf(event: HistoryEvent): Promise<TurnFact | undefined> {
    const timeMs = timeOf(event);
    if (event.workflowTaskStartedEventAttributes) this.taskStartedMs = timeMs;
    if (event.workflowTaskCompletedEventAttributes) this.taskFailure = undefined;
    const taskFailed = event.workflowTaskFailedEventAttributes;
    if (taskFailed && isWorkerTaskFailure(taskFailed)) {
      const error = await decodeOptionalFailureToOptionalError(this.client.options.loadedDataConverter, taskFailed.failure);
      this.taskFailure = error?.message ?? 'no reason given';
      return { kind: 'task-failed', message: this.taskFailure };
    }
    if (event.workflowExecutionStartedEventAttributes) {
      const input = await this.first(event.workflowExecutionStartedEventAttributes.input?.payloads);
      return input
        ? { kind: 'started', input: input as Extract<TurnFact, { kind: 'started' }>['input'] }
        : undefined;
    }
    const marker = event.markerRecordedEventAttributes;
    if (marker?.details) {
      const data = (await this.first(marker.details.data?.payloads)) as LocalActivityMarkerData | undefined;
      // Any local activity but the turn's start is a tool call, named as the call (src/core/tool-call-activity.ts).
      if (data?.activity_type !== ACTIVITY_TYPES.prepareTurn) return this.localToolCall(marker, data, Math.max(0, timeMs - this.taskStartedMs));
      const prepared = await this.first(marker.details.result?.payloads);
      return prepared
        ? { kind: 'prepared', prepared: prepared as Extract<TurnFact, { kind: 'prepared' }>['prepared'] }
        : undefined;
    }
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const activityId = scheduled.activityId ?? '';
      this.activityIds.set(String(event.eventId), activityId);
      return {
        kind: 'scheduled',
        activityId,
        activityType: scheduled.activityType?.name ?? '',
        input: await this.first(scheduled.input?.payloads),
        timeMs,
      };
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      return {
        kind: 'activity-completed',
        activityId: this.activityId(completed.scheduledEventId),
        result: await this.first(completed.result?.payloads),
        timeMs,
      };
    }
    const failed = event.activityTaskFailedEventAttributes;
    if (failed) {
      const details = failed.failure?.applicationFailureInfo?.details?.payloads;
      const values = details?.length
        ? await decodeArrayFromPayloads(this.client.options.loadedDataConverter, details)
        : [];
      const record = values.map((v) => (v as { stream?: unknown } | null)?.stream).find(isStreamRecord);
      const failureType = failed.failure?.applicationFailureInfo?.type ?? undefined;
      return { ...this.ended(failed.scheduledEventId, 'failed', record, timeMs), ...(failureType ? { failureType } : {}) };
    }
    const cancelled = event.activityTaskCanceledEventAttributes;
    if (cancelled) return this.ended(cancelled.scheduledEventId, 'cancelled', await this.first(cancelled.details?.payloads), timeMs);
    const timedOut = event.activityTaskTimedOutEventAttributes;
    if (timedOut) return this.ended(timedOut.scheduledEventId, 'timed_out', await this.first(lastHeartbeatDetails(timedOut.failure)), timeMs);
    const memo =
      event.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.[PENDING_APPROVALS_MEMO];
    if (memo)
      return {
        kind: 'pending-approvals',
        pending: ((await this.first([memo])) ?? []) as PendingApprovalMemo[],
      };
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (accepted?.name === 'decide') {
      const decision = await this.first(accepted.args?.payloads);
      return decision ? { kind: 'decision', decision: decision as ApprovalDecision } : undefined;
    }
    if (event.workflowExecutionCompletedEventAttributes) {
      const result = await this.first(event.workflowExecutionCompletedEventAttributes.result?.payloads);
      return { kind: 'completed', result: result as Extract<TurnFact, { kind: 'completed' }>['result'] };
    }
    if (event.workflowExecutionFailedEventAttributes) {
      const error = await decodeOptionalFailureToOptionalError(
        this.client.options.loadedDataConverter,
        event.workflowExecutionFailedEventAttributes.failure,
      );
      return { kind: 'closed', how: 'failed', ...(error ? { message: error.message } : {}) };
    }
    if (event.workflowExecutionCanceledEventAttributes) return { kind: 'closed', how: 'cancelled' };
    if (event.workflowExecutionTerminatedEventAttributes) {
      const reason = event.workflowExecutionTerminatedEventAttributes.reason;
      return { kind: 'closed', how: 'terminated', ...(reason ? { message: reason } : {}) };
    }
    if (event.workflowExecutionTimedOutEventAttributes) return { kind: 'closed', how: 'timed_out' };
    if (event.workflowExecutionContinuedAsNewEventAttributes) return { kind: 'closed', how: 'continued' };
    return undefined;
  }

  /**
   * A tool call's local-activity marker: its result, or its failure's tool_use id; undefined when
   * neither names the call. `durationMs`: the workflow task it ran in, at most.
   */
  private async localToolCall(
    marker: temporal.api.history.v1.IMarkerRecordedEventAttributes,
    data: LocalActivityMarkerData | undefined,
    durationMs: number,
  ): Promise<TurnFact | undefined> {
    const attempts = data?.attempt ?? 1;
    const result = (await this.first(marker.details?.result?.payloads)) as CallToolOutput | undefined;
    if (result?.toolUseId) return { kind: 'local-tool-call', toolUseId: result.toolUseId, result, durationMs, attempts };
    const details = marker.failure?.applicationFailureInfo?.details?.payloads;
    const values = details?.length ? await decodeArrayFromPayloads(this.client.options.loadedDataConverter, details) : [];
    const toolUseId = values.map((v) => (v as { toolUseId?: unknown } | null)?.toolUseId).find((id): id is string => typeof id === 'string');
    return toolUseId ? { kind: 'local-tool-call', toolUseId, durationMs, attempts } : undefined;
  }

  /** An activity that ended without a result, with the stream record it left, if it left one. */
  private ended(scheduledEventId: Long | number | null | undefined, how: 'failed' | 'cancelled' | 'timed_out', record: unknown, timeMs: number): TurnFact {
    return { kind: 'activity-ended', activityId: this.activityId(scheduledEventId), how, ...(isStreamRecord(record) ? { record } : {}), timeMs };
  }

  private activityId(scheduledEventId: Long | number | null | undefined): string {
    return this.activityIds.get(String(scheduledEventId)) ?? '';
  }
}

type Long = { toString(): string };

/** What Temporal's core records about a local activity in its marker's `data` (the fields read here). */
interface LocalActivityMarkerData {
  activity_type?: string;
  attempt?: number;
}

function lastHeartbeatDetails(failure: IFailure | null | undefined): Payload[] | undefined {
  for (let f = failure; f; f = f.cause) {
    const payloads = f.timeoutFailureInfo?.lastHeartbeatDetails?.payloads;
    if (payloads?.length) return payloads;
  }
  return undefined;
}

function timeOf(event: HistoryEvent): number {
  const t = event.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
}

function isCloseEvent(event: HistoryEvent): boolean {
  return Boolean(
    event.workflowExecutionCompletedEventAttributes ||
    event.workflowExecutionFailedEventAttributes ||
    event.workflowExecutionCanceledEventAttributes ||
    event.workflowExecutionTerminatedEventAttributes ||
    event.workflowExecutionTimedOutEventAttributes ||
    event.workflowExecutionContinuedAsNewEventAttributes,
  );
}

function isNotFound(err: unknown): boolean {
  return (err as { code?: number } | null)?.code === 5; // gRPC NOT_FOUND
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
