/**
 * The rules of the Message Batch collector (workflows/message-batch-collector.ts) and of a turn's
 * batched Claude calls (workflows/message-batch-call.ts), one test each, against the real workflows
 * on the shared dev server with scripted activities (test/support/scripted-activities.ts): how
 * requests are gathered into Message Batches, that a repeated submission is sent once, what a
 * withdrawn request costs, how a turn takes a failed, an expired or a late result, and when the
 * collector ends. Every test has a model of its own, so a collector of its own.
 */
import { CancelledFailure, type WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import {
  BatchedOutcomeType,
  type BatchRequestEntry,
  type CollectorInput,
  type CollectorRequest,
  type CollectorStatus,
  type TurnRef,
  ZERO_COLLECTOR_TOTALS,
} from '../../src/core/message-batches';
import { messageBatchesQuery, messageBatchRequestSignal } from '../../src/core/workflow-handlers';
import { batchCustomId } from '../../src/message-batches/custom-id';
import { until } from '../support/until';
import { failureOf } from '../support/workflow-failure';
import type { ChatTurnInput } from '../../src/schemas/turn-input';
import type { messageBatchCollector } from '../../workflows/message-batch-collector';
import {
  reply,
  SCRIPTED_MESSAGE_BATCH_SETTINGS,
  startScriptedTurns,
  text,
  type ClaudeFailure,
  type MessageBatchSeen,
  type ScriptedTurns,
  type ScriptedTurnsOptions,
  type StartedTurn,
  type TurnScript,
} from '../support/scripted-activities';

// The dev server fires timers on a tick of about a second, so every wait of the collector costs up
// to one: the tests of a block run at once (each has its own model, so its own collector).
jest.setTimeout(30_000);

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Models whose Message Batches have not ended yet (every poll says "in progress" until removed). */
const held = new Set<string>();
/** Models whose `createMessageBatch` waits for this. */
const createHolds = new Map<string, { started: boolean; release: () => void; promise: Promise<void> }>();

const modelOf = (entries: readonly BatchRequestEntry[]): string => String(entries[0]?.params.model);

/** Collector settings plus the test's control of the scripted Message Batches API. */
function scripted(messageBatches: ScriptedTurnsOptions['messageBatches']): ScriptedTurnsOptions {
  return {
    messageBatches,
    messageBatchEnded: (batch) => !held.has(modelOf(batch.entries)),
    beforeCreateMessageBatch: (entries) => {
      const hold = createHolds.get(modelOf(entries));
      if (!hold) return undefined;
      hold.started = true;
      return hold.promise;
    },
  };
}

function holdCreate(model: string): { started: boolean; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  const hold = { started: false, release, promise };
  createHolds.set(model, hold);
  return hold;
}

/** Gathering: 4 requests, or the first waiting 2.5 s. */
const GATHER = { maxRequests: 4, maxWaitMs: 2500, idleMs: 500 };
/** Withdrawing: 2 requests, or the first waiting 2 s. */
const WITHDRAW = { maxRequests: 2, maxWaitMs: 2000, idleMs: 500 };
/** The turn's side: each request in a Message Batch of its own at once; a collector that outlives a retry's backoff. */
const TURN_SIDE = { maxRequests: 1, idleMs: 10_000 };
/** Idling: ends after 500 ms idle; polls every second (every poll timer is 1 s). */
const IDLE = { idleMs: 500, pollInitialMs: 1000, pollMaxMs: 1000 };

let gather: ScriptedTurns;
let withdraw: ScriptedTurns;
let turnSide: ScriptedTurns;
let idle: ScriptedTurns;
beforeAll(async () => {
  [gather, withdraw, turnSide, idle] = await Promise.all([
    startScriptedTurns(scripted(GATHER)),
    startScriptedTurns(scripted(WITHDRAW)),
    startScriptedTurns(scripted(TURN_SIDE)),
    startScriptedTurns(scripted(IDLE)),
  ]);
});
afterAll(async () => {
  for (const h of createHolds.values()) h.release();
  await Promise.all([gather, withdraw, turnSide, idle].map((t) => t?.close()));
});

let models = 0;
/** A model of the test's own: its own collector. */
const newModel = (what: string): string => `claude-test-${what}-${Date.now().toString(36)}-${++models}`;

/** A one-call turn (no formatter) through Message Batches. */
function input(model: string, messageBatches: ChatTurnInput['messageBatches'] = {}): ChatTurnInput {
  return { question: `question for ${model}`, model, format: false, messageBatches };
}

const answer = (t: string): TurnScript => ({ claude: [reply([text(t)])] });

function collector(turns: ScriptedTurns, model: string, runId?: string): WorkflowHandle<typeof messageBatchCollector> {
  return turns.client.workflow.getHandle<typeof messageBatchCollector>(turns.collectorId(model), runId);
}

/** The collector's status, or undefined while it has not started. */
async function status(turns: ScriptedTurns, model: string): Promise<CollectorStatus | undefined> {
  return collector(turns, model)
    .query(messageBatchesQuery)
    .catch(() => undefined);
}

/** The Message Batches created for this model, in order. */
const batchesOf = (turns: ScriptedTurns, model: string): MessageBatchSeen[] =>
  turns.messageBatches.filter((b) => modelOf(b.entries) === model);

async function cancelled(t: StartedTurn): Promise<void> {
  await t.handle.cancel();
  const err = await t.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect((err as WorkflowFailedError | undefined)?.cause).toBeInstanceOf(CancelledFailure);
}

/** The turn's run (a turn never continues as new). */
const runOf = async (t: StartedTurn): Promise<string> => (await t.handle.describe()).runId;
const turnRef = async (t: StartedTurn): Promise<TurnRef> => ({ workflowId: t.workflowId, runId: await runOf(t) });

// History reading.
const timeOf = (e: HistoryEvent): number => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
const durationMs = (d: { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
  Number(d?.seconds ?? 0) * 1000 + Math.floor((d?.nanos ?? 0) / 1e6);
const requestSignals = (events: HistoryEvent[]): HistoryEvent[] =>
  events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === messageBatchRequestSignal.name);
const scheduled = (events: HistoryEvent[], activity: string): HistoryEvent[] =>
  events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity);
/** Completions of this activity. */
function completed(events: HistoryEvent[], activity: string): HistoryEvent[] {
  const ids = new Set(scheduled(events, activity).map((e) => String(e.eventId)));
  return events.filter((e) => e.activityTaskCompletedEventAttributes && ids.has(String(e.activityTaskCompletedEventAttributes.scheduledEventId)));
}
const timers = (events: HistoryEvent[]): HistoryEvent[] => events.filter((e) => e.timerStartedEventAttributes);

describe('gathering requests into Message Batches', () => {
  it.concurrent('sends a Message Batch as soon as it has maxRequests, the rest after maxWaitMs; every turn completes and the totals count them', async () => {
    const model = newModel('gather');
    const started = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => gather.start(input(model), answer(`answer ${i}`))));
    const results = await Promise.all(started.map((t) => t.result()));
    expect(results.map((r) => [r.stopReason, r.response.conversation])).toEqual([1, 2, 3, 4, 5, 6].map((i) => ['completed', `answer ${i}`]));

    const made = batchesOf(gather, model);
    expect(made.map((b) => b.customIds.length)).toEqual([4, 2]);
    const sent = made.flatMap((b) => b.customIds);
    expect([...sent].sort()).toEqual(started.map((t) => t.claude[0]!.customId!).sort());

    const totals = await collector(gather, model).result();
    expect(totals).toMatchObject({ batches: 2, requests: 6, succeeded: 6, errored: 0, discarded: 0 });

    const { events } = await collector(gather, model).fetchHistory();
    // One time per request (a worker's requests made together arrive in one signal).
    const arrived = requestSignals(events!).flatMap((e) => Array<number>(e.workflowExecutionSignaledEventAttributes!.input?.payloads?.length ?? 0).fill(timeOf(e)));
    const creates = scheduled(events!, 'createMessageBatch').map(timeOf);
    expect(arrived).toHaveLength(6);
    expect(creates).toHaveLength(2);
    // The first at its 4th request, long before the first had waited maxWaitMs…
    expect(creates[0]! - arrived[3]!).toBeLessThan(1000);
    expect(creates[0]! - arrived[0]!).toBeLessThan(GATHER.maxWaitMs - 1000);
    // …the rest once they had waited maxWaitMs.
    expect(creates[1]! - arrived[4]!).toBeGreaterThanOrEqual(GATHER.maxWaitMs - 50);
    expect(creates[1]! - arrived[4]!).toBeLessThan(GATHER.maxWaitMs + 2000);
  });

  it.concurrent('a repeated submission (waiting, in a Message Batch, answered) is sent and paid once', async () => {
    const model = newModel('repeat');
    held.add(model);
    const t = await gather.start(input(model), answer('once'));
    await until(async () => (await status(gather, model))?.pending.requests === 1, 'the request to wait in the collector');
    const customId = t.claude[0]!.customId!;
    const handle = collector(gather, model);

    // Waiting to be sent: the same custom_id again, signalled and signal-with-started as a retried submit does.
    const turn = await turnRef(t);
    const again: CollectorRequest = { entry: { batchRequest: customId, params: { model, again: true }, bytes: 20 }, turn };
    await handle.signal(messageBatchRequestSignal, again);
    const start: CollectorInput = {
      taskQueue: gather.taskQueue,
      model,
      settings: { ...SCRIPTED_MESSAGE_BATCH_SETTINGS, ...GATHER, storesPayloads: false },
      batches: [],
      pending: [],
      totals: ZERO_COLLECTOR_TOTALS,
      answered: [],
    };
    await gather.client.workflow.signalWithStart('messageBatchCollector', {
      workflowId: gather.collectorId(model),
      taskQueue: gather.taskQueue,
      args: [start],
      signal: messageBatchRequestSignal,
      signalArgs: [again],
    });
    expect((await status(gather, model))!.pending.requests).toBe(1);

    await until(async () => (await status(gather, model))?.batches.length === 1, 'its Message Batch');
    const [batch] = batchesOf(gather, model);
    expect(batch!.customIds).toEqual([customId]);
    expect(batch!.entries[0]!.params).not.toHaveProperty('again');

    // In a Message Batch: the very same entry again.
    await handle.signal(messageBatchRequestSignal, { entry: batch!.entries[0]!, turn });
    expect((await status(gather, model))!.pending.requests).toBe(0);
    held.delete(model);
    expect((await t.result()).response.conversation).toBe('once');

    // Answered: once more.
    await until(async () => (await status(gather, model))?.batches.length === 0, 'its Message Batch to be delivered');
    await handle.signal(messageBatchRequestSignal, { entry: batch!.entries[0]!, turn });
    expect((await status(gather, model))!.pending.requests).toBe(0);

    expect(await handle.result()).toMatchObject({ batches: 1, requests: 1, succeeded: 1 });
    expect(batchesOf(gather, model)).toHaveLength(1);
    expect(batch!.deliveries).toBe(1);
  });

  it.concurrent('a repeated submission arriving while its Message Batch is being created is not sent again', async () => {
    const model = newModel('repeat-creating');
    const create = holdCreate(model);
    try {
      const t = await turnSide.start(input(model), answer('once'));
      await until(() => create.started, 'createMessageBatch to start');
      const customId = t.claude[0]!.customId!;
      await collector(turnSide, model).signal(messageBatchRequestSignal, {
        entry: { batchRequest: customId, params: { model, again: true }, bytes: 20 },
        turn: await turnRef(t),
      });
      create.release();
      expect((await t.result()).response.conversation).toBe('once');
      await until(async () => {
        const s = await status(turnSide, model);
        return s?.pending.requests === 0 && s.batches.length === 0;
      }, 'nothing left to send or to wait for');
      expect(batchesOf(turnSide, model).map((b) => b.customIds)).toEqual([[customId]]);
      expect((await status(turnSide, model))!.totals).toMatchObject({ batches: 1, requests: 1 });
    } finally {
      create.release();
    }
  });
});

