/**
 * Conversations end to end: the real dev server, real MCP servers (the document fixture, whose
 * tool answers ~100 KB, and server-everything), the real Anthropic SDK to the scripted stub, the
 * filesystem External Storage of the test run (and Versity's S3 gateway at the end). A long
 * conversation with two ~100 KB tool results per turn, the two turns that used to hit Temporal's
 * payload limit, a worker SIGKILLed and a dev server restarted mid-conversation, two messages sent at
 * the same instant to a new id, and the S3 driver. The long conversation, the killed worker and the
 * restarted dev server run side by side: each has its own conversation, and the last two their own
 * worker (and dev server).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { Scenario } from '../../src/stub';
import { conversationTurnId, type MessageOutcome } from '../../src/core/conversation';
import type { MessageParam } from '../../src/core/contracts';
import { closeConversation, getConversation, newConversationId, sendMessage, submitMessage } from '../../src/client/conversation-client';
import { startChatTurn } from '../../src/client/chat-turn-client';
import type { ChatTurnInput } from '../../src/schemas/turn-input';
import { DEFAULT_STORAGE_THRESHOLD } from '../../src/storage/storage-config';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { startTurnHarness, TEST_API_KEY, type TurnHarness } from '../support/turn-harness';
import { documentStdio, everythingStdio } from '../support/mcp-servers';
import { encodedSize, payloadsIn, rawHistoryEvents, runChain, storageReference } from '../support/history-payloads';
import { startWorkerProcess } from '../support/worker-process';
import { startCli } from '../support/cli';
import { freePort } from '../support/ports';
import { uniqueQueue } from '../support/temporal';
import { testDataConverter } from '../support/settings';
import { s3ServerBinary, startS3Server } from '../support/s3-server';

jest.setTimeout(120_000);

/** Messages of the long conversation (MCP_TURNS_TEST_CONVERSATION_MESSAGES; 41: two runs of 20 and one more, ~28 s on 2 cores; bench:conversation runs 100). */
const MESSAGES = Number(process.env.MCP_TURNS_TEST_CONVERSATION_MESSAGES ?? 41);
/** The model's context window as the stub counts it (bytes / 4): Claude's 200k tokens. */
const CONTEXT_WINDOW_TOKENS = 200_000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-conversation-'));
const countFile = path.join(dir, 'count.jsonl');

const text = (t: string) => ({ type: 'text' as const, text: t });
const read = (name: string) => ({ type: 'tool_use' as const, name: 'documents__read_document', input: { name } });

/** Every turn of a conversation: two ~100 KB documents read in parallel, then the answer. */
const chatScenario = (latencyMs = 0): Scenario => ({
  perTurn: true,
  contextWindowTokens: CONTEXT_WINDOW_TOKENS,
  steps: [
    { content: [text('Reading both documents.'), read('{{question}} / a'), read('{{question}} / b')] },
    { content: [text('answer to {{question}}')], latencyMs },
  ],
});

/** 5 steps × 4 parallel echo calls of ~95 KB each (under the 100 KB default result cap), then the answer. */
const ECHO = 'e'.repeat(95_000);
const echoScenario: Scenario = {
  steps: [
    ...[1, 2, 3, 4, 5].map((s) => ({
      content: [text(`step ${s}`), ...[1, 2, 3, 4].map((c) => ({ type: 'tool_use' as const, name: 'everything__echo', input: { message: `${s}.${c} ${ECHO}` } }))],
    })),
    { content: [text('echoed twenty')] },
  ],
};

const scenarios: Record<string, Scenario> = {
  chat: chatScenario(),
  'slow-chat': chatScenario(1500),
  echo: echoScenario,
  pasted: { perTurn: true, contextWindowTokens: CONTEXT_WINDOW_TOKENS, steps: [{ content: [text('answer to {{question}}')] }] },
};

const servers = { documents: documentStdio(countFile), everything: everythingStdio() };

