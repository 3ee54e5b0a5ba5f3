/**
 * Message Batches under kills: a worker SIGKILLed and, separately, the dev server restarted while
 * Message Batches are in flight, and a worker SIGKILLed in the window between the create call's
 * response and its record. The proof that nothing was paid twice is the stub's own log: no
 * custom_id submitted in two batches (cancelled ones aside), one batch per round of requests.
 * Each case has its own stub, task queue and worker process; the two run side by side.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { runBatch, type BatchItemOutcome } from '../../src/client/batch-client';
import { collectorWorkflowId } from '../../src/core/message-batches';
import { messageBatchesQuery } from '../../src/core/workflow-handlers';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { startStubModel, type Scenario, type StubModel } from '../../src/stub';
import { startCli } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { freePort } from '../support/ports';
import { testClient, uniqueQueue } from '../support/temporal';
import { testDataConverter } from '../support/settings';
import { startWorkerProcess } from '../support/worker-process';
import { until } from '../support/until';

jest.setTimeout(240_000);

const MODEL = 'claude-sonnet-4-6';
const twoRounds: Scenario = {
  steps: [
    { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'one {{question}}' } }] },
    { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'two {{question}}' } }] },
    { content: [{ type: 'text', text: 'answered {{toolResults}}' }] },
  ],
  formatter: { conversation: [{ type: 'text', content: 'A: {{question}}' }] },
};
// The echo calls run as activities: a worker SIGKILLed during a local call costs its turn a workflow
// task timeout (10 s), and what this suite checks is the Message Batches' fate, not the tool calls'.
const config = {
  mcp_servers: { everything: everythingStdio({ local_activity: false }) },
  claude: { messageBatches: { maxWaitMs: 1000, pollInitialMs: 300, pollMaxMs: 1000 } },
};
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-message-batches-'));
const processes: ChildProcess[] = [];
const stubs: StubModel[] = [];

afterAll(async () => {
  for (const child of processes) if (child.exitCode === null) child.kill('SIGKILL');
  for (const s of stubs) await s.close();
});

async function newStub(): Promise<StubModel> {
  const stub = await startStubModel({ scenarios: { 'two-rounds': twoRounds }, defaultScenario: 'two-rounds', messageBatches: { processingMs: 1500 } });
  stubs.push(stub);
  return stub;
}

async function worker(taskQueue: string, stub: StubModel, address?: string): Promise<ChildProcess> {
  const child = await startWorkerProcess({ config, taskQueue, stubUrl: stub.url, ...(address ? { env: { TEMPORAL_ADDRESS: address } } : {}) });
  processes.push(child);
  return child;
}

/** Every turn answered its own question, each of its four requests succeeded once, none was sent twice. */
function expectAnsweredOnce(stub: StubModel, outcomes: BatchItemOutcome[], questions: string[]): void {
  expect(outcomes.filter((o) => o.status !== 'completed').map((o) => o.error)).toEqual([]);
  expect(outcomes.map((o) => o.result!.response.conversation).sort()).toEqual(questions.map((q) => `A: ${q}`).sort());
  expect(stub.requests).toEqual([]);
  expect(stub.messageBatches.duplicateSubmissions()).toEqual([]);
  const succeeded = stub.messageBatches.batches.filter((b) => !b.canceled).flatMap((b) => b.requests.filter((r) => r.outcome === 'succeeded'));
  for (const q of questions) expect(succeeded.filter((r) => r.question === q).map((r) => `${r.kind} ${r.step}`).sort()).toEqual(['formatter 3', 'step 0', 'step 1', 'step 2']);
}

