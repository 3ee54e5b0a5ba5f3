/**
 * Streaming when processes die: the subscriber always runs in the test process, on no worker.
 * - A worker SIGKILLed in the middle of a streamed reply, then restarted: the stream says the step's
 *   deltas so far are void (`data-retry`), streams the whole reply again, and is the same, event for
 *   event and offset for offset, as the stream read after the turn has closed.
 * - The Temporal server (a dev server of this file's own, with a database file) stopped and started
 *   again while a subscriber waits in the middle of a reply: the subscriber resumes with no gap and
 *   no duplicate, and its stream is the one read after close.
 * - Two worker processes on one task queue: a streamed turn with a tool call reaches the subscriber
 *   whole, and agrees with the result.
 * The three run side by side: each has its own task queue and workers (the restarted server is this
 * file's own).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { startStubModel, type Scenario, type StubModel } from '../../src/stub';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { subscribeTurn } from '../../src/client/subscribe';
import type { TurnStreamEvent } from '../../src/core/stream-events';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server';
import { startWorkerProcess } from '../support/worker-process';
import { everythingStdio } from '../support/mcp-servers';
import { testTemporalCli } from '../support/temporal-cli';
import { freePort } from '../support/ports';
import { testClient, uniqueQueue } from '../support/temporal';
import { testDataConverter } from '../support/settings';
import { questionOf } from '../support/turn-harness';
import { collect, deltasOf, expectDense, expectEchoThenReply, finalText } from '../support/stream-events';

jest.setTimeout(80_000);

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, name, input });
const FORTY_WORDS = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(' ');
const ANSWER = 'The forty words came through, whatever happened to the processes on the way.';

const scenarios: Record<string, Scenario> = {
  'killed-mid-reply': {
    steps: [{ content: [text(FORTY_WORDS)], streamDelayMs: 100 }],
    formatter: { conversation: [{ type: 'text', content: ANSWER }] },
    formatterStreamDelayMs: 20,
  },
  'server-restarted-mid-reply': {
    steps: [{ content: [text(FORTY_WORDS)], streamDelayMs: 200 }],
    formatter: { conversation: [{ type: 'text', content: ANSWER }] },
    formatterStreamDelayMs: 20,
  },
  'two-workers': {
    streamDelayMs: 20,
    steps: [
      { content: [text('Let me echo that first.'), use('everything__echo', { message: 'alpha' })] },
      { content: [text(FORTY_WORDS)], streamDelayMs: 50 },
    ],
    formatter: { conversation: [{ type: 'text', content: `The echo said alpha. ${ANSWER}` }] },
  },
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-stream-durable-'));
let stub: StubModel;
let client: Client;
const children: ChildProcess[] = [];

beforeAll(async () => {
  stub = await startStubModel({ scenarios });
  client = await testClient();
});

afterAll(async () => {
  await Promise.all(children.map((c) => stopWorker(c)));
  await client?.connection.close();
  await stub?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function startWorker(opts: {
  taskQueue: string;
  servers?: Record<string, unknown>;
  address?: string;
}): Promise<ChildProcess> {
  const child = await startWorkerProcess({
    config: { mcp_servers: opts.servers ?? {} },
    taskQueue: opts.taskQueue,
    stubUrl: stub.url,
    ...(opts.address ? { env: { TEMPORAL_ADDRESS: opts.address } } : {}),
  });
  children.push(child);
  return child;
}

async function stopWorker(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** What the stub answered for `scenario`'s step 0 asked `question`. */
const stepCalls = (scenario: string, question: string) =>
  stub.requests.filter(
    (r) => r.scenario === scenario && r.kind === 'step' && r.step === 0 && questionOf(r) === question,
  );