let h: TurnHarness;
/** Worker and dev server processes of this file, stopped at the end whatever happened. */
const processes: ChildProcess[] = [];
beforeAll(async () => {
  h = await startTurnHarness({ scenarios, servers });
});
// The S3 server is built the first time a machine runs it (minutes): not within a test's timeout.
beforeAll(async () => {
  await s3ServerBinary((line) => console.log(`[s3-server] ${line}`));
}, 20 * 60_000);
afterAll(async () => {
  // SIGTERM first: `mcp-turns server` stops its dev server on it.
  const running = processes.filter((p) => p.exitCode === null && p.signalCode === null);
  await Promise.all(
    running.map(
      (p) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => p.kill('SIGKILL'), 5000);
          p.once('exit', () => (clearTimeout(timer), resolve(null)));
          p.kill('SIGTERM');
        }),
    ),
  );
  await h?.close();
});

/** A started process, remembered for afterAll. */
function tracked<T extends ChildProcess | { child: ChildProcess }>(started: T): T {
  processes.push('child' in started ? started.child : started);
  return started;
}

/** Document reads so far, by document name. */
function reads(): Map<string, number> {
  const counts = new Map<string, number>();
  if (!fs.existsSync(countFile)) return counts;
  for (const line of fs.readFileSync(countFile, 'utf8').split('\n').filter(Boolean)) {
    const name = (JSON.parse(line) as { args: { name: string } }).args.name;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/** Every payload of every run of the workflow, as the server keeps them. */
async function storedHistoryPayloads(client: Client, workflowId: string): Promise<Payload[]> {
  const payloads: Payload[] = [];
  for (const runId of await runChain(client, workflowId)) payloads.push(...payloadsIn(await rawHistoryEvents(client, workflowId, runId)));
  return payloads;
}

function largestInline(payloads: Payload[]): number {
  return Math.max(0, ...payloads.filter((p) => !storageReference(p)).map(encodedSize));
}

const questionOf = (outcome: MessageOutcome): unknown => outcome.result?.messages[0]?.content;
const answerOf = (outcome: MessageOutcome): string | undefined => outcome.result?.response.conversation;

/** The user questions (string contents) of a Claude request. */
function questionsIn(messages: MessageParam[]): string[] {
  return messages.flatMap((m) => {
    if (m.role !== 'user') return [];
    if (typeof m.content === 'string') return [m.content];
    return m.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text);
  });
}

it.concurrent(`a ${MESSAGES}-message conversation, two ~100 KB tool results a turn: every message answered in order, only the new message sent, no inline payload over the threshold, continued as new without loss`, async () => {
  const id = newConversationId();
  const question = (i: number) => `message ${i + 1} of ${id}`;
  const outcomes: MessageOutcome[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    outcomes.push(await sendMessage(h.client, id, question(i), { conversation: { taskQueue: h.taskQueue, options: { model: 'chat', format: false } } }));
  }
  // Every message answered, in order, by its own turn, from its own documents, each read once.
  expect(outcomes.map((o) => [o.index, o.turnId, o.error])).toEqual(outcomes.map((_, i) => [i, conversationTurnId(id, i), undefined]));
  expect(outcomes.map(questionOf)).toEqual(outcomes.map((_, i) => question(i)));
  expect(outcomes.map(answerOf)).toEqual(outcomes.map((_, i) => `answer to ${question(i)}`));
  for (const o of outcomes) expect(o.result!.toolCalls.map((c) => c.isError)).toEqual([false, false]);
  const counts = reads();
  for (let i = 0; i < MESSAGES; i++) for (const doc of ['a', 'b']) expect(counts.get(`${question(i)} / ${doc}`)).toBe(1);
  // Turns whose prompt outgrew the window compacted the older tool results and said so.
  expect(outcomes.some((o) => (o.result!.compaction?.toolResultsReplaced ?? 0) > 0)).toBe(true);

  // Each turn's first Claude call saw the turn before it: the history survived every continue-as-new.
  const firstCalls = h.stub.requests.filter((r) => r.scenario === 'chat' && r.kind === 'step' && r.step === 0 && r.status === 200);
  for (let i = 1; i < MESSAGES; i++) {
    const call = firstCalls.find((r) => questionsIn(r.body.messages).at(-1) === question(i));
    expect(questionsIn(call!.body.messages)).toContain(question(i - 1));
  }

  // Continue-as-new happened; every run's history, and every turn's, keeps only payloads under the threshold.
  const runs = await runChain(h.client, id);
  expect(runs.length).toBeGreaterThanOrEqual(2);
  const conversationPayloads = await storedHistoryPayloads(h.client, id);
  expect(largestInline(conversationPayloads)).toBeLessThan(DEFAULT_STORAGE_THRESHOLD);
  for (const o of outcomes) expect(largestInline(await storedHistoryPayloads(h.client, o.turnId))).toBeLessThan(DEFAULT_STORAGE_THRESHOLD);

  // The client sent only each new message: every sendMessage update carried the message alone.
  const accepted = [];
  for (const runId of runs) {
    for (const e of await rawHistoryEvents(h.client, id, runId)) {
      const request = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
      if (request?.input?.name === 'sendMessage') accepted.push(request.input.args!.payloads!);
    }
  }
  expect(accepted).toHaveLength(MESSAGES);
  for (const args of accepted) {
    expect(args).toHaveLength(1);
    const message = h.client.options.loadedDataConverter.payloadConverter.fromPayload<{ text: string }>(args[0]!);
    expect(Object.keys(message).sort()).toEqual(['id', 'text']);
    expect(encodedSize(args[0]!)).toBeLessThan(300);
  }
  await closeConversation(h.client, id);
  expect(await h.client.workflow.getHandle(id).result()).toEqual({ turns: MESSAGES });
}, 300_000);

it('a turn with a 3 MB history (ten earlier questions with pasted documents) completes, compacting what does not fit', async () => {
  const history: NonNullable<ChatTurnInput['history']> = [];
  for (let i = 0; i < 10; i++) {
    const pasted = `pasted document ${i}: ${String(i).repeat(300_000)}`;
    history.push({ role: 'user', content: `Question ${i} about this document:\n${pasted}` }, { role: 'assistant', content: [text(`Answer ${i}.`)] });
  }
  expect(Buffer.byteLength(JSON.stringify(history))).toBeGreaterThan(3_000_000);
  const handle = await startChatTurn(h.client, { question: 'And the eleventh?', history, model: 'pasted', format: false }, { taskQueue: h.taskQueue });
  const result = await handle.result();
  expect(result.stopReason).toBe('completed');
  expect(result.response.conversation).toBe('answer to And the eleventh?');
  // 750k tokens do not fit 200k: the older turns were dropped for this call, the recent ones kept.
  expect(result.compaction).toMatchObject({ toolResultsReplaced: 0, messagesDropped: expect.any(Number) });
  expect(result.compaction!.messagesDropped).toBeGreaterThan(0);
  expect(largestInline(await storedHistoryPayloads(h.client, handle.workflowId))).toBeLessThan(DEFAULT_STORAGE_THRESHOLD);
});

it('a turn whose tools return 20 results of ~95 KB (5 steps × 4 parallel echo calls) completes', async () => {
  const handle = await startChatTurn(
    h.client,
    { question: 'Echo the twenty parts', model: 'echo', servers: ['everything'], maxSteps: 6, format: false },
    { taskQueue: h.taskQueue },
  );
  const result = await handle.result();
  expect(result.stopReason).toBe('completed');
  expect(result.response.conversation).toBe('echoed twenty');
  expect(result.toolCalls).toHaveLength(20);
  expect(result.toolCalls.filter((c) => c.isError || c.repeated)).toEqual([]);
  const results = result.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).filter((b) => b.type === 'tool_result');
  expect(results).toHaveLength(20);
  for (const r of results) expect(JSON.stringify(r).length).toBeGreaterThan(95_000);
  const events = await rawHistoryEvents(h.client, handle.workflowId);
  expect(largestInline(payloadsIn(events))).toBeLessThan(DEFAULT_STORAGE_THRESHOLD);
  // Each Claude call refers to the steps before it by claim: its inputs inline are the request alone.
  const claudeInputs = events
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'claude')
    .map((a) => payloadsIn(a!.input));
  expect(claudeInputs).toHaveLength(6);
  for (const inputs of claudeInputs) {
    expect(inputs.filter((p) => storageReference(p)).length).toBeGreaterThan(0);
    expect(inputs.filter((p) => !storageReference(p)).map(encodedSize).reduce((a, b) => a + b, 0)).toBeLessThan(4096);
  }
});

