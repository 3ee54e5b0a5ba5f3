/**
 * A batch whose Claude calls go through the Message Batches API: the real dev server, the real
 * everything MCP server, the stub's Batches API through the real SDK, the workers as `mcp-turns
 * worker` assembles them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { batchShardWorkflowIds, runBatch, type BatchItemOutcome } from '../../src/client/batch-client';
import { cancelTurn, executeChatTurn } from '../../src/client/chat-turn-client';
import type { Scenario } from '../../src/stub';
import { collectorWorkflowId } from '../../src/core/message-batches';
import { makePriceTable } from '../../src/claude/pricing';
import { batchChildId } from '../../src/core/batch';
import { messageBatchesQuery } from '../../src/core/workflow-handlers';
import type { MessageBatchLog } from '../../src/stub';
import { everythingStdio } from '../support/mcp-servers';
import { runCli } from '../support/cli';
import { until } from '../support/until';
import { startTurnHarness, TEST_API_KEY, type TurnHarness } from '../support/turn-harness';

jest.setTimeout(300_000);

const MODEL = 'claude-sonnet-4-6';
const usage = { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
/** Two tool rounds, then the answer; fixed usage, so every turn costs the same. */
const twoRounds: Scenario = {
  steps: [
    { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'one {{question}}' } }], usage },
    { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'two {{question}}' } }], usage },
    { content: [{ type: 'text', text: 'answered {{toolResults}}' }], usage },
  ],
  formatter: { conversation: [{ type: 'text', content: 'A: {{question}}' }] },
};

/** The same, but each question's first request of step 2 ends `errored` (overloaded) in its Message Batch. */
const flaky: Scenario = { ...twoRounds, faults: [{ step: 1, status: 529, times: 1, message: 'Overloaded' }] };

/** The first request of each question ends `expired` in its Message Batch; or every one does. */
const expiresOnce: Scenario = { ...twoRounds, faults: [{ step: 0, status: 529, times: 1, batchResult: 'expired' }] };
const alwaysExpires: Scenario = { ...twoRounds, faults: [{ step: 0, status: 529, times: -1, batchResult: 'expired' }] };

const harnesses: TurnHarness[] = [];

/**
 * A worker, stub and task queue of the test's own (the stub's processing time is the test's to
 * set), so the cases run side by side. Requests are gathered for 2 s.
 */
async function harness(processingMs: number): Promise<TurnHarness> {
  const h = await startTurnHarness({
    scenarios: { 'two-rounds': twoRounds, flaky, 'expires-once': expiresOnce, 'always-expires': alwaysExpires },
    defaultScenario: 'two-rounds',
    servers: { everything: everythingStdio() },
    claude: { maxConcurrentCalls: 40, promptCaching: false, messageBatches: { maxWaitMs: 2000, pollInitialMs: 300, pollMaxMs: 1000 } },
  });
  harnesses.push(h);
  h.stub.messageBatches.settings.processingMs = processingMs;
  return h;
}

afterAll(async () => {
  for (const h of harnesses) await h.close();
});

const QUERIES = Number(process.env.MCP_TURNS_TEST_MESSAGE_BATCH_QUERIES ?? 60);
/** Queries whose step 2 errors once inside its Message Batch. */
const FLAKY = 3;

