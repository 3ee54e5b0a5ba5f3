/**
 * Delivering an ended Message Batch's results to their turns: the stub's Message Batches API through
 * the real SDK, and a fake Temporal client that records the signals (and answers a closed turn's
 * with WorkflowNotFoundError, as Temporal does).
 */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageBatchIndividualResponse } from '@anthropic-ai/sdk/resources/messages/batches';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import { makePriceTable } from '../../src/claude/pricing';
import { ClaudeFailureType } from '../../src/core/failure-types';
import { BatchedOutcomeType, type BatchedCallOutcome, type TurnRef } from '../../src/core/message-batches';
import { fromApiUsage } from '../../src/core/usage';
import { messageBatchResultSignal } from '../../src/core/workflow-handlers';
import { outcomeOfResult } from '../../src/message-batches/batch-outcome';
import { deliverResults, type DeliveryInput } from '../../src/message-batches/deliver-results';
import { startStubModel, type StubModel } from '../../src/stub';

const PROCESSING_MS = 30;
const step = { content: [{ type: 'text' as const, text: 'answer to {{question}}' }] };
const priced = { input: 3, output: 15 };
const prices = makePriceTable({ echo: priced, flaky: priced, expiring: priced, long: priced });

let stub: StubModel;
let client: Anthropic;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      echo: { steps: [step] },
      flaky: { steps: [step], faults: [{ step: 0, status: 529, times: -1 }] },
      expiring: { steps: [step], faults: [{ step: 0, status: 500, times: -1, batchResult: 'expired' }] },
      long: { steps: [step], faults: [{ step: 0, status: 400, times: -1, message: 'prompt is too long: 250000 tokens > 200000 maximum' }] },
    },
    messageBatches: { processingMs: PROCESSING_MS },
  });
  client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
});
afterAll(() => stub.close());
beforeEach(() => {
  stub.messageBatches.settings.processingMs = PROCESSING_MS;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Message Batch of `requests` (custom_id → model), once it has ended. */
async function endedBatch(requests: Record<string, string>): Promise<string> {
  const created = await client.messages.batches.create({
    requests: Object.entries(requests).map(([customId, model]) => ({
      custom_id: customId,
      params: { model, max_tokens: 100, messages: [{ role: 'user', content: `question ${customId}` }] },
    })),
  });
  while ((await client.messages.batches.retrieve(created.id)).processing_status !== 'ended') await sleep(10);
  return created.id;
}

async function resultsOf(batchId: string): Promise<Record<string, MessageBatchIndividualResponse>> {
  const out: Record<string, MessageBatchIndividualResponse> = {};
  for await (const r of await client.messages.batches.results(batchId)) out[r.custom_id] = r;
  return out;
}

/** What a succeeded result costs at batch prices. */
function batchCost(r: MessageBatchIndividualResponse): number {
  if (r.result.type !== 'succeeded') return 0;
  return prices.costOf(fromApiUsage(r.result.message.usage), r.result.message.model, { batch: true }).usd;
}

const turnOf = (customId: string): TurnRef => ({ workflowId: `turn ${customId}/wf`, runId: `run-${customId}` });
const turnsOf = (...ids: string[]): Record<string, TurnRef> => Object.fromEntries(ids.map((id) => [id, turnOf(id)]));

interface Sent {
  workflowId: string;
  runId: string | undefined;
  signal: string;
  outcome: BatchedCallOutcome;
}

/** A Temporal client with only `workflow.getHandle(id, runId).signal(def, arg)`; the `closed` turns are gone. */
function fakeTemporal(closed: string[] = [], fail?: (workflowId: string) => Error | undefined): { temporal: Client; sent: Sent[] } {
  const sent: Sent[] = [];
  const temporal = {
    workflow: {
      getHandle: (workflowId: string, runId?: string) => ({
        signal: async (def: SignalDefinition<[BatchedCallOutcome]>, outcome: BatchedCallOutcome) => {
          await sleep(1);
          if (closed.includes(workflowId)) throw new WorkflowNotFoundError(`workflow not found for ID: ${workflowId}`, workflowId, runId);
          const err = fail?.(workflowId);
          if (err) throw err;
          sent.push({ workflowId, runId, signal: def.name, outcome });
        },
      }),
    },
  } as unknown as Client;
  return { temporal, sent };
}

const byCustomId = (sent: Sent[]): Record<string, Sent> => Object.fromEntries(sent.map((s) => [s.outcome.customId, s]));

it('signals each waiting turn its output; a withdrawn request and a closed turn are discarded, their cost counted', async () => {
  const batchId = await endedBatch({ a: 'echo', b: 'echo', c: 'echo', d: 'echo' });
  const results = await resultsOf(batchId);
  const { temporal, sent } = fakeTemporal([turnOf('c').workflowId]);
  let progress = 0;
  const input: DeliveryInput = { batchId, turns: turnsOf('a', 'b', 'c', 'd'), withdrawn: ['b'] };
  const report = await deliverResults(input, { anthropic: client, temporal, prices, progress: () => progress++ });

  expect(sent.map((s) => s.outcome.customId).sort()).toEqual(['a', 'd']);
  for (const id of ['a', 'd']) {
    const s = byCustomId(sent)[id]!;
    const expected = outcomeOfResult(results[id]!.result, batchId, { prices });
    expect(s).toEqual({ ...turnOf(id), signal: messageBatchResultSignal.name, outcome: { customId: id, batchId, ...expected } });
    if (!('output' in s.outcome)) throw new Error('expected an output');
    expect(s.outcome.output.content).toEqual([expect.objectContaining({ type: 'text', text: `answer to question ${id}` })]);
    expect(s.outcome.output.model).toBe('echo');
    expect(s.outcome.output.costUsd).toBe(batchCost(results[id]!));
    expect(s.outcome.output.costUsd).toBeGreaterThan(0);
  }
  const discardedCost = batchCost(results.b!) + batchCost(results.c!);
  expect(discardedCost).toBeGreaterThan(0);
  expect(report).toEqual({
    succeeded: 4,
    errored: 0,
    expired: 0,
    canceled: 0,
    discarded: 2,
    discardedCostUsd: expect.closeTo(discardedCost, 12),
    foreign: 0,
    // c was answered by the API (its turn had closed): it is not paid again if submitted again.
    answered: expect.arrayContaining(['a', 'c', 'd']),
  });
  expect(report.answered).toHaveLength(3);
  expect(report.answered).not.toContain('b');
  expect(progress).toBeGreaterThanOrEqual(4);
});

it('an errored, expired or cancelled result is signalled as the failure an interactive call would be', async () => {
  const batchId = await endedBatch({ ok: 'echo', busy: 'flaky', late: 'expiring', huge: 'long' });
  const { temporal, sent } = fakeTemporal();
  const report = await deliverResults({ batchId, turns: turnsOf('ok', 'busy', 'late', 'huge'), withdrawn: [] }, { anthropic: client, temporal, prices });
  const got = byCustomId(sent);
  expect(Object.keys(got).sort()).toEqual(['busy', 'huge', 'late', 'ok']);
  expect(got.ok!.outcome).toMatchObject({ customId: 'ok', batchId, output: { model: 'echo' } });
  expect(got.busy!.outcome).toEqual({
    customId: 'busy',
    batchId,
    failure: { type: ClaudeFailureType.Overloaded, retryable: true, message: expect.stringContaining(batchId) },
  });
  expect(got.late!.outcome).toEqual({
    customId: 'late',
    batchId,
    failure: { type: BatchedOutcomeType.Expired, retryable: true, message: expect.stringContaining(batchId) },
  });
  expect(got.huge!.outcome).toEqual({
    customId: 'huge',
    batchId,
    failure: { type: ClaudeFailureType.PromptTooLong, retryable: false, message: expect.stringMatching(/prompt is too long.*Message Batch msgbatch_/) },
  });
  expect(report).toMatchObject({ succeeded: 1, errored: 2, expired: 1, canceled: 0, discarded: 0, discardedCostUsd: 0, foreign: 0 });
  expect(report.answered.sort()).toEqual(['busy', 'huge', 'late', 'ok']);

  // A batch cancelled before it was processed: its request ends the call.
  stub.messageBatches.settings.processingMs = 10_000;
  const created = await client.messages.batches.create({
    requests: [{ custom_id: 'gone', params: { model: 'echo', max_tokens: 100, messages: [{ role: 'user', content: 'q' }] } }],
  });
  await client.messages.batches.cancel(created.id);
  while ((await client.messages.batches.retrieve(created.id)).processing_status !== 'ended') await sleep(5);
  const cancelled = fakeTemporal();
  const r2 = await deliverResults({ batchId: created.id, turns: turnsOf('gone'), withdrawn: [] }, { anthropic: client, temporal: cancelled.temporal, prices });
  expect(cancelled.sent.map((s) => s.outcome)).toEqual([
    { customId: 'gone', batchId: created.id, failure: { type: BatchedOutcomeType.Canceled, retryable: false, message: expect.stringContaining(created.id) } },
  ]);
  expect(r2).toMatchObject({ canceled: 1, succeeded: 0, answered: ['gone'] });
});

it('a foreign batch (adopted by mistake): every waiting turn of ours is told its request was not sent, nothing else', async () => {
  // Another collector's batch with the same request count.
  const batchId = await endedBatch({ x: 'echo', y: 'echo', z: 'echo' });
  const { temporal, sent } = fakeTemporal();
  const report = await deliverResults({ batchId, turns: turnsOf('a', 'b', 'c'), withdrawn: [] }, { anthropic: client, temporal, prices });
  expect(sent.map((s) => s.outcome.customId).sort()).toEqual(['a', 'b', 'c']);
  for (const s of sent) {
    expect(s).toEqual({
      ...turnOf(s.outcome.customId),
      signal: messageBatchResultSignal.name,
      outcome: {
        customId: s.outcome.customId,
        batchId,
        failure: { type: BatchedOutcomeType.NotSubmitted, retryable: true, message: expect.stringContaining(batchId) },
      },
    });
  }
  expect(BatchedOutcomeType.NotSubmitted).toBe('ClaudeBatchNotSubmitted');
  expect(report).toEqual({ succeeded: 0, errored: 0, expired: 0, canceled: 0, discarded: 0, discardedCostUsd: 0, foreign: 3, answered: [] });

  // A withdrawn turn is not told; one of ours among foreign results is sent again too, not answered.
  const mixed = await endedBatch({ a: 'echo', q: 'echo' });
  const again = fakeTemporal();
  const r2 = await deliverResults({ batchId: mixed, turns: turnsOf('a', 'b', 'c'), withdrawn: ['c'] }, { anthropic: client, temporal: again.temporal, prices });
  expect(again.sent.map((s) => [s.outcome.customId, 'failure' in s.outcome && s.outcome.failure.type]).sort()).toEqual([
    ['a', BatchedOutcomeType.NotSubmitted],
    ['b', BatchedOutcomeType.NotSubmitted],
  ]);
  expect(r2).toMatchObject({ foreign: 1, succeeded: 0, answered: [] });
});

it('a request of ours missing from the results goes back to its turn to be sent again', async () => {
  const batchId = await endedBatch({ a: 'echo', b: 'echo' });
  const { temporal, sent } = fakeTemporal();
  const report = await deliverResults({ batchId, turns: turnsOf('a', 'b', 'c'), withdrawn: [] }, { anthropic: client, temporal, prices });
  const got = byCustomId(sent);
  expect(Object.keys(got).sort()).toEqual(['a', 'b', 'c']);
  expect('output' in got.a!.outcome && 'output' in got.b!.outcome).toBe(true);
  expect(got.c!.outcome).toMatchObject({ failure: { type: BatchedOutcomeType.NotSubmitted, retryable: true } });
  expect(report).toMatchObject({ succeeded: 2, foreign: 0 });
  expect(report.answered.sort()).toEqual(['a', 'b']);
});

it('a suspected duplicate delivers nothing; when it held our requests, all of them are discarded at their cost', async () => {
  const batchId = await endedBatch({ a: 'echo', b: 'echo', c: 'flaky' });
  const results = await resultsOf(batchId);
  const { temporal, sent } = fakeTemporal();
  const report = await deliverResults(
    { batchId, turns: turnsOf('a', 'b', 'c'), withdrawn: ['b'], duplicateOf: 'msgbatch_adopted' },
    { anthropic: client, temporal, prices },
  );
  expect(sent).toEqual([]);
  const cost = batchCost(results.a!) + batchCost(results.b!);
  expect(cost).toBeGreaterThan(0);
  expect(report).toEqual({
    succeeded: 0,
    errored: 0,
    expired: 0,
    canceled: 0,
    discarded: 3,
    discardedCostUsd: expect.closeTo(cost, 12),
    foreign: 0,
    answered: [],
  });

  // A suspect that was another collector's: not ours, nothing discarded, nothing signalled.
  const other = await endedBatch({ x: 'echo', y: 'echo', z: 'echo' });
  const r2 = await deliverResults({ batchId: other, turns: turnsOf('a', 'b', 'c'), withdrawn: [], duplicateOf: batchId }, { anthropic: client, temporal, prices });
  expect(sent).toEqual([]);
  expect(r2).toEqual({ succeeded: 0, errored: 0, expired: 0, canceled: 0, discarded: 0, discardedCostUsd: 0, foreign: 3, answered: [] });
});

it('a signal that fails for another reason than a closed turn fails the delivery (the activity retries it)', async () => {
  const batchId = await endedBatch({ a: 'echo', b: 'echo' });
  const { temporal } = fakeTemporal([], (workflowId) => (workflowId === turnOf('b').workflowId ? new Error('deadline exceeded') : undefined));
  await expect(deliverResults({ batchId, turns: turnsOf('a', 'b'), withdrawn: [] }, { anthropic: client, temporal, prices })).rejects.toThrow('deadline exceeded');
});