it('two messages sent at the same instant to a new conversation id: one conversation, both answered, in order', async () => {
  const id = newConversationId();
  const conversation = { taskQueue: h.taskQueue, options: { model: 'chat', format: false } };
  const outcomes = await Promise.all([
    sendMessage(h.client, id, `first at once, ${id}`, { conversation }),
    sendMessage(h.client, id, `second at once, ${id}`, { conversation }),
  ]);
  expect(outcomes.map((o) => o.error)).toEqual([undefined, undefined]);
  const [earlier, later] = [...outcomes].sort((a, b) => a.index - b.index);
  expect([earlier!.index, later!.index]).toEqual([0, 1]);
  expect(answerOf(earlier!)).toBe(`answer to ${String(questionOf(earlier!))}`);
  expect(answerOf(later!)).toBe(`answer to ${String(questionOf(later!))}`);
  // The later one was asked with the earlier one as its history.
  const laterCall = h.stub.requests.find((r) => r.scenario === 'chat' && r.step === 0 && questionsIn(r.body.messages).at(-1) === questionOf(later!))!;
  expect(questionsIn(laterCall.body.messages)).toEqual([questionOf(earlier!), questionOf(later!)]);
  expect(await runChain(h.client, id)).toHaveLength(1);
  const { status } = await getConversation(h.client, id);
  expect(status).toMatchObject({ state: 'idle', turns: 2, queued: 0 });
  await closeConversation(h.client, id);
});

