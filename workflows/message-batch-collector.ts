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
 * Requests received, events, or history bytes in one run before it continues as new. Small: a
 * collector out of the worker's cache (thousands of turns share it) replays its run from the start
 * on its next task, and requests come grouped (a signal carries up to a few hundred).
 */
const REQUESTS_PER_RUN = 5000;
const EVENTS_PER_RUN = 2000;
const HISTORY_BYTES_PER_RUN = 2 * 1024 * 1024;
/** Answered custom_ids remembered, so a request submitted again is not paid again. */
const ANSWERED_KEPT = 20_000;

export async function messageBatchCollector(input: CollectorInput): Promise<CollectorTotals> {
  return new Collector(input).run();
}

/** One run of the collector: its handlers' methods first, then its loop (`run`) and what the loop does. */
class Collector {
  private readonly activities: MessageBatchActivities;
  private readonly pending: CollectorRequest[];
  private readonly pendingIds: Set<string>;
  private pendingBytes: number;
  private pendingSince: number | undefined;
  private readonly batches: Map<string, SubmittedBatch>;
  private readonly totals: CollectorTotals;
  private readonly answered: Set<string>;
  /** custom_id → the Message Batch that holds it. */
  private readonly submitted = new Map<string, string>();
  /** custom_ids of the Message Batch being created, and those of them withdrawn meanwhile. */
  private readonly creating = new Set<string>();
  private readonly withdrawnWhileCreating = new Set<string>();
  private receivedThisRun = 0;
  private lastWorkAt: number;
  /** The run is about to continue as new: the watchers stop. */
  private draining = false;
  /** Activities running now: the run continues as new only when none is. */
  private busy = 0;
  /** Bytes one Message Batch may hold: the API's limit, and the create input's when nothing is stored. */
  private readonly byteCap: number;
  private readonly requestCap: number;

  constructor(private readonly input: CollectorInput) {
    const { settings } = input;
    this.activities = proxyActivities<MessageBatchActivities>({
      taskQueue: claudeTaskQueue(input.taskQueue),
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: '10 seconds',
      retry: COLLECTOR_CALL_RETRY,
    });
    this.pending = [...input.pending];
    this.pendingIds = new Set(this.pending.map((p) => p.entry.batchRequest));
    this.pendingBytes = this.pending.reduce((n, p) => n + p.entry.bytes, 0);
    this.pendingSince = this.pending.length ? (input.pendingSince ?? workflowNow()) : undefined;
    this.batches = new Map(input.batches.map((b) => [b.id, b]));
    this.totals = { ...input.totals };
    this.answered = new Set(input.answered);
    for (const b of this.batches.values()) if (!b.suspectedDuplicateOf) for (const id of Object.keys(b.turns)) this.submitted.set(id, b.id);
    this.lastWorkAt = workflowNow();
    this.byteCap = Math.min(settings.maxBytes, API_MAX_BYTES, settings.storesPayloads ? Infinity : INLINE_CREATE_BYTES);
    this.requestCap = Math.min(settings.maxRequests, API_MAX_REQUESTS);
    // The handlers, once the state they change is there and before anything awaits: a request
    // signalled with the start is handled at once (setHandler delivers what waited for it).
    setHandler(messageBatchRequestSignal, (...requests) => this.receive(requests));
    setHandler(messageBatchWithdrawSignal, ({ customIds }) => this.withdraw(customIds));
    setHandler(messageBatchesQuery, (): CollectorStatus => this.status());
  }

  /** Requests signalled by turns: each sent once, whatever a retried submission repeats. */
  private receive(requests: readonly CollectorRequest[]): void {
    this.lastWorkAt = workflowNow();
    for (const request of requests) {
      this.receivedThisRun++;
      const id = request.entry.batchRequest;
      // A submission repeated (a retried activity) is sent, and paid, once.
      if (this.answered.has(id) || this.submitted.has(id) || this.pendingIds.has(id) || this.creating.has(id)) continue;
      this.pending.push(request);
      this.pendingIds.add(id);
      this.pendingBytes += request.entry.bytes;
      this.pendingSince ??= workflowNow();
    }
    this.report();
  }

  /** Requests their turns no longer want: dropped while pending, else discarded when their results come. */
  private withdraw(customIds: readonly string[]): void {
    for (const id of customIds) {
      if (this.pendingIds.has(id)) {
        const at = this.pending.findIndex((p) => p.entry.batchRequest === id);
        this.pendingBytes -= this.pending[at]!.entry.bytes;
        this.pending.splice(at, 1); // never sent: nothing to pay
        this.pendingIds.delete(id);
        continue;
      }
      if (this.creating.has(id)) {
        this.withdrawnWhileCreating.add(id); // recorded on its batch once the create answers
        continue;
      }
      const batch = this.batches.get(this.submitted.get(id) ?? '');
      if (batch && !batch.withdrawn.includes(id)) batch.withdrawn.push(id);
    }
    if (!this.pending.length) this.pendingSince = undefined;
    this.report();
  }