test.concurrent('a worker SIGKILLed, then the dev server restarted, while Message Batches are in flight: every turn answers, no request is sent twice', async () => {
  const stub = await newStub();
  // A dev server of this test's own, on a database file, so it can be restarted.
  const port = await freePort();
  const serverArgs = ['server', '--port', String(port), '--ui-port', String(await freePort()), '--db', path.join(dir, 'temporal.db')];
  let server = await startCli(serverArgs, /Temporal Web UI:/);
  processes.push(server.child);
  const address = `127.0.0.1:${port}`;
  const taskQueue = uniqueQueue('message-batches-kill');
  let current = await worker(taskQueue, stub, address);
  const client = new Client({ connection: await Connection.connect({ address }), ...clientStorageOptions(testDataConverter()) });
  const name = `mbk-${Date.now().toString(36)}`;
  const questions = Array.from({ length: 12 }, (_, i) => `kill ${name} ${i + 1}`);
  const outcomes: BatchItemOutcome[] = [];
  const run = runBatch(client, {
    name,
    items: questions.map((question, i) => ({ id: `k${i + 1}`, input: { question, model: MODEL } })),
    concurrency: 12,
    taskQueue,
    messageBatches: true,
    onResult: (o) => void outcomes.push(o),
  });
  const inFlight = (): boolean => stub.messageBatches.batches.some((b) => b.status !== 'ended');
  const ended = (): number => stub.messageBatches.batches.filter((b) => b.status === 'ended').length;

  // The worker dies while the first round's Message Batch is processing…
  await until(() => inFlight(), 'a Message Batch in flight', 90_000);
  current.kill('SIGKILL');
  const killedAt = ended();
  current = await worker(taskQueue, stub, address);
  // …and the dev server restarts while a later one is.
  await until(() => ended() > killedAt && inFlight(), 'a later Message Batch in flight', 90_000);
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  server = await startCli(serverArgs, /Temporal Web UI:/);
  processes.push(server.child);
  await run;

  expectAnsweredOnce(stub, outcomes, questions);
  console.log(`[message-batches] worker SIGKILLed, dev server restarted: ${stub.messageBatches.batches.length} Message Batches, ${outcomes.length} turns answered`);
  current.kill('SIGTERM');
  // Waited for: the CLI stops its dev server on SIGTERM, and afterAll's SIGKILL of a CLI still
  // stopping would leave that server running.
  server.child.kill('SIGTERM');
  await server.exited;
  await client.connection.close();
});

test.concurrent('a worker SIGKILLed between the create response and its record: the next attempt adopts the batch, nothing is paid twice', async () => {
  const stub = await newStub();
  // The create response takes 15 s: the worker is killed while it waits for it, the batch already made.
  stub.messageBatches.settings.createDelayMs = 15_000;
  const taskQueue = uniqueQueue('message-batches-create');
  const first = await worker(taskQueue, stub);
  const client = await testClient();
  const name = `mbw-${Date.now().toString(36)}`;
  const questions = Array.from({ length: 6 }, (_, i) => `window ${name} ${i + 1}`);
  const outcomes: BatchItemOutcome[] = [];
  const run = runBatch(client, {
    name,
    items: questions.map((question, i) => ({ id: `w${i + 1}`, input: { question, model: MODEL } })),
    concurrency: 6,
    taskQueue,
    messageBatches: true,
    onResult: (o) => void outcomes.push(o),
  });
  await until(() => stub.messageBatches.createsReceived === 1, 'the first create call', 90_000);
  const created = stub.messageBatches.batches[0]!;
  expect(created.createResponded).toBe(false);
  first.kill('SIGKILL');
  stub.messageBatches.settings.createDelayMs = 0;
  await worker(taskQueue, stub);
  await run;

  expectAnsweredOnce(stub, outcomes, questions);
  // The first round went out once: the batch the killed worker created, adopted by the next attempt.
  const firstRound = stub.messageBatches.batches.filter((b) => b.requests.some((r) => r.kind === 'step' && r.step === 0));
  expect(firstRound.map((b) => b.id)).toEqual([created.id]);
  expect(created.requests).toHaveLength(questions.length);
  expect(created.createResponded).toBe(false);
  const status = await client.workflow.getHandle(collectorWorkflowId(taskQueue, MODEL)).query(messageBatchesQuery);
  expect(status.totals.adopted).toBe(1);
  await client.connection.close();
});