describe('withdrawn requests', () => {
  it.concurrent('a request withdrawn (its turn cancelled) while it waits to be sent is never sent', async () => {
    const model = newModel('withdraw-pending');
    const t = await withdraw.start(input(model), answer('never sent'));
    await until(async () => (await status(withdraw, model))?.pending.requests === 1, 'the request to wait in the collector');
    await cancelled(t);
    expect((await status(withdraw, model))!.pending).toEqual({ requests: 0, byParent: {} });

    expect(await collector(withdraw, model).result()).toMatchObject({ batches: 0, requests: 0 });
    expect(withdraw.messageBatches.filter((b) => b.customIds.includes(t.claude[0]!.customId!))).toEqual([]);
    const { events } = await collector(withdraw, model).fetchHistory();
    expect(events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
  });

  it.concurrent('a cancelled turn withdraws its request from its Message Batch: its result is discarded, counted, and the batch is not cancelled for the others', async () => {
    const model = newModel('withdraw-one');
    held.add(model);
    const [gone, stays] = await Promise.all([withdraw.start(input(model), answer('discarded')), withdraw.start(input(model), answer('delivered'))]);
    await until(async () => (await status(withdraw, model))?.batches.length === 1, 'the Message Batch of both');
    await cancelled(gone!);
    await until(async () => (await status(withdraw, model))?.batches[0]?.withdrawn === 1, 'the withdrawal to be recorded');
    held.delete(model);

    expect((await stays!.result()).response.conversation).toBe('delivered');
    const totals = await collector(withdraw, model).result();
    expect(totals).toMatchObject({ batches: 1, requests: 2, discarded: 1 });
    const [batch] = batchesOf(withdraw, model);
    expect(batch).toMatchObject({ cancelled: false, deliveries: 1 });
    expect(batch!.customIds).toHaveLength(2);
  });

  it.concurrent('a Message Batch whose every request was withdrawn is cancelled; its results are discarded', async () => {
    const model = newModel('withdraw-all');
    held.add(model);
    const both = await Promise.all([withdraw.start(input(model), answer('a')), withdraw.start(input(model), answer('b'))]);
    await until(async () => (await status(withdraw, model))?.batches.length === 1, 'the Message Batch of both');
    await cancelled(both[0]!);
    expect(batchesOf(withdraw, model)[0]!.cancelled).toBe(false);
    await cancelled(both[1]!);
    await until(() => batchesOf(withdraw, model)[0]?.cancelled === true, 'cancelMessageBatch');

    const totals = await collector(withdraw, model).result();
    expect(totals).toMatchObject({ batches: 1, requests: 2, discarded: 2 });
    const { events } = await collector(withdraw, model).fetchHistory();
    expect(scheduled(events!, 'cancelMessageBatch')).toHaveLength(1);
    held.delete(model);
  });

  it.concurrent('a request withdrawn while its Message Batch is being created counts as withdrawn: a batch of only withdrawn requests is cancelled', async () => {
    const model = newModel('withdraw-creating');
    held.add(model);
    const create = holdCreate(model);
    try {
      const both = await Promise.all([withdraw.start(input(model), answer('a')), withdraw.start(input(model), answer('b'))]);
      await until(() => create.started, 'createMessageBatch to start');
      await Promise.all(both.map((t) => cancelled(t)));
      create.release();
      await until(async () => (await status(withdraw, model))?.batches.length === 1, 'the Message Batch');
      expect((await status(withdraw, model))!.batches[0]!.withdrawn).toBe(2);
      await until(() => batchesOf(withdraw, model)[0]?.cancelled === true, 'cancelMessageBatch', 5000);
      expect(await collector(withdraw, model).result()).toMatchObject({ batches: 1, requests: 2, discarded: 2 });
    } finally {
      create.release();
      held.delete(model);
    }
  });
});

describe("the turn's side", () => {
  const overloaded: ClaudeFailure = { fail: { type: 'ClaudeOverloaded', message: 'Overloaded' } };
  const invalid: ClaudeFailure = { fail: { type: 'ClaudeInvalidRequest', message: 'messages.0: bad', nonRetryable: true } };
  const expired: ClaudeFailure = { fail: { type: BatchedOutcomeType.Expired, message: 'the request expired' } };

  it.concurrent('a retryable failure is submitted again, with a new custom_id (attempt + 1), into a later Message Batch after a backoff', async () => {
    const model = newModel('retryable');
    const t = await turnSide.start(input(model), { claude: [overloaded, reply([text('second time')])] });
    const result = await t.result();
    expect(result).toMatchObject({ stopReason: 'completed', steps: 1 });
    expect(result.response.conversation).toBe('second time');
    const run = await runOf(t);
    const ids = [batchCustomId(t.workflowId, run, '1.1'), batchCustomId(t.workflowId, run, '1.2')];
    expect(t.claude.map((r) => [r.step, r.customId])).toEqual([
      [1, ids[0]],
      [1, ids[1]],
    ]);
    expect(batchesOf(turnSide, model).map((b) => b.customIds)).toEqual([[ids[0]], [ids[1]]]);
    const { events } = await t.handle.fetchHistory();
    expect(timers(events!).map((e) => durationMs(e.timerStartedEventAttributes!.startToFireTimeout))).toEqual([1000]);
    await until(async () => (await status(turnSide, model))?.totals.succeeded === 1, 'the delivery to be counted');
    expect((await status(turnSide, model))!.totals).toMatchObject({ batches: 2, requests: 2, errored: 1, succeeded: 1 });
  });

  it.concurrent('a final failure fails the turn with its type, without submitting again', async () => {
    const model = newModel('final');
    const t = await turnSide.start(input(model), { claude: [invalid, reply([text('unreached')])] });
    const failure = await failureOf(t.result());
    expect(failure.type).toBe('ClaudeInvalidRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(/^Claude call failed at step 1: messages\.0: bad/);
    expect(t.claude).toHaveLength(1);
    expect(batchesOf(turnSide, model)).toHaveLength(1);
  });

  it.concurrent('an expired request is sent once more, at once, with a new custom_id', async () => {
    const model = newModel('expired-once');
    const t = await turnSide.start(input(model), { claude: [expired, reply([text('in time')])] });
    expect((await t.result()).response.conversation).toBe('in time');
    const run = await runOf(t);
    expect(t.claude.map((r) => r.customId)).toEqual([batchCustomId(t.workflowId, run, '1.1'), batchCustomId(t.workflowId, run, '1.2')]);
    const { events } = await t.handle.fetchHistory();
    expect(timers(events!)).toEqual([]);
  });

  it.concurrent('a request that expires twice fails the turn', async () => {
    const model = newModel('expired-twice');
    const t = await turnSide.start(input(model), { claude: [expired, expired, reply([text('unreached')])] });
    const failure = await failureOf(t.result());
    expect(failure.type).toBe(BatchedOutcomeType.Expired);
    expect(failure.message).toMatch(/expired twice/);
    expect(t.claude).toHaveLength(2);
  });

  it.concurrent("a request past the turn's deadline is withdrawn and sent once more; past it again the turn fails, and both Message Batches are cancelled", async () => {
    const model = newModel('deadline');
    held.add(model);
    const t = await turnSide.start(input(model, { deadlineMs: 1000 }), { claude: [reply([text('late')]), reply([text('late again')])] });
    const failure = await failureOf(t.result());
    expect(failure.type).toBe(BatchedOutcomeType.Expired);
    expect(failure.message).toMatch(/not answered within its deadline \(1 s\).*expired twice/);
    expect(t.claude).toHaveLength(2);
    await until(() => batchesOf(turnSide, model).length === 2 && batchesOf(turnSide, model).every((b) => b.cancelled), 'both Message Batches cancelled');
    await until(async () => (await status(turnSide, model))?.totals.discarded === 2, 'both results discarded');
    held.delete(model);
  });
});

describe('ending', () => {
  it.concurrent('ends after idleMs with nothing to do, returning its totals; a later request starts it again', async () => {
    const model = newModel('idle');
    await idle.run(input(model), answer('first'));
    const first = await collector(idle, model).describe();
    const totals = await collector(idle, model).result();
    expect(totals).toEqual({ ...ZERO_COLLECTOR_TOTALS, batches: 1, requests: 1, succeeded: 1 });
    expect((await collector(idle, model, first.runId).describe()).status.name).toBe('COMPLETED');
    const { events } = await collector(idle, model, first.runId).fetchHistory();
    const delivered = completed(events!, 'deliverMessageBatchResults');
    expect(delivered).toHaveLength(1);
    const idleFor = timeOf(events![events!.length - 1]!) - timeOf(delivered[0]!);
    expect(idleFor).toBeGreaterThanOrEqual(IDLE.idleMs - 50);
    expect(idleFor).toBeLessThan(IDLE.idleMs + 2000);

    await idle.run(input(model), answer('second'));
    const second = await collector(idle, model).describe();
    expect(second.runId).not.toBe(first.runId);
    expect(await collector(idle, model).result()).toEqual({ ...ZERO_COLLECTOR_TOTALS, batches: 1, requests: 1, succeeded: 1 });
  });

  it.concurrent('waits for a Message Batch in flight past idleMs without ending and without a loop of short timers', async () => {
    const model = newModel('in-flight');
    held.add(model);
    const t = await idle.start(input(model), answer('at last'));
    await until(() => (batchesOf(idle, model)[0]?.retrieves ?? 0) >= 3, 'three polls', 15_000);
    expect((await collector(idle, model).describe()).status.name).toBe('RUNNING');
    held.delete(model);
    expect((await t.result()).response.conversation).toBe('at last'); // its result was delivered

    const { events } = await collector(idle, model).fetchHistory();
    const from = events!.indexOf(completed(events!, 'createMessageBatch')[0]!);
    const to = events!.indexOf(scheduled(events!, 'deliverMessageBatchResults')[0]!);
    expect(from).toBeGreaterThan(0);
    expect(to).toBeGreaterThan(from);
    const inFlight = events!.slice(from, to);
    const waits = timers(inFlight).map((e) => durationMs(e.timerStartedEventAttributes!.startToFireTimeout));
    const polls = batchesOf(idle, model)[0]!.retrieves;
    expect(waits.filter((ms) => ms < 1000)).toEqual([]);
    expect(waits.length).toBeLessThanOrEqual(polls);
    expect(inFlight.filter((e) => e.workflowTaskCompletedEventAttributes).length).toBeLessThanOrEqual(3 * polls);
  });
});