  private status(): CollectorStatus {
    const { pending, pendingSince } = this;
    return {
      model: this.input.model,
      taskQueue: this.input.taskQueue,
      pending: { requests: pending.length, byParent: byParent(pending), ...(pendingSince !== undefined ? { since: pendingSince } : {}) },
      batches: [...this.batches.values()]
        .filter((b) => !b.suspectedDuplicateOf)
        .map((b) => ({
          id: b.id,
          requests: b.requests,
          submittedAt: b.submittedAt,
          byParent: b.byParent,
          withdrawn: b.withdrawn.length,
          ...(b.counts ? { counts: b.counts } : {}),
        })),
      totals: this.totals,
    };
  }

  /** Gathers, sends and watches until the collector has been idle long enough, or continues as new. */
  async run(): Promise<CollectorTotals> {
    const { settings } = this.input;
    for (const b of this.batches.values()) this.watch(b);
    this.report();
    for (;;) {
      const longHistory = (): boolean =>
        workflowInfo().continueAsNewSuggested ||
        this.receivedThisRun >= REQUESTS_PER_RUN ||
        workflowInfo().historyLength >= EVENTS_PER_RUN ||
        workflowInfo().historySize >= HISTORY_BYTES_PER_RUN;
      // The first request to wait starts the wait for its batch, and the last batch ended starts the
      // idle time: the loop wakes for either.
      const gathering = this.pendingSince !== undefined;
      const waiting = this.batches.size > 0;
      const wake = (): boolean =>
        this.flushDue() || longHistory() || (this.pendingSince !== undefined) !== gathering || (this.batches.size > 0) !== waiting;
      if (gathering) await condition(wake, Math.max(0, this.pendingSince! + settings.maxWaitMs - workflowNow()));
      else if (waiting) await condition(wake);
      else await condition(wake, Math.max(1, this.lastWorkAt + settings.idleMs - workflowNow()));
      if (longHistory()) {
        // Starts no activity from now on and lets the running ones end (a watcher between polls
        // stops at once; one whose batch ended leaves the delivery to the next run), then carries
        // the batches it waits for and the requests still pending to a new run. It does not wait
        // for a quiet moment: under a steady stream of requests there is none, and the run's
        // history must stay short, because a run out of the cache (or whose slow task the server
        // fails for the signals buffered meanwhile) replays it whole.
        this.draining = true;
        await condition(() => this.busy === 0);
        return makeContinueAsNewFunc<typeof messageBatchCollector>({ workflowTaskTimeout: COLLECTOR_TASK_TIMEOUT })({
          ...this.input,
          batches: [...this.batches.values()],
          pending: [...this.pending],
          ...(this.pendingSince !== undefined ? { pendingSince: this.pendingSince } : {}),
          totals: this.totals,
          answered: [...this.answered],
        });
      }
      if (this.flushDue()) {
        await this.flush();
        continue;
      }
      if (!this.pending.length && this.batches.size === 0 && workflowNow() - this.lastWorkAt >= settings.idleMs) {
        log.info('no requests for a while: the collector ends (the next request starts it again)', { totals: this.totals });
        return this.totals;
      }
    }
  }

  /** The Temporal UI's current details: what waits, what was sent. */
  private report(): void {
    const now = workflowNow();
    const lines = [...this.batches.values()]
      .filter((b) => !b.suspectedDuplicateOf)
      .map((b) => `- ${b.id}: ${b.requests} requests, submitted ${Math.round((now - b.submittedAt) / 1000)} s ago`);
    setCurrentDetails(
      `**Message Batches for ${this.input.model}** · ${this.pending.length} requests waiting to be sent · ${this.totals.batches} batches, ${this.totals.requests} requests so far\n` +
        lines.join('\n'),
    );
  }

  private flushDue(): boolean {
    return (
      this.pending.length >= this.requestCap ||
      this.pendingBytes >= this.byteCap ||
      (this.pendingSince !== undefined && workflowNow() - this.pendingSince >= this.input.settings.maxWaitMs)
    );
  }

  /** Sends the oldest pending requests as one Message Batch. */
  private async flush(): Promise<void> {
    const { activities } = this;
    let bytes = 0;
    let count = 0;
    while (count < this.pending.length && count < this.requestCap) {
      const next = this.pending[count]!.entry.bytes;
      if (count > 0 && bytes + next > this.byteCap) break;
      bytes += next;
      count++;
    }
    const taken = this.pending.splice(0, count);
    for (const t of taken) {
      this.pendingIds.delete(t.entry.batchRequest);
      this.creating.add(t.entry.batchRequest);
    }
    this.pendingBytes -= bytes;
    this.pendingSince = this.pending.length ? workflowNow() : undefined;
    this.busy++;
    try {
      const created = await activities.createMessageBatch({ requests: taken.length }, ...taken.map((t) => t.entry));
      const turns = Object.fromEntries(taken.map((t) => [t.entry.batchRequest, t.turn]));
      const batch: SubmittedBatch = {
        id: created.id,
        submittedAt: workflowNow(),
        requests: taken.length,
        turns,
        byParent: byParent(taken),
        withdrawn: [...this.withdrawnWhileCreating],
        pollDelayMs: this.input.settings.pollInitialMs,
      };
      this.batches.set(batch.id, batch);
      for (const id of Object.keys(turns)) this.submitted.set(id, batch.id);
      this.totals.batches++;
      this.totals.requests += taken.length;
      if (created.adopted) this.totals.adopted++;
      this.watch(batch);
      for (const suspect of created.duplicateSuspects) {
        const duplicate: SubmittedBatch = { ...batch, id: suspect, byParent: {}, withdrawn: [], suspectedDuplicateOf: batch.id };
        this.batches.set(suspect, duplicate);
        this.watch(duplicate);
      }
    } catch (err) {
      // The API refused the batch itself (its requests are not retried as they are): each turn is told.
      log.error('a Message Batch could not be created', { requests: taken.length, error: failureMessage(err) });
      const turns = Object.fromEntries(taken.map((t) => [t.entry.batchRequest, t.turn]));
      await activities.answerWithFailure({ turns, failure: createFailure(err) });
    } finally {
      this.creating.clear();
      this.withdrawnWhileCreating.clear();
      this.busy--;
      this.report();
    }
  }