test.concurrent('a worker SIGKILLed in the middle of a streamed reply, then restarted: the step is retried and streamed whole again, live as after close', async () => {
  const taskQueue = uniqueQueue('stream-kill');
  const question = `forty words, killed ${Date.now()}`;
  let worker = await startWorker({ taskQueue });
  const handle = await startChatTurn(
    client,
    { question, model: 'killed-mid-reply', stream: true },
    { taskQueue, workflowId: `stream-kill-${Date.now()}` },
  );
  const t0 = Date.now();
  let killedAt: { offset: number; ms: number } | undefined;
  let restarted: Promise<void> | undefined;
  let retryAt: number | undefined;
  let seen = 0;
  const live = await collect(subscribeTurn(client, handle.workflowId), (e) => {
    if (e.type === 'data-retry' && retryAt === undefined) retryAt = Date.now();
    if (restarted || e.type !== 'text-delta' || e.id !== 'step-1' || ++seen < 5) return;
    killedAt = { offset: e.offset, ms: Date.now() };
    restarted = (async () => {
      await stopWorker(worker, 'SIGKILL');
      worker = await startWorker({ taskQueue });
    })();
  });
  await restarted;
  const result: ChatTurnResult = await handle.result();
  await stopWorker(worker);

  expect(killedAt).toBeDefined();
  expectDense(live);
  // Five deltas of the reply reached the subscriber before the kill, then its retry voided them.
  const retries = live.filter(
    (e): e is Extract<TurnStreamEvent, { type: 'data-retry' }> =>
      e.type === 'data-retry' && e.discard.includes('step-1'),
  );
  expect(retries.length).toBeGreaterThanOrEqual(1);
  const retry = retries[retries.length - 1]!;
  expect(retry).toMatchObject({ attempt: 2, step: 1 });
  expect(retry.offset).toBeGreaterThan(killedAt!.offset);
  const before = deltasOf(live, 'step-1').filter((e) => e.offset < retries[0]!.offset);
  expect(before.length).toBeGreaterThanOrEqual(5);
  expect(before.every((e) => e.attempt === 1)).toBe(true);
  expect(FORTY_WORDS.startsWith(before.map((e) => e.delta).join(''))).toBe(true);
  // Then the whole reply again, streamed by the new worker's attempt.
  const after = deltasOf(live, 'step-1').filter((e) => e.offset > retry.offset);
  expect(after.length).toBeGreaterThan(5);
  expect(after.every((e) => e.attempt === 2)).toBe(true);
  expect(finalText(live, 'step-1')).toBe(FORTY_WORDS);
  expect(finalText(live, 'answer')).toBe(result.response.conversation);
  expect(result.response.conversation).toBe(ANSWER);
  expect(live.filter((e) => e.type === 'start-step')).toHaveLength(1);
  expect(live.slice(-2).map((e) => e.type)).toEqual(['data-answer', 'finish']);
  expect(live[live.length - 1]).toMatchObject({
    type: 'finish',
    status: 'completed',
    stopReason: 'completed',
  });
  // The stub was asked twice: the call the kill cut off, and the retry.
  const calls = stepCalls('killed-mid-reply', question);
  expect(calls).toHaveLength(2);
  expect(calls[0]!.endedAt).toBeLessThanOrEqual(calls[1]!.startedAt);

  // After close, from offset 0: the same events at the same offsets.
  expect(await collect(subscribeTurn(client, handle.workflowId, { fromOffset: 0 }))).toEqual(live);
  console.log(
    `[stream-durability] kill: ${before.length} deltas before the kill (at ${killedAt!.ms - t0} ms), ` +
      `data-retry ${retryAt! - killedAt!.ms} ms after it, ${after.length} deltas after; ${live.length} events in ${Date.now() - t0} ms`,
  );
});