/** Waits until `predicate` holds. */
async function until(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The stub is answering the last Claude call of the turn asked `question`. */
const answering = (question: string) => () =>
  h.stub.requests.some((r) => r.scenario === 'slow-chat' && r.step === 1 && questionsIn(r.body.messages).at(-1) === question && r.status === 0);

/** Each of the conversation's first `count` turns ran once, and there is no other. */
async function expectOneTurnPerMessage(client: Client, id: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) expect(await runChain(client, conversationTurnId(id, i))).toHaveLength(1);
  await expect(client.workflow.getHandle(conversationTurnId(id, count)).describe()).rejects.toThrow();
}

it.concurrent('a worker SIGKILLed mid-conversation and restarted: the conversation continues, a message sent meanwhile is answered, none lost or answered twice', async () => {
  const ownCount = path.join(dir, 'killed.jsonl');
  const taskQueue = uniqueQueue('conversation-kill');
  const workerOptions = { config: { mcp_servers: { documents: documentStdio(ownCount) } }, taskQueue, stubUrl: h.stub.url };
  let worker: ChildProcess = tracked(await startWorkerProcess(workerOptions));
  const id = newConversationId();
  const question = (i: number) => `killed ${i + 1} of ${id}`;
  const conversation = { taskQueue, options: { model: 'slow-chat', format: false } };
  try {
    const first = await sendMessage(h.client, id, question(0), { conversation });
    const second = await submitMessage(h.client, id, question(1), { conversation });
    await until('the second turn\'s last Claude call', answering(question(1)));
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    // Sent while no worker runs: accepted once one is back.
    const third = submitMessage(h.client, id, question(2), { conversation });
    worker = tracked(await startWorkerProcess(workerOptions));
    const outcomes = [first, await second.outcome(), await (await third).outcome()];
    outcomes.push(await sendMessage(h.client, id, question(3), { conversation }));
    expect(outcomes.map((o) => [o.index, o.error, questionOf(o), answerOf(o)])).toEqual(
      [0, 1, 2, 3].map((i) => [i, undefined, question(i), `answer to ${question(i)}`]),
    );
    await expectOneTurnPerMessage(h.client, id, 4);
    // The documents were read once each; the Claude call cut off by the kill was asked again.
    const lines = fs.readFileSync(ownCount, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(8);
    const cutOff = h.stub.requests.filter((r) => r.scenario === 'slow-chat' && r.step === 1 && questionsIn(r.body.messages).at(-1) === question(1));
    expect(cutOff.length).toBeGreaterThanOrEqual(2);
    // The fourth turn saw all three before it.
    const last = h.stub.requests.find((r) => r.scenario === 'slow-chat' && r.step === 0 && questionsIn(r.body.messages).at(-1) === question(3))!;
    expect(questionsIn(last.body.messages)).toEqual([0, 1, 2, 3].map(question));
    await closeConversation(h.client, id);
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => (worker.exitCode !== null ? r(null) : worker.once('exit', r)));
  }
});