  /** Waits for a Message Batch to end (polls with backoff), then hands its results to their turns. */
  private watch(batch: SubmittedBatch): void {
    void this.watching(batch);
  }

  private async watching(batch: SubmittedBatch): Promise<void> {
    const { activities } = this;
    for (;;) {
      if (this.draining) return;
      if (cancelDue(batch)) {
        batch.cancelRequested = true;
        this.busy++;
        try {
          await activities.cancelMessageBatch(batch.id);
        } catch (err) {
          log.warn('a Message Batch could not be cancelled; its results are still discarded', { batchId: batch.id, error: failureMessage(err) });
        } finally {
          this.busy--;
        }
      }
      await condition(() => this.draining || cancelDue(batch), batch.pollDelayMs);
      if (this.draining) return;
      if (cancelDue(batch)) continue;
      this.busy++;
      try {
        let ended: boolean;
        try {
          const poll = await activities.retrieveMessageBatch(batch.id);
          ended = poll.ended;
          if (poll.counts) batch.counts = poll.counts;
        } catch (err) {
          await this.lost(batch, err);
          return;
        }
        if (!ended) {
          batch.pollDelayMs = Math.min(Math.round(batch.pollDelayMs * 1.5), this.input.settings.pollMaxMs);
          continue;
        }
        if (this.draining) return; // the next run polls it again and delivers
        let delivered: DeliveryReport;
        try {
          delivered = await activities.deliverMessageBatchResults({
            batchId: batch.id,
            turns: batch.turns,
            withdrawn: batch.withdrawn,
            ...(batch.suspectedDuplicateOf ? { duplicateOf: batch.suspectedDuplicateOf } : {}),
          });
        } catch (err) {
          await this.lost(batch, err);
          return;
        }
        this.account(delivered);
        this.forget(batch);
        return;
      } finally {
        this.busy--;
        this.report();
      }
    }
  }

  private forget(batch: SubmittedBatch): void {
    this.batches.delete(batch.id);
    if (!batch.suspectedDuplicateOf) for (const id of Object.keys(batch.turns)) this.submitted.delete(id);
    this.lastWorkAt = workflowNow();
  }

  /**
   * A Message Batch the API no longer answers for (not found, archived: a final error after the
   * activity's retries): its turns still waiting send their requests again.
   */
  private async lost(batch: SubmittedBatch, err: unknown): Promise<void> {
    log.error('a Message Batch cannot be read: its requests are sent again', { batchId: batch.id, error: failureMessage(err) });
    this.forget(batch);
    if (batch.suspectedDuplicateOf) return;
    const withdrawn = new Set(batch.withdrawn);
    const turns = Object.fromEntries(Object.entries(batch.turns).filter(([id]) => !withdrawn.has(id)));
    await this.activities.answerWithFailure({
      turns,
      failure: { type: BatchedOutcomeType.NotSubmitted, message: `Message Batch ${batch.id} cannot be read (${failureMessage(err)}): sent again`, retryable: true },
    });
  }

  private account(delivered: DeliveryReport): void {
    const { totals, answered } = this;
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
}

/** The requests of each batch parent among `requests`. */
function byParent(requests: readonly CollectorRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) if (r.parent) counts[r.parent] = (counts[r.parent] ?? 0) + 1;
  return counts;
}

/** A Message Batch whose every request was withdrawn, not yet asked to cancel. */
function cancelDue(b: SubmittedBatch): boolean {
  return !b.cancelRequested && !b.suspectedDuplicateOf && b.withdrawn.length >= b.requests;
}

/** The failure each turn of a refused Message Batch gets: the API's own, never retried as is. */
function createFailure(err: unknown): { type: string; message: string; retryable: boolean } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const type = cause instanceof ApplicationFailure ? (cause.type ?? 'ClaudeBatchCreateFailed') : 'ClaudeBatchCreateFailed';
  return { type, message: `the Message Batch could not be created: ${failureMessage(err)}`, retryable: false };
}
