/**
 * A batch whose Claude calls go through the Message Batches API: the real dev server, the real
 * everything MCP server, the stub's Batches API through the real SDK, the workers as `mcp-turns
 * worker` assembles them.
 */
import { runBatch, type BatchItemOutcome } from '../../src/client/batch-client';
import { executeChatTurn } from '../../src/client/chat-turn-client';
import type { Scenario } from '../../src/stub';
import { everythingStdio } from '../support/mcp-servers';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';

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

let h: TurnHarness;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: { 'two-rounds': twoRounds },
    defaultScenario: 'two-rounds',
    servers: { everything: everythingStdio() },
    claude: { maxConcurrentCalls: 40, promptCaching: false, messageBatches: { maxWaitMs: 1500, pollInitialMs: 300, pollMaxMs: 1000 } },
  });
  h.stub.messageBatches.settings.processingMs = 500;
});

afterAll(async () => {
  await h?.close();
});

const QUERIES = Number(process.env.MCP_TURNS_TEST_MESSAGE_BATCH_QUERIES ?? 1000);

it(`${QUERIES} queries with 2 tool rounds each go through a few Message Batches per round at half the price`, async () => {
  const name = `mb-${Date.now().toString(36)}`;
  const items = Array.from({ length: QUERIES }, (_, i) => ({ id: `q${i + 1}`, input: { question: `question ${i + 1}`, model: MODEL } }));
  const outcomes: BatchItemOutcome[] = [];
  const t0 = Date.now();
  const run = runBatch(h.client, { name, items, concurrency: 50, taskQueue: h.taskQueue, messageBatches: true, onResult: (o) => void outcomes.push(o) });
  if (process.env.MB_DEBUG) {
    const timeout = new Promise((resolve) => setTimeout(resolve, Number(process.env.MB_DEBUG)));
    if ((await Promise.race([run.then(() => 'done'), timeout])) !== 'done') {
      const { collectorWorkflowId } = await import('../../src/core/message-batches');
      const collector = h.client.workflow.getHandle(collectorWorkflowId(h.taskQueue, MODEL));
      console.log('collector', JSON.stringify(await collector.describe().then((d) => d.status).catch((e) => String(e))));
      const hist = await collector.fetchHistory().catch(() => undefined);
      console.log('collector events', hist?.events?.map((e) => `${e.eventId} ${e.eventType} ${JSON.stringify(e.activityTaskFailedEventAttributes?.failure?.message ?? e.workflowTaskFailedEventAttributes?.failure?.message ?? '')}`).join('\n'));
      const turn = h.client.workflow.getHandle(`${name}-q1`);
      const th = await turn.fetchHistory();
      console.log('turn q1 events', th.events?.map((e) => `${e.eventId} ${e.eventType} ${JSON.stringify(e.activityTaskFailedEventAttributes?.failure?.message ?? e.workflowTaskFailedEventAttributes?.failure?.message ?? '')}`).join('\n'));
      console.log('stub batches', JSON.stringify(h.stub.messageBatches.batches.map((b) => ({ id: b.id, status: b.status, n: b.requests.length, fetched: b.resultsFetched }))));
      throw new Error('debug timeout');
    }
  }
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
  expect(batches.reduce((n, b) => n + b.requests.length, 0)).toBe(QUERIES * 4);
  for (const count of byRound.values()) expect(count.size).toBeLessThanOrEqual(Math.max(3, Math.ceil(QUERIES / 100)));
  expect(h.stub.messageBatches.duplicateSubmissions()).toEqual([]);

  // The same questions asked interactively cost twice as much.
  const interactive = await executeChatTurn(h.client, { question: 'question 1', model: MODEL }, { taskQueue: h.taskQueue });
  const batched = outcomes.find((o) => o.id === 'q1')!.result!;
  expect(batched.costUsd).toBeGreaterThan(0);
  expect(batched.costUsd).toBeCloseTo(interactive.costUsd / 2, 10);
  const total = outcomes.reduce((n, o) => n + (o.result?.costUsd ?? 0), 0);
  expect(total).toBeCloseTo((QUERIES * interactive.costUsd) / 2, 6);
  expect(batched.response.conversation).toContain('A: question 1');
});