it.concurrent('a dev server restarted mid-conversation: the message in flight is answered once, and the conversation goes on', async () => {
  // A dev server of this test's own, with a database file, so it can be restarted.
  const port = await freePort();
  const serverArgs = ['server', '--port', String(port), '--ui-port', String(await freePort()), '--db', path.join(dir, 'temporal.db')];
  let server = tracked(await startCli(serverArgs, /Temporal Web UI:/));
  const own = `127.0.0.1:${port}`;
  const taskQueue = uniqueQueue('conversation-restart');
  const ownCount = path.join(dir, 'restarted.jsonl');
  const worker = tracked(
    await startWorkerProcess({ config: { mcp_servers: { documents: documentStdio(ownCount) } }, taskQueue, stubUrl: h.stub.url, env: { TEMPORAL_ADDRESS: own } }),
  );
  const connection = await Connection.connect({ address: own });
  const client = new Client({ connection, ...clientStorageOptions(testDataConverter()) });
  const id = newConversationId();
  const question = (i: number) => `restarted ${i + 1} of ${id}`;
  const conversation = { taskQueue, options: { model: 'slow-chat', format: false } };
  try {
    const first = await sendMessage(client, id, question(0), { conversation });
    const second = await submitMessage(client, id, question(1), { conversation });
    await until('the second turn\'s last Claude call', answering(question(1)));
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    server = tracked(await startCli(serverArgs, /Temporal Web UI:/));
    const outcomes = [first, await second.outcome()];
    outcomes.push(await sendMessage(client, id, question(2), { conversation }));
    expect(outcomes.map((o) => [o.index, o.error, questionOf(o), answerOf(o)])).toEqual(
      [0, 1, 2].map((i) => [i, undefined, question(i), `answer to ${question(i)}`]),
    );
    await expectOneTurnPerMessage(client, id, 3);
    expect(fs.readFileSync(ownCount, 'utf8').trim().split('\n')).toHaveLength(6);
    await closeConversation(client, id);
    expect(await client.workflow.getHandle(id).result()).toEqual({ turns: 3 });
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => (worker.exitCode !== null ? r(null) : worker.once('exit', r)));
    await connection.close();
    server.child.kill('SIGTERM');
    await server.exited;
  }
});

it('on the S3 driver against a real S3 server: a conversation with large payloads runs, and every stored object is in the bucket', async () => {
  const s3 = await startS3Server();
  const saved = { ...process.env };
  let s3h: TurnHarness | undefined;
  try {
    await s3.createBucket('conversations');
    process.env.MCP_TURNS_STORAGE = `s3://conversations/chats?endpoint=${encodeURIComponent(s3.endpoint)}&region=${s3.region}&path_style=1`;
    process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
    s3h = await startTurnHarness({ scenarios, servers: { documents: documentStdio() } });
    const id = newConversationId();
    const outcomes: MessageOutcome[] = [];
    for (let i = 0; i < 3; i++) {
      outcomes.push(await sendMessage(s3h.client, id, `s3 ${i + 1} of ${id}`, { conversation: { taskQueue: s3h.taskQueue, options: { model: 'chat', format: false } } }));
    }
    expect(outcomes.map(answerOf)).toEqual([0, 1, 2].map((i) => `answer to s3 ${i + 1} of ${id}`));

    const payloads = [...(await storedHistoryPayloads(s3h.client, id))];
    for (const o of outcomes) payloads.push(...(await storedHistoryPayloads(s3h.client, o.turnId)));
    expect(largestInline(payloads)).toBeLessThan(DEFAULT_STORAGE_THRESHOLD);
    const references = payloads.map(storageReference).filter((r) => r !== undefined);
    expect(references.length).toBeGreaterThan(6);
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'conversations', Prefix: 'chats/' }));
    const inBucket = new Set((listed.Contents ?? []).map((o) => o.Key));
    for (const ref of references) {
      expect(ref.driverName).toBe('mcp-turns-s3');
      expect(inBucket.has(`chats/${ref.claimData.key}`)).toBe(true);
    }
    // The history segments the conversation hands to each turn are the objects, not copies.
    expect(new Set(references.map((r) => r.claimData.key)).size).toBeLessThan(references.length);
    const everything = JSON.stringify(await rawHistoryEvents(s3h.client, id));
    for (const secret of [s3.credentials.secretAccessKey, TEST_API_KEY]) expect(everything).not.toContain(secret);
    await closeConversation(s3h.client, id);
  } finally {
    await s3h?.close();
    process.env = saved;
    await s3.stop();
  }
});