it.concurrent(`${QUERIES} queries with 2 tool rounds each go through a few Message Batches per round at half the price`, async () => {
  const h = await harness(500);
  const name = `mb-${Date.now().toString(36)}`;
  const items = Array.from({ length: QUERIES }, (_, i) => ({
    id: `q${i + 1}`,
    input: { question: i < FLAKY ? `[[scenario:flaky]] question ${i + 1}` : `question ${i + 1}`, model: MODEL },
  }));
  const outcomes: BatchItemOutcome[] = [];
  const t0 = Date.now();
  const run = runBatch(h.client, { name, items, concurrency: 50, taskQueue: h.taskQueue, messageBatches: true, onResult: (o) => void outcomes.push(o) });
  await run;
  const seconds = (Date.now() - t0) / 1000;

  expect(outcomes.filter((o) => o.status !== 'completed').map((o) => o.error)).toEqual([]);
  expect(outcomes).toHaveLength(QUERIES);
  // Nothing reached /v1/messages directly.
  expect(h.stub.requests.filter((r) => r.path.startsWith('/v1/messages'))).toEqual([]);
  const batches = h.stub.messageBatches.batches;
  const byRound = new Map<string, Set<string>>();
  for (const b of batches) for (const r of b.requests) {
    const round = r.kind === 'formatter' ? 'formatter' : `step ${r.step + 1}`;
    if (!byRound.has(round)) byRound.set(round, new Set());
    byRound.get(round)!.add(b.id);
  }
  const rounds = Object.fromEntries([...byRound].map(([k, v]) => [k, v.size]));
  console.log(`${QUERIES} queries in ${seconds.toFixed(1)} s: ${batches.length} Message Batches, by round ${JSON.stringify(rounds)}, requests ${batches.reduce((n, b) => n + b.requests.length, 0)}`);
  // Four requests a turn, and one more for each flaky question's step 2, sent again after it errored.
  expect(batches.reduce((n, b) => n + b.requests.length, 0)).toBe(QUERIES * 4 + FLAKY);
  for (let i = 1; i <= FLAKY; i++) {
    const question = `[[scenario:flaky]] question ${i}`;
    const secondStep = batches.flatMap((b) => b.requests.filter((r) => r.question === question && r.kind === 'step' && r.step === 1).map((r) => ({ batch: b.id, ...r })));
    expect(secondStep.map((r) => r.outcome)).toEqual(['errored', 'succeeded']);
    expect(secondStep[0]!.error).toContain('Overloaded');
    expect(secondStep[1]!.batch).not.toBe(secondStep[0]!.batch);
    expect(secondStep[1]!.customId).not.toBe(secondStep[0]!.customId);
    expect(outcomes.find((o) => o.id === `q${i}`)?.status).toBe('completed');
  }
  // Requests are gathered for 2 s: a round's requests fill a few Message Batches, never one each.
  for (const count of byRound.values()) expect(count.size).toBeLessThanOrEqual(6);
  expect(h.stub.messageBatches.duplicateSubmissions()).toEqual([]);
  // Each turn's batch learned that it waits for Message Batches from its first submission, grouped
  // with other turns' in a few signals; no turn signalled its batch itself.
  const told = new Set<string>();
  let waitingSignals = 0;
  for (const shard of batchShardWorkflowIds(name, 50, QUERIES)) {
    for (const e of (await h.client.workflow.getHandle(shard).fetchHistory()).events ?? []) {
      const signaled = e.workflowExecutionSignaledEventAttributes;
      if (signaled?.signalName !== 'turnWaiting') continue;
      waitingSignals++;
      for (const p of signaled.input?.payloads ?? []) {
        const report = JSON.parse(Buffer.from(p.data!).toString()) as { workflowId: string; waiting: boolean; for: string };
        expect(report).toMatchObject({ waiting: true, for: 'message-batch' });
        told.add(report.workflowId);
      }
    }
  }
  expect([...told].sort()).toEqual(items.map((i) => batchChildId(name, i.id)).sort());
  expect(waitingSignals).toBeLessThan(QUERIES / 4);
  const child = await h.client.workflow.getHandle(batchChildId(name, items[FLAKY]!.id)).fetchHistory();
  expect(child.events!.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
  // The worker that delivered each formatter's reply planned over it (it had submitted the request)
  // and sent the turn its answer: the turn's last event before it ends is that signal's task.
  const finishedByDelivery = await Promise.all(
    items.map(async (item) => {
      const events = (await h.client.workflow.getHandle(batchChildId(name, item.id)).fetchHistory()).events ?? [];
      const results = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'messageBatchResult');
      const last = results.at(-1)!.workflowExecutionSignaledEventAttributes!.input!.payloads![0]!;
      const markersAfter = events.slice(events.indexOf(results.at(-1)!)).filter((e) => e.markerRecordedEventAttributes);
      return 'done' in (JSON.parse(Buffer.from(last.data!).toString()) as object) && markersAfter.length === 0;
    }),
  );
  expect(finishedByDelivery.filter(Boolean)).toHaveLength(QUERIES);
  // The API key never enters the collector's history, nor any payload it stored.
  const collectorHistory = await h.client.workflow.getHandle(collectorWorkflowId(h.taskQueue, MODEL)).fetchHistory();
  expect(JSON.stringify(collectorHistory)).not.toContain(TEST_API_KEY);
  const store = process.env.MCP_TURNS_TEST_PAYLOAD_DIR!;
  for (const file of fs.readdirSync(store, { recursive: true }) as string[]) {
    const full = path.join(store, file);
    if (fs.statSync(full).isFile()) expect(fs.readFileSync(full).includes(TEST_API_KEY)).toBe(false);
  }

  // The same questions asked interactively cost twice as much (three of them, of different lengths)…
  const compared = [FLAKY + 1, 10, QUERIES].map((n) => `q${n}`);
  const interactive = await Promise.all(
    compared.map((id) => executeChatTurn(h.client, { question: items.find((i) => i.id === id)!.input.question, model: MODEL }, { taskQueue: h.taskQueue })),
  );
  compared.forEach((id, i) => {
    const batchedCost = outcomes.find((o) => o.id === id)!.result!.costUsd;
    expect(batchedCost).toBeGreaterThan(0);
    expect(batchedCost).toBeCloseTo(interactive[i]!.costUsd / 2, 10);
  });
  // …and every turn's reported cost is its usage at batch prices: half the standard price of the same usage.
  const prices = makePriceTable();
  const reported = outcomes.reduce((n, o) => n + o.result!.costUsd, 0);
  const standard = outcomes.reduce((n, o) => n + prices.costOf(o.result!.usage, MODEL).usd, 0);
  expect(reported).toBeCloseTo(standard / 2, 6);
  console.log(`cost of ${QUERIES} turns: $${reported.toFixed(4)} through Message Batches, $${standard.toFixed(4)} at standard prices`);
  const batched = outcomes.find((o) => o.id === `q${FLAKY + 1}`)!.result!;
  const plain = FLAKY + 1;
  expect(batched.response.conversation).toContain(`A: question ${plain}`);
});

