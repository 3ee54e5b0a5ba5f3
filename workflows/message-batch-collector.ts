/**
 * The Message Batch collector: one workflow per namespace, task queue and model
 * (`collectorWorkflowId`), started by the first request that reaches it (signal-with-start). It
 * gathers turns' Claude requests into Message Batches (a size or a wait, whichever comes first,
 * split at the API's limits), creates each with one activity, polls it from timers with backoff
 * (no worker slot is held while it waits), and when it has ended hands every result to its turn.
 * A request whose turn withdrew it is discarded when its result arrives (its cost still counted); a
 * Message Batch whose every request was withdrawn is cancelled. Its history stays bounded: it
 * continues as new, carrying only the batches it waits for.
 */
import {
  ApplicationFailure,
  ActivityFailure,
  condition,
  log,
  makeContinueAsNewFunc,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { MessageBatchActivities } from '../activities/message-batches';
import {
  BatchedOutcomeType,
  API_MAX_BYTES,
  API_MAX_REQUESTS,
  INLINE_CREATE_BYTES,
  type CollectorInput,
  type CollectorRequest,
  type CollectorStatus,
  type CollectorTotals,
  type DeliveryReport,
  type SubmittedBatch,
} from '../src/core/message-batches';
import { claudeTaskQueue } from '../src/core/task-queues';
import { COLLECTOR_TASK_TIMEOUT } from '../src/core/message-batches';
import { failureMessage } from '../src/core/failure-message';
import { messageBatchesQuery, messageBatchRequestSignal, messageBatchWithdrawSignal } from '../src/core/workflow-handlers';
import { workflowNow } from './workflow-clock';
import { COLLECTOR_CALL_RETRY } from '../src/core/retry-policies';

/**
 * Requests received, or events, in one run before it continues as new. Small: a collector out of
 * the worker's cache (thousands of turns share it) replays its run from the start on its next task.
 */
const REQUESTS_PER_RUN = 1000;
const EVENTS_PER_RUN = 4000;
/** Answered custom_ids remembered, so a request submitted again is not paid again. */
const ANSWERED_KEPT = 20_000;

export async function messageBatchCollector(input: CollectorInput): Promise<CollectorTotals> {
  const { settings } = input;
  const activities = proxyActivities<MessageBatchActivities>({
    taskQueue: claudeTaskQueue(input.taskQueue),
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '10 seconds',
    retry: COLLECTOR_CALL_RETRY,
  });
  const pending: CollectorRequest[] = [...input.pending];
  const pendingIds = new Set(pending.map((p) => p.entry.batchRequest));
  let pendingBytes = pending.reduce((n, p) => n + p.entry.bytes, 0);
  let pendingSince: number | undefined = pending.length ? workflowNow() : undefined;
  const batches = new Map<string, SubmittedBatch>(input.batches.map((b) => [b.id, b]));
  const totals: CollectorTotals = { ...input.totals };
  const answered = new Set(input.answered);
  /** custom_id → the Message Batch that holds it. */
  const submitted = new Map<string, string>();
  /** custom_ids of the Message Batch being created, and those of them withdrawn meanwhile. */
  const creating = new Set<string>();
  const withdrawnWhileCreating = new Set<string>();
  for (const b of batches.values()) if (!b.suspectedDuplicateOf) for (const id of Object.keys(b.turns)) submitted.set(id, b.id);
  let receivedThisRun = 0;
  let lastWorkAt = workflowNow();
  let draining = false;
  let busy = 0;

  setHandler(messageBatchRequestSignal, (...requests) => {
    lastWorkAt = workflowNow();
    for (const request of requests) {
      receivedThisRun++;
      const id = request.entry.batchRequest;
      // A submission repeated (a retried activity) is sent, and paid, once.
      if (answered.has(id) || submitted.has(id) || pendingIds.has(id) || creating.has(id)) continue;
      pending.push(request);
      pendingIds.add(id);
      pendingBytes += request.entry.bytes;
      pendingSince ??= workflowNow();
    }
    report();
  });
  setHandler(messageBatchWithdrawSignal, ({ customIds }) => {
    for (const id of customIds) {
      if (pendingIds.has(id)) {
        const at = pending.findIndex((p) => p.entry.batchRequest === id);
        pendingBytes -= pending[at]!.entry.bytes;
        pending.splice(at, 1); // never sent: nothing to pay
        pendingIds.delete(id);
        continue;
      }
      if (creating.has(id)) {
        withdrawnWhileCreating.add(id); // recorded on its batch once the create answers
        continue;
      }
      const batch = batches.get(submitted.get(id) ?? '');
      if (batch && !batch.withdrawn.includes(id)) batch.withdrawn.push(id);
    }
    if (!pending.length) pendingSince = undefined;
    report();
  });
  setHandler(messageBatchesQuery, (): CollectorStatus => status());

  const byParent = (requests: readonly CollectorRequest[]): Record<string, number> => {
    const counts: Record<string, number> = {};
    for (const r of requests) if (r.parent) counts[r.parent] = (counts[r.parent] ?? 0) + 1;
    return counts;
  };
  function status(): CollectorStatus {
    return {
      model: input.model,
      taskQueue: input.taskQueue,
      pending: { requests: pending.length, byParent: byParent(pending), ...(pendingSince !== undefined ? { since: pendingSince } : {}) },
      batches: [...batches.values()]
        .filter((b) => !b.suspectedDuplicateOf)
        .map((b) => ({ id: b.id, requests: b.requests, submittedAt: b.submittedAt, byParent: b.byParent, withdrawn: b.withdrawn.length })),
      totals,
    };
  }
  function report(): void {
    const now = workflowNow();
    const lines = [...batches.values()]
      .filter((b) => !b.suspectedDuplicateOf)
      .map((b) => `- ${b.id}: ${b.requests} requests, submitted ${Math.round((now - b.submittedAt) / 1000)} s ago`);
    setCurrentDetails(
      `**Message Batches for ${input.model}** · ${pending.length} requests waiting to be sent · ${totals.batches} batches, ${totals.requests} requests so far\n` +
        lines.join('\n'),
    );
  }

  /** Bytes one Message Batch may hold: the API's limit, and the create input's when nothing is stored. */
  const byteCap = Math.min(settings.maxBytes, API_MAX_BYTES, settings.storesPayloads ? Infinity : INLINE_CREATE_BYTES);
  const requestCap = Math.min(settings.maxRequests, API_MAX_REQUESTS);
  const flushDue = (): boolean =>
    pending.length >= requestCap ||
    pendingBytes >= byteCap ||
    (pendingSince !== undefined && workflowNow() - pendingSince >= settings.maxWaitMs);
  const cancelDue = (b: SubmittedBatch): boolean => !b.cancelRequested && !b.suspectedDuplicateOf && b.withdrawn.length >= b.requests;

  /** Sends the oldest pending requests as one Message Batch. */
  async function flush(): Promise<void> {
    let bytes = 0;
    let count = 0;
    while (count < pending.length && count < requestCap) {
      const next = pending[count]!.entry.bytes;
      if (count > 0 && bytes + next > byteCap) break;
      bytes += next;
      count++;
    }
    const taken = pending.splice(0, count);
    for (const t of taken) {
      pendingIds.delete(t.entry.batchRequest);
      creating.add(t.entry.batchRequest);
    }
    pendingBytes -= bytes;
    pendingSince = pending.length ? workflowNow() : undefined;
    busy++;
    try {
      const created = await activities.createMessageBatch({ requests: taken.length }, ...taken.map((t) => t.entry));
      const turns = Object.fromEntries(taken.map((t) => [t.entry.batchRequest, t.turn]));
      const batch: SubmittedBatch = {
        id: created.id,
        submittedAt: workflowNow(),
        requests: taken.length,
        turns,
        byParent: byParent(taken),
        withdrawn: [...withdrawnWhileCreating],
        pollDelayMs: settings.pollInitialMs,
      };
      batches.set(batch.id, batch);
      for (const id of Object.keys(turns)) submitted.set(id, batch.id);
      totals.batches++;
      totals.requests += taken.length;
      if (created.adopted) totals.adopted++;
      watch(batch);
      for (const suspect of created.duplicateSuspects) {
        const duplicate: SubmittedBatch = { ...batch, id: suspect, byParent: {}, withdrawn: [], suspectedDuplicateOf: batch.id };
        batches.set(suspect, duplicate);
        watch(duplicate);
      }
    } catch (err) {
      // The API refused the batch itself (its requests are not retried as they are): each turn is told.
      log.error('a Message Batch could not be created', { requests: taken.length, error: failureMessage(err) });
      const turns = Object.fromEntries(taken.map((t) => [t.entry.batchRequest, t.turn]));
      await activities.answerWithFailure({ turns, failure: createFailure(err) });
    } finally {
      creating.clear();
      withdrawnWhileCreating.clear();
      busy--;
      report();
    }
  }

  /** Waits for a Message Batch to end (polls with backoff), then hands its results to their turns. */
  function watch(batch: SubmittedBatch): void {
    void (async () => {
      for (;;) {
        if (cancelDue(batch)) {
          batch.cancelRequested = true;
          busy++;
          try {
            await activities.cancelMessageBatch(batch.id);
          } catch (err) {
            log.warn('a Message Batch could not be cancelled; its results are still discarded', { batchId: batch.id, error: failureMessage(err) });
          } finally {
            busy--;
          }
        }
        await condition(() => draining || cancelDue(batch), batch.pollDelayMs);
        if (draining) return;
        if (cancelDue(batch)) continue;
        busy++;
        try {
          let ended: boolean;
          try {
            ({ ended } = await activities.retrieveMessageBatch(batch.id));
          } catch (err) {
            await lost(batch, err);
            return;
          }
          if (!ended) {
            batch.pollDelayMs = Math.min(Math.round(batch.pollDelayMs * 1.5), settings.pollMaxMs);
            continue;
          }
          let delivered: DeliveryReport;
          try {
            delivered = await activities.deliverMessageBatchResults({
              batchId: batch.id,
              turns: batch.turns,
              withdrawn: batch.withdrawn,
              ...(batch.suspectedDuplicateOf ? { duplicateOf: batch.suspectedDuplicateOf } : {}),
            });
          } catch (err) {
            await lost(batch, err);
            return;
          }
          account(delivered);
          forget(batch);
          return;
        } finally {
          busy--;
          report();
        }
      }
    })();
  }

  function forget(batch: SubmittedBatch): void {
    batches.delete(batch.id);
    if (!batch.suspectedDuplicateOf) for (const id of Object.keys(batch.turns)) submitted.delete(id);
    lastWorkAt = workflowNow();
  }

  /**
   * A Message Batch the API no longer answers for (not found, archived: a final error after the
   * activity's retries): its turns still waiting send their requests again.
   */
  async function lost(batch: SubmittedBatch, err: unknown): Promise<void> {
    log.error('a Message Batch cannot be read: its requests are sent again', { batchId: batch.id, error: failureMessage(err) });
    forget(batch);
    if (batch.suspectedDuplicateOf) return;
    const withdrawn = new Set(batch.withdrawn);
    const turns = Object.fromEntries(Object.entries(batch.turns).filter(([id]) => !withdrawn.has(id)));
    await activities.answerWithFailure({
      turns,
      failure: { type: BatchedOutcomeType.NotSubmitted, message: `Message Batch ${batch.id} cannot be read (${failureMessage(err)}): sent again`, retryable: true },
    });
  }

  function account(delivered: DeliveryReport): void {
    totals.succeeded += delivered.succeeded;
    totals.errored += delivered.errored;
    totals.expired += delivered.expired;
    totals.canceled += delivered.canceled;
    totals.discarded += delivered.discarded;
    totals.discardedCostUsd += delivered.discardedCostUsd;
    for (const id of delivered.answered) answered.add(id);
    if (answered.size > ANSWERED_KEPT) {
      const drop = answered.size - ANSWERED_KEPT;
      let i = 0;
      for (const id of answered) {
        if (i++ >= drop) break;
        answered.delete(id);
      }
    }
  }

  for (const b of batches.values()) watch(b);
  report();
  for (;;) {
    const longHistory = (): boolean =>
      workflowInfo().continueAsNewSuggested || receivedThisRun >= REQUESTS_PER_RUN || workflowInfo().historyLength >= EVENTS_PER_RUN;
    // The first request to wait starts the wait for its batch, and the last batch ended starts the
    // idle time: the loop wakes for either.
    const gathering = pendingSince !== undefined;
    const waiting = batches.size > 0;
    const wake = (): boolean =>
      flushDue() || (longHistory() && busy === 0) || (pendingSince !== undefined) !== gathering || (batches.size > 0) !== waiting;
    if (gathering) await condition(wake, Math.max(0, pendingSince! + settings.maxWaitMs - workflowNow()));
    else if (waiting) await condition(wake);
    else await condition(wake, Math.max(1, lastWorkAt + settings.idleMs - workflowNow()));
    if (flushDue()) {
      await flush();
      continue;
    }
    if (longHistory()) {
      // Sends what waits, lets every running activity end, then carries the rest to a new run.
      while (pending.length) await flush();
      draining = true;
      await condition(() => busy === 0);
      return makeContinueAsNewFunc<typeof messageBatchCollector>({ workflowTaskTimeout: COLLECTOR_TASK_TIMEOUT })({
        ...input,
        batches: [...batches.values()],
        pending: [...pending],
        totals,
        answered: [...answered],
      });
    }
    if (!pending.length && batches.size === 0 && workflowNow() - lastWorkAt >= settings.idleMs) {
      log.info('no requests for a while: the collector ends (the next request starts it again)', { totals });
      return totals;
    }
  }
}

/** The failure each turn of a refused Message Batch gets: the API's own, never retried as is. */
function createFailure(err: unknown): { type: string; message: string; retryable: boolean } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const type = cause instanceof ApplicationFailure ? (cause.type ?? 'ClaudeBatchCreateFailed') : 'ClaudeBatchCreateFailed';
  return { type, message: `the Message Batch could not be created: ${failureMessage(err)}`, retryable: false };
}
