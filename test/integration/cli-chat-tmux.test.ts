/**
 * `mcp-turns chat` and `run` on a real terminal (tmux): five messages typed one after the other,
 * each answer growing on the screen as Claude writes it (two captures 0.5 s apart differ while it
 * is written), each answered once, in order, and Ctrl-C while one is answered leaves (exit 130);
 * ten lines pasted at once, ten turns answered in order;
 * Ctrl-C in `run` leaves the turn running, says how to follow it, and exits 130.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { BIN } from '../support/cli';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';
import type { ChildProcess } from 'node:child_process';

jest.setTimeout(120_000);

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-tmux-'));
/** A tmux server of this suite's own: no other test's sessions, nor its kill-server, touch it. */
const socket = `mcp-turns-tmux-${process.pid}`;
const session = 'chat';
const taskQueue = uniqueQueue('tmux');
const WORDS = Array.from({ length: 24 }, (_, i) => `w${i + 1}`).join(' ');

let stub: StubModel;
let worker: ChildProcess;
let client: Client;

beforeAll(async () => {
  if (!hasTmux) return;
  stub = await startStubModel({
    scenarios: {
      // Each answer: 24 words at 120 ms a word, about 3 s on the screen.
      typed: {
        perTurn: true,
        streamDelayMs: 120,
        steps: [{ content: [{ type: 'text', text: `{{question}}: ${WORDS} done.` }] }],
      },
      quick: { perTurn: true, steps: [{ content: [{ type: 'text', text: 'answer to {{question}}' }] }] },
    },
  });
  worker = await startWorkerProcess({ config: { mcp_servers: {} }, taskQueue, stubUrl: stub.url });
  client = await testClient();
});

afterAll(async () => {
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  if (worker && worker.exitCode === null) worker.kill('SIGKILL');
  await client?.connection.close();
  await stub?.close();
});

const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const screen = (name = session): string => tmux('capture-pane', '-p', '-t', name, '-S', '-200');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, predicate: () => boolean, timeoutMs = 30_000, name = session): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${screen(name)}`);
    await sleep(100);
  }
}

/**
 * Starts `mcp-turns <args>` in a new tmux session `name`; its exit code is printed after it as
 * `EXIT=<code>` (the shell's own Ctrl-C is trapped, so it goes on to print it).
 */
function startInTmux(name: string, args: string[]): void {
  const cmd = [process.execPath, BIN, ...args, '--task-queue', taskQueue, '--address', address].map((a) => `'${a}'`).join(' ');
  const env = `MCP_TURNS_HOME='${home}' ANTHROPIC_BASE_URL='${stub.url}' ANTHROPIC_API_KEY=test NO_COLOR=1`;
  tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '60', `trap : INT; env ${env} ${cmd}; echo EXIT=$?; sleep 60`);
}

(hasTmux ? it : it.skip)(
  'five messages in tmux: each answer grows on the screen as it is written; Ctrl-C while one is answered leaves',
  async () => {
    startInTmux(session, ['chat', '--model', 'typed', '--no-format']);
    await until('the prompt', () => screen().includes('you>'));
    for (let i = 1; i <= 5; i++) {
      tmux('send-keys', '-t', session, `message ${i}`, 'Enter');
      await until(`answer ${i} to start`, () => screen().includes(`message ${i}: w1`));
      const first = screen();
      await sleep(500);
      const second = screen();
      expect(second).not.toBe(first); // the answer grew between the two captures
      expect(first).not.toContain(`message ${i}: ${WORDS} done.`); // and was not there whole at first
      await until(`answer ${i} to end`, () => screen().includes(`message ${i}: ${WORDS} done.`));
      await until(`the prompt after ${i}`, () => screen().split('you>').length > i + 1);
    }
    const final = screen();
    for (let i = 1; i <= 5; i++) expect(final.split(`message ${i}: ${WORDS} done.`)).toHaveLength(2); // each answer printed once
    // Ctrl-C while a message is answered: the chat leaves, the conversation goes on.
    tmux('send-keys', '-t', session, 'message 6', 'Enter');
    await until('answer 6 to start', () => screen().includes('message 6: w1'));
    tmux('send-keys', '-t', session, 'C-c');
    await until('the exit', () => screen().includes('EXIT='));
    expect(screen()).toMatch(/\nleft conversation (conv-\S+); it goes on\. mcp-turns chat --id \1 prints the answer\nEXIT=130/);
  },
);

(hasTmux ? it : it.skip)('ten lines pasted at once into chat: ten turns, answered in order', async () => {
  const name = 'paste';
  startInTmux(name, ['chat', '--model', 'quick', '--no-format']);
  await until('the prompt', () => screen(name).includes('you>'), 30_000, name);
  const lines = Array.from({ length: 10 }, (_, i) => `pasted ${i + 1}`);
  tmux('send-keys', '-t', name, ...lines.flatMap((line) => [line, 'Enter']));
  const turnsEnded = (text: string) => text.match(/ · completed · 0 tool calls/g)?.length ?? 0;
  await until('ten turns', () => turnsEnded(screen(name)) === 10, 60_000, name);
  const final = screen(name);
  const at = lines.map((line) => final.indexOf(`answer to ${line}\n`));
  expect(at.every((i) => i >= 0)).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at); // in order
  for (const line of lines) expect(final.split(`answer to ${line}\n`)).toHaveLength(2); // each once
  tmux('send-keys', '-t', name, 'C-d');
  await until('the exit', () => screen(name).includes('EXIT=0'), 10_000, name);
});

(hasTmux ? it : it.skip)('Ctrl-C in run: the turn goes on, the command says how to follow it and exits 130', async () => {
  const name = 'run';
  const id = `run-ctrl-c-${Date.now().toString(36)}`;
  startInTmux(name, ['run', 'interrupt me', '--model', 'typed', '--no-format', '--id', id]);
  await until('the answer to start', () => screen(name).includes('interrupt me: w1'), 30_000, name);
  tmux('send-keys', '-t', name, 'C-c');
  await until('the exit', () => screen(name).includes('EXIT='), 10_000, name);
  const final = screen(name);
  expect(final).toContain(`\ninterrupted: turn ${id} goes on; \`mcp-turns watch ${id}\` follows it, \`mcp-turns cancel ${id}\` stops it\nEXIT=130`);
  // It went on: it ends with the whole answer.
  const result = await client.workflow.getHandle(id).result();
  expect(result.response.conversation).toBe(`interrupt me: ${WORDS} done.`);
});