it.concurrent('a cancelled turn withdraws its request: the Message Batch goes on for the others, the result is discarded and still counted; cancelling the whole batch cancels its Message Batches', async () => {
  // Each batch takes 8 s: the cancellation reaches the second one long before it ends.
  const h = await harness(8000);
  const collector = h.client.workflow.getHandle(collectorWorkflowId(h.taskQueue, MODEL));
  const name = `mbc-${Date.now().toString(36)}`;
  const items = Array.from({ length: 6 }, (_, i) => ({ id: `c${i + 1}`, input: { question: `cancel ${name} ${i + 1}`, model: MODEL } }));
  const outcomes: BatchItemOutcome[] = [];
  // The batch ends cancelled below: its run rejects then (handled from the start).
  const run = runBatch(h.client, { name, items, concurrency: 6, taskQueue: h.taskQueue, messageBatches: true, onResult: (o) => void outcomes.push(o) }).then(
    () => 'completed',
    (err: unknown) => String(err),
  );
  const inBatch = (): MessageBatchLog | undefined => h.stub.messageBatches.batches.find((b) => b.requests.some((r) => r.question.startsWith(`cancel ${name}`)));
  await until(() => inBatch()?.requests.length === 6, 'the six first requests in one Message Batch');
  const first = inBatch()!;
  // The collector tells the API's own request counts of the Message Batch (the CLI's ETA through Message Batches).
  await until(
    async () => (await collector.query(messageBatchesQuery)).batches.find((b) => b.id === first.id)?.counts?.processing === 6,
    "the Message Batch's request counts in the collector's status",
  );

  // One turn cancelled: its request cannot leave the shared batch; the others are answered.
  await cancelTurn(h.client.workflow.getHandle(batchChildId(name, 'c1')));
  await until(() => outcomes.some((o) => o.id === 'c1'), 'c1 reported');
  expect(outcomes.find((o) => o.id === 'c1')?.status).toBe('failed');
  // This test's own collector: its totals are this test's.
  await until(async () => (await collector.query(messageBatchesQuery)).totals.discarded > 0, 'the cancelled turn\'s result discarded');
  const after = await collector.query(messageBatchesQuery);
  expect(after.totals.discarded).toBe(1);
  expect(after.totals.discardedCostUsd).toBeGreaterThan(0);
  expect(first.canceled).toBe(false);

  // The next round's batches hold the five left; cancelling the whole batch cancels them at Anthropic.
  const secondRound = (): MessageBatchLog[] => h.stub.messageBatches.batches.filter((b) => b !== first);
  await until(() => secondRound().reduce((n, b) => n + b.requests.length, 0) === 5, 'the five second requests in Message Batches');
  for (const id of batchShardWorkflowIds(name, 6, items.length)) await h.client.workflow.getHandle(id).cancel();
  await until(() => secondRound().every((b) => b.canceled), 'the Message Batches cancelled');
  expect(await run).toContain('cancelled');
  expect(secondRound().flatMap((b) => b.requests).every((r) => r.outcome === 'canceled' || r.outcome === undefined)).toBe(true);
  expect(h.stub.requests.filter((r) => JSON.stringify(r.body).includes(`cancel ${name}`))).toEqual([]);
});

