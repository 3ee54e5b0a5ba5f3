/**
 * `mcp-turns chat` and `mcp-turns show <conversation>`, run as a user runs them (the real CLI, a
 * worker process or the command's own worker, the document MCP server, the real SDK to the stub):
 * lines from stdin answered in order with live progress; a chat SIGKILLed mid-message and resumed
 * by id sends the message again with its id and prints the answer once; a message answered before
 * a continue-as-new is printed from its turn; a terminal session with an approval question; an
 * ended conversation refused; show's conversation view.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type Scenario, type StubModel } from '../../src/stub';
import { closeConversation, newConversationId, sendMessage } from '../../src/client/conversation-client';
import { conversationTurnId } from '../../src/core/conversation';
import { PendingMessages } from '../../src/cli/pending-messages';
import { BIN, runCli } from '../support/cli';
import { documentStdio } from '../support/mcp-servers';
import { testClient, uniqueQueue } from '../support/temporal';
import { runChain } from '../support/history-payloads';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(90_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-chat-'));
const countFile = path.join(home, 'count.jsonl');
const taskQueue = uniqueQueue('chat');
const common = ['--task-queue', taskQueue, '--address', address];

const turnScenario = (tool: string, lastLatencyMs = 0): Scenario => ({
  perTurn: true,
  steps: [
    { content: [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', name: tool, input: { name: '{{question}}', bytes: 2000 } }] },
    { content: [{ type: 'text', text: 'answer to {{question}}' }], latencyMs: lastLatencyMs },
  ],
});

let stub: StubModel;
let worker: ChildProcess;
let client: Client;
const children: ChildProcess[] = [];

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      chat: turnScenario('documents__read_document'),
      slow: turnScenario('documents__read_document', 2500),
      guarded: turnScenario('guarded__read_document'),
    },
  });
  const servers = { documents: documentStdio(countFile), guarded: documentStdio(undefined, { approval: { always: ['read_document'] } }) };
  worker = await startWorkerProcess({ config: { mcp_servers: servers }, taskQueue, stubUrl: stub.url });
  client = await testClient();
});

afterAll(async () => {
  for (const c of [...children, worker]) if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await client?.connection.close();
  await stub?.close();
});

interface Chat {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `mcp-turns chat` with stdin as a pipe the test writes to. */
function chat(args: string[], env: NodeJS.ProcessEnv = {}): Chat {
  const child = spawn(process.execPath, [BIN, 'chat', ...args], {
    env: { ...process.env, MCP_TURNS_HOME: home, ANTHROPIC_BASE_URL: stub.url, ANTHROPIC_API_KEY: 'test', ...env },
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function until(what: string, predicate: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const jsonLines = (text: string) => text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const pendingDir = (id: string) => new PendingMessages(id, path.join(home, 'conversations'));

it('reads one message a line from stdin, answers them in order with live progress, says once which tools were left out; show prints the conversation', async () => {
  const id = `chat-lines-${Date.now().toString(36)}`;
  // Two tools (documents, guarded), one a request: the second is left out.
  const c = chat(['--id', id, '--json', '--model', 'chat', '--no-format', '--max-tools', '1', '--tool-search', 'off', ...common]);
  c.child.stdin!.end('first line\n\nsecond line\n');
  expect(await c.exited).toBe(0);
  expect(jsonLines(c.stdout())).toEqual([
    expect.objectContaining({ conversationId: id, index: 0, turnId: conversationTurnId(id, 0), question: 'first line', answer: 'answer to first line', toolCalls: 1 }),
    expect.objectContaining({ conversationId: id, index: 1, turnId: conversationTurnId(id, 1), question: 'second line', answer: 'answer to second line', toolCalls: 1 }),
  ]);
  expect(c.stderr()).toContain(`conversation ${id} · `);
  expect(c.stderr()).toMatch(/ {2}Claude · step 1\n/);
  // Each turn's tool call, live or (for a turn quicker than the polling) from its result.
  expect(c.stderr().match(/ {2}step 1 · documents__read_document( \{.*\})? · ok · \d+ ms\n/g)).toHaveLength(2);
  expect(c.stderr()).toContain(`conversation ${id} stays open: mcp-turns chat --id ${id}`);
  const dropped = [{ name: 'guarded__read_document', reason: 'over maxToolsPerRequest (1)' }];
  expect(jsonLines(c.stdout()).map((l) => l.droppedTools)).toEqual([dropped, dropped]);
  const droppedLine = '  Tools not offered to Claude: 1 over the limit of 1 per request (guarded__read_document; --max-tools 2 offers them, --tool-search auto lets Claude find them)\n';
  expect(c.stderr().split(droppedLine)).toHaveLength(2); // once a session
  expect(pendingDir(id).list()).toEqual([]);

  const show = await runCli(['show', id, '--address', address]);
  expect(show.code).toBe(0);
  expect(show.stdout).toContain(`Conversation ${id} · running (idle) · started `);
  expect(show.stdout).toMatch(/#1 completed · first line → answer to first line · completed · 1 tool call · \d+ in \/ \d+ out tokens/);
  expect(show.stdout).toMatch(/#2 completed · second line → answer to second line/);
  expect(show.stdout).toMatch(/Transcript: 8 messages in 2 turns, 2 tool results, [\d.]+ KiB/);
  const json = JSON.parse((await runCli(['show', id, '--json', '--address', address])).stdout) as { live: unknown; turns: Array<{ question: string }> };
  expect(json.live).toMatchObject({ state: 'idle', turns: 2, queued: 0 });
  expect(json.turns.map((t) => t.question)).toEqual(['first line', 'second line']);
});

it('runs a worker of its own with --config when none polls the task queue', async () => {
  const config = path.join(home, 'own-worker.json');
  fs.writeFileSync(config, JSON.stringify({ mcp_servers: { documents: documentStdio() } }));
  const c = chat(['--json', '--model', 'chat', '--no-format', '--config', config, '--task-queue', uniqueQueue('chat-own'), '--address', address]);
  c.child.stdin!.end('with my own worker\n');
  expect(await c.exited).toBe(0);
  expect(c.stderr()).toMatch(/No worker polls task queue chat-own-\S+: running one in this process/);
  expect(jsonLines(c.stdout())).toEqual([expect.objectContaining({ index: 0, answer: 'answer to with my own worker' })]);
});

it('a chat SIGKILLed while its message is answered: resumed by id, it says the conversation has the message and prints the answer once', async () => {
  const id = `chat-crash-${Date.now().toString(36)}`;
  const first = chat(['--id', id, '--json', '--model', 'slow', '--no-format', ...common]);
  first.child.stdin!.write('answer me after a crash\n');
  await until('the last Claude call', () => first.stderr().includes('Claude · step 2'));
  first.child.kill('SIGKILL');
  await first.exited;
  const pending = pendingDir(id).list();
  expect(pending.map((p) => p.text)).toEqual(['answer me after a crash']);

  const resumed = chat(['--id', id, '--json', ...common]);
  resumed.child.stdin!.end();
  expect(await resumed.exited).toBe(0);
  // The conversation had the message: it is not sent again, its answer is printed.
  expect(resumed.stderr()).toContain('received before the last session left, answered now: answer me after a crash');
  expect(resumed.stderr()).not.toContain('sending again');
  expect(jsonLines(resumed.stdout())).toEqual([
    expect.objectContaining({ messageId: pending[0]!.messageId, index: 0, question: 'answer me after a crash', answer: 'answer to answer me after a crash' }),
  ]);
  expect(pendingDir(id).list()).toEqual([]);
  // Asked once: one turn, whose last Claude call ran once.
  await expect(client.workflow.getHandle(conversationTurnId(id, 1)).describe()).rejects.toThrow();
  const lastCalls = stub.requests.filter((r) => r.scenario === 'slow' && r.step === 1 && JSON.stringify(r.body.messages).includes('answer me after a crash'));
  expect(lastCalls).toHaveLength(1);
});

it('a pending message the conversation answered before it continued as new is printed from its turn, not asked again', async () => {
  const id = newConversationId();
  const outcome = await sendMessage(client, id, 'answered before', { messageId: 'm-before', conversation: { taskQueue, turnsPerRun: 1, options: { model: 'chat', format: false } } });
  while ((await runChain(client, id)).length < 2) await new Promise((r) => setTimeout(r, 100));
  // As a chat that crashed after sending but before printing the answer leaves it.
  pendingDir(id).add({ messageId: 'm-before', text: 'answered before' });
  const c = chat(['--id', id, '--json', ...common]);
  c.child.stdin!.end();
  expect(await c.exited).toBe(0);
  expect(jsonLines(c.stdout())).toEqual([expect.objectContaining({ messageId: 'm-before', index: 0, turnId: outcome.turnId, answer: 'answer to answered before' })]);
  expect(c.stderr()).toContain('answered after the last session left: answered before');
  expect(c.stderr()).not.toContain('sending again');
  await expect(client.workflow.getHandle(conversationTurnId(id, 1)).describe()).rejects.toThrow();
  expect(pendingDir(id).list()).toEqual([]);

  await closeConversation(client, id);
  await client.workflow.getHandle(id).result();
  const ended = await runCli(['chat', '--id', id, ...common], { env: { MCP_TURNS_HOME: home } });
  expect(ended.code).toBe(1);
  expect(ended.stderr).toContain(`mcp-turns: conversation ${id} has ended (completed at `);
  const show = await runCli(['show', id, '--address', address]);
  expect(show.stdout).toContain(`Conversation ${id} · completed · started `);
  expect(show.stdout).toContain('#1 completed · answered before → answer to answered before');
});

it('on a terminal: a prompt per message, an approval asked and answered, Ctrl-D leaves', async () => {
  const id = `chat-tty-${Date.now().toString(36)}`;
  const cmd = [process.execPath, BIN, 'chat', '--id', id, '--model', 'guarded', '--no-format', '--as', 'ines@tty', ...common].map((a) => `'${a}'`).join(' ');
  // `script` gives the CLI a pseudo-terminal; the test types.
  const tty = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, MCP_TURNS_HOME: home } });
  children.push(tty);
  let out = '';
  tty.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => tty.once('exit', r));
  await until('the prompt', () => out.includes('you> '));
  tty.stdin.write('read the terminal document\r');
  await until('the approval question', () => /\? \[y\/N\] /.test(out));
  expect(out).toContain('run guarded__read_document {"name":"read the terminal document","bytes":2000}? [y/N] ');
  tty.stdin.write('y\r');
  await until('the answer', () => out.includes('answer to read the terminal document'));
  expect(out).toMatch(/approved guarded__read_document \(call toolu_\w+\)/);
  await until('the next prompt', () => out.split('you> ').length > 2);
  tty.stdin.write('\x04');
  expect(await exited).toBe(0);
  expect(out).toContain(`conversation ${id} stays open`);
});