test.concurrent('the Temporal server restarted while a subscriber waits mid-reply: the subscriber resumes, no gap, no duplicate, the stream read after close', async () => {
  // A dev server of this test's own (never the shared one), on a database file that the restart keeps.
  const serverOptions = {
    cliPath: testTemporalCli().path,
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'restarted.db'),
  };
  let server: DevServer = await startDevServer(serverOptions);
  const connection = await Connection.connect({ address: server.address });
  const own = new Client({ connection, namespace: 'default', ...clientStorageOptions(testDataConverter()) });
  const taskQueue = uniqueQueue('stream-restart');
  const question = `forty words, server restarted ${Date.now()}`;
  const worker = await startWorker({ taskQueue, address: server.address });
  try {
    const handle = await startChatTurn(
      own,
      { question, model: 'server-restarted-mid-reply', stream: true },
      { taskQueue, workflowId: `stream-restart-${Date.now()}` },
    );
    const t0 = Date.now();
    const restart: { offset?: number; stoppedAt?: number; answeringAt?: number } = {};
    let restarted: Promise<void> | undefined;
    let seen = 0;
    const afterRestart: TurnStreamEvent[] = [];
    const live = await collect(subscribeTurn(own, handle.workflowId), (e) => {
      if (restart.answeringAt !== undefined) afterRestart.push(e);
      if (restarted || e.type !== 'text-delta' || e.id !== 'step-1' || ++seen < 5) return;
      restart.offset = e.offset;
      restarted = (async () => {
        await server.stop();
        restart.stoppedAt = Date.now();
        server = await startDevServer(serverOptions);
        restart.answeringAt = Date.now();
      })();
    });
    await restarted;
    const result: ChatTurnResult = await handle.result();

    expect(restart.answeringAt).toBeDefined();
    expectDense(live);
    expect(new Set(live.map((e) => e.offset)).size).toBe(live.length);
    // The reply was still streaming when the server was back, and the subscriber went on with it.
    expect(deltasOf(afterRestart, 'step-1').length).toBeGreaterThan(2);
    expect(afterRestart[0]!.offset).toBeGreaterThan(restart.offset!);
    expect(live[0]).toMatchObject({ type: 'start', question });
    expect(finalText(live, 'step-1')).toBe(FORTY_WORDS);
    expect(finalText(live, 'answer')).toBe(result.response.conversation);
    expect(live.slice(-2).map((e) => e.type)).toEqual(['data-answer', 'finish']);
    expect(live[live.length - 1]).toMatchObject({ type: 'finish', status: 'completed' });

    expect(await collect(subscribeTurn(own, handle.workflowId, { fromOffset: 0 }))).toEqual(live);
    console.log(
      `[stream-durability] restart: 5th delta at offset ${restart.offset}; server down ${restart.stoppedAt! - t0} ms in, ` +
        `answering again ${restart.answeringAt! - restart.stoppedAt!} ms later; then ${afterRestart.length} events ` +
        `from offset ${afterRestart[0]?.offset}; data-retry: ${live.filter((e) => e.type === 'data-retry').length}; ` +
        `Claude step calls: ${stepCalls('server-restarted-mid-reply', question).length}; ${live.length} events in ${Date.now() - t0} ms`,
    );
  } finally {
    await stopWorker(worker);
    await connection.close();
    await server.stop();
  }
});

test.concurrent('two worker processes on one task queue: the subscriber, on neither, gets the whole stream of each turn with a tool call', async () => {
  const taskQueue = uniqueQueue('stream-two');
  const workers = await Promise.all(
    [0, 1].map(() => startWorker({ taskQueue, servers: { everything: everythingStdio() } })),
  );
  const pids = workers.map((w) => `${w.pid}@`);
  const t0 = Date.now();
  const perTurn = await Promise.all(
    [1, 2, 3].map(async (n) => {
      const handle = await startChatTurn(
        client,
        { question: `echo alpha, on two workers (${n})`, model: 'two-workers', stream: true },
        { taskQueue, workflowId: `stream-two-${n}-${Date.now()}` },
      );
      const live = await collect(subscribeTurn(client, handle.workflowId));
      const result: ChatTurnResult = await handle.result();
      return { handle, live, result };
    }),
  );
  const perWorker: string[] = [];
  for (const { handle, live, result } of perTurn) {
    expectEchoThenReply(live, result, 'Let me echo that first.', FORTY_WORDS);
    expect(live.map((e) => e.type)).not.toContain('data-retry');
    expect(deltasOf(live, 'step-2').length).toBeGreaterThan(5);
    expect(result.response.conversation).toBe(`The echo said alpha. ${ANSWER}`);
    expect(await collect(subscribeTurn(client, handle.workflowId))).toEqual(live);

    // Every task of the turn ran in one of the two worker processes, none in the subscriber's.
    const history = await handle.fetchHistory();
    const identities = (history.events ?? [])
      .map(
        (e) =>
          e.activityTaskStartedEventAttributes?.identity ?? e.workflowTaskStartedEventAttributes?.identity,
      )
      .filter((i): i is string => Boolean(i));
    expect(identities.length).toBeGreaterThan(0);
    for (const identity of identities) expect(pids.some((p) => identity.startsWith(p))).toBe(true);
    perWorker.push(pids.map((p) => identities.filter((id) => id.startsWith(p)).length).join('+'));
  }
  await Promise.all(workers.map((w) => stopWorker(w)));
  console.log(
    `[stream-durability] two workers: 3 turns in ${Date.now() - t0} ms; tasks per worker, by turn: ${perWorker.join(', ')}`,
  );
});