it.concurrent('an expired request is sent once more in a new Message Batch; a second expiry, or the deadline passed twice, fails the turn and says so', async () => {
  const h = await harness(300);
  const name = `mbe-${Date.now().toString(36)}`;
  const items = [
    { id: 'once', input: { question: `[[scenario:expires-once]] ${name}`, model: MODEL } },
    { id: 'twice', input: { question: `[[scenario:always-expires]] ${name}`, model: MODEL } },
  ];
  const outcomes: BatchItemOutcome[] = [];
  await runBatch(h.client, { name, items, concurrency: 2, taskQueue: h.taskQueue, messageBatches: true, onResult: (o) => void outcomes.push(o) });
  const firstStep = (question: string) =>
    h.stub.messageBatches.batches.flatMap((b) => b.requests.filter((r) => r.question === question && r.kind === 'step' && r.step === 0).map((r) => ({ batch: b.id, outcome: r.outcome })));
  expect(outcomes.find((o) => o.id === 'once')?.status).toBe('completed');
  const once = firstStep(items[0]!.input.question);
  expect(once.map((r) => r.outcome)).toEqual(['expired', 'succeeded']);
  expect(once[0]!.batch).not.toBe(once[1]!.batch);
  const twice = outcomes.find((o) => o.id === 'twice')!;
  expect(twice.status).toBe('failed');
  expect(twice.error).toMatch(/ClaudeBatchExpired.*expired.*it expired twice, so the call fails|expired twice/);
  expect(firstStep(items[1]!.input.question).map((r) => r.outcome)).toEqual(['expired', 'expired']);

  // A deadline of 1 s, shorter than the collector's gathering: the request is withdrawn (before its
  // Message Batch is sent, as a rule), sent again, withdrawn again; the turn fails and says why.
  h.stub.messageBatches.settings.processingMs = 10_000; // if sent, never answered in time
  const late = `mbd-${Date.now().toString(36)}`;
  const lateOutcomes: BatchItemOutcome[] = [];
  await runBatch(h.client, {
    name: late,
    items: [{ id: 'late', input: { question: `deadline ${late}`, model: MODEL } }],
    taskQueue: h.taskQueue,
    messageBatches: { deadlineMs: 1000 },
    onResult: (o) => void lateOutcomes.push(o),
  });
  expect(lateOutcomes[0]?.status).toBe('failed');
  expect(lateOutcomes[0]?.error).toContain('not answered within its deadline (1 s); it expired twice');
});

it.concurrent('`mcp-turns batch --message-batches`: the CLI shows what waits for which Message Batch, and the summary says batch prices', async () => {
  // The first Message Batch takes 11 s, longer than two of the CLI's 5 s asks of where turns wait, so
  // one ask sees it submitted and the next progress line shows it; the later rounds are quick.
  const h = await harness(11_000);
  void until(() => h.stub.messageBatches.batches.length > 0, 'the first Message Batch', 110_000).then(
    () => (h.stub.messageBatches.settings.processingMs = 500),
    () => undefined,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-mb-cli-'));
  const file = path.join(dir, 'queries.jsonl');
  fs.writeFileSync(file, [1, 2, 3].map((i) => JSON.stringify({ question: `cli ${i} ${path.basename(dir)}`, model: MODEL })).join('\n') + '\n');
  const run = await runCli(['batch', file, '--message-batches', '--task-queue', h.taskQueue, '--address', process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!], { timeoutMs: 120_000 });
  expect(run.code).toBe(0);
  expect(run.stderr).toContain('through Message Batches');
  expect(run.stderr).toMatch(/\d+ turns? waiting for Claude batch msgbatch_\S+ \(\d+ requests?, submitted \d+ (s|min) ago\)/);
  expect(run.stdout).toContain('3 answered, 0 failed');
  // The stub's Message Batches answer every request at once, so their progress never tells an ETA,
  // and the rate of results (which comes in bursts) does not stand in for it.
  expect(run.stderr).not.toMatch(/ETA/);
  expect(run.stdout).toContain('(Message Batches: half the standard price)');
});
