/**
 * `mcp-turns chat` streaming on a real terminal (tmux): five messages typed one after the other,
 * each answer growing on the screen as Claude writes it (two captures 0.5 s apart differ while it
 * is written), each answered once, in order.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStubModel, type StubModel } from '../../src/stub';
import { BIN } from '../support/cli';
import { uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';
import type { ChildProcess } from 'node:child_process';

jest.setTimeout(120_000);

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-tmux-'));
const session = `mcp-turns-chat-${process.pid}`;
const taskQueue = uniqueQueue('tmux');
const WORDS = Array.from({ length: 24 }, (_, i) => `w${i + 1}`).join(' ');

let stub: StubModel;
let worker: ChildProcess;

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
    },
  });
  worker = await startWorkerProcess({ config: { mcp_servers: {} }, taskQueue, stubUrl: stub.url });
});

afterAll(async () => {
  spawnSync('tmux', ['kill-session', '-t', session]);
  if (worker && worker.exitCode === null) worker.kill('SIGKILL');
  await stub?.close();
});

const tmux = (...args: string[]): string => execFileSync('tmux', args, { encoding: 'utf8' });
const screen = (): string => tmux('capture-pane', '-p', '-t', session, '-S', '-200');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, predicate: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${screen()}`);
    await sleep(100);
  }
}

(hasTmux ? it : it.skip)(
  'five messages in tmux: each answer grows on the screen as it is written',
  async () => {
    const cmd = [
      process.execPath,
      BIN,
      'chat',
      '--model',
      'typed',
      '--no-format',
      '--task-queue',
      taskQueue,
      '--address',
      address,
    ]
      .map((a) => `'${a}'`)
      .join(' ');
    const env = `MCP_TURNS_HOME='${home}' ANTHROPIC_BASE_URL='${stub.url}' ANTHROPIC_API_KEY=test NO_COLOR=1`;
    tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '60', `env ${env} ${cmd}`);
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
    tmux('send-keys', '-t', session, 'C-d');
  },
);
