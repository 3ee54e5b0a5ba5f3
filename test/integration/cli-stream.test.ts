/**
 * Streaming at the command line, run as a user runs it (the real CLI, a worker process, the stub in
 * this process streaming word by word): `run --events` prints the turn's stream as JSON lines as it
 * is written; `watch --events` of the closed turn prints the same stream; `watch` prints the text,
 * the tool calls and how the turn ended; `run` on a terminal prints the tools offered in a line, the
 * text as it is written and the answer once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import type { TurnStreamEvent } from '../../src/core/stream-events';
import { conversationTurnId } from '../../src/core/conversation';
import { closeConversation } from '../../src/client/conversation-client';
import { BIN, runCli } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';
import { finalText } from '../support/stream-events';

jest.setTimeout(60_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const taskQueue = uniqueQueue('cli-stream');
const common = ['--task-queue', taskQueue, '--address', address];
const connection = ['--address', address];

const text = (t: string) => ({ type: 'text' as const, text: t });
const FORTY_WORDS = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(' ');
const WORDS_ANSWER = 'Forty words, written one by one.';
const REPEATED_ANSWER = 'The answer is forty-two, said once.';

let stub: StubModel;
let worker: ChildProcess;
let client: Client;
/** chat keeps its unanswered messages here. */
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-cli-stream-'));

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      words: {
        streamDelayMs: 100,
        steps: [{ content: [text(FORTY_WORDS)] }],
        formatter: { conversation: [{ type: 'text', content: WORDS_ANSWER }] },
      },
      echo: {
        steps: [
          {
            content: [
              text('Echoing.'),
              { type: 'tool_use', name: 'everything__echo', input: { message: 'from the stream' } },
            ],
          },
          { content: [text('The echo is back.')] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'The tool said: {{toolResults}}' }] },
      },
      // No formatter scripted: the stub's formatter writes Claude's last words again as the answer.
      repeat: { streamDelayMs: 20, steps: [{ content: [text(REPEATED_ANSWER)] }] },
    },
  });
  client = await testClient();
  worker = await startWorkerProcess({
    config: { mcp_servers: { everything: everythingStdio() } },
    taskQueue,
    stubUrl: stub.url,
  });
});

afterAll(async () => {
  if (worker && worker.exitCode === null) worker.kill('SIGTERM');
  await client?.connection.close();
  await stub?.close();
});

interface Line {
  text: string;
  at: number;
}

/** Runs the CLI, keeping each stdout line with the time it arrived. */
function runTimed(
  args: string[],
  timeoutMs = 30_000,
): Promise<{ code: number | null; lines: Line[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: process.env });
    const lines: Line[] = [];
    let partial = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      const at = Date.now();
      const parts = (partial + d.toString()).split('\n');
      partial = parts.pop()!;
      for (const t of parts) lines.push({ text: t, at });
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcp-turns ${args.join(' ')} timed out\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (partial) lines.push({ text: partial, at: Date.now() });
      resolve({ code, lines, stderr });
    });
  });
}

const parse = (lines: readonly string[]): TurnStreamEvent[] =>
  lines.filter(Boolean).map((l) => JSON.parse(l) as TurnStreamEvent);

const wordsId = `cli-stream-words-${Date.now().toString(36)}`;
let runEvents: TurnStreamEvent[] = [];

it('run --events prints the stream as JSON lines as it is written, and nothing else on stdout', async () => {
  const run = await runTimed([
    'run',
    'count to forty',
    '--model',
    'words',
    '--id',
    wordsId,
    '--events',
    ...common,
  ]);
  expect(run.stderr).not.toMatch(/mcp-turns:/);
  expect(run.code).toBe(0);
  runEvents = parse(run.lines.map((l) => l.text));
  expect(runEvents.length).toBe(run.lines.filter((l) => l.text).length);
  expect(runEvents.map((e) => e.offset)).toEqual(runEvents.map((_, i) => i));
  expect(runEvents.every((e) => e.turnId === wordsId)).toBe(true);
  expect(runEvents[0]).toMatchObject({ type: 'start', question: 'count to forty' });
  // What the turn offered Claude, before its first step: server-everything's tools.
  expect(runEvents[1]).toMatchObject({ type: 'data-tools', deferred: [], unavailable: [] });
  expect(runEvents[2]).toMatchObject({ type: 'start-step', step: 1 });
  expect(runEvents[runEvents.length - 1]).toMatchObject({
    type: 'finish',
    status: 'completed',
    stopReason: 'completed',
  });
  expect(finalText(runEvents, 'step-1')).toBe(FORTY_WORDS);

  const shown = JSON.parse((await runCli(['show', wordsId, '--json', ...connection])).stdout) as {
    result: { response: { conversation: string } };
  };
  expect(shown.result.response.conversation).toBe(WORDS_ANSWER);
  expect(finalText(runEvents, 'answer')).toBe(shown.result.response.conversation);

  // The first words reach the command's stdout soon after the Claude call starts, long before the reply ends.
  const call = stub.requests.find((r) => r.scenario === 'words' && r.kind === 'step')!;
  const deltas = run.lines.filter((l) => l.text.includes('"type":"text-delta"'));
  const stepDeltas = deltas.filter((l) => l.text.includes('"id":"step-1"'));
  expect(deltas[0]!.at - call.startedAt).toBeLessThan(600);
  expect(stepDeltas[stepDeltas.length - 1]!.at - stepDeltas[0]!.at).toBeGreaterThan(3000);
  expect(deltas[deltas.length - 1]!.at - call.startedAt).toBeGreaterThanOrEqual(4000);
});

it('watch --from 0 --events of the closed turn prints the same stream; --from N from offset N', async () => {
  expect(runEvents.length).toBeGreaterThan(10); // run --events above printed them
  const watch = await runCli(['watch', wordsId, '--from', '0', '--events', ...connection]);
  expect(watch.code).toBe(0);
  expect(watch.stderr).toBe('');
  expect(parse(watch.stdout.split('\n'))).toEqual(runEvents);

  const from = await runCli(['watch', wordsId, '--from', '7', '--events', ...connection]);
  expect(from.code).toBe(0);
  expect(parse(from.stdout.split('\n'))).toEqual(runEvents.slice(7));
});

it('watch prints the text, the tool calls, the answer and how the turn ended; an unknown id is one line, exit 2', async () => {
  const id = `cli-stream-echo-${Date.now().toString(36)}`;
  const run = await runCli(['run', 'echo please', '--model', 'echo', '--id', id, ...common]);
  expect(run.code).toBe(0);
  // Not a terminal: today's output, the answer once.
  expect(run.stdout.startsWith('The tool said: Echo: from the stream\n')).toBe(true);
  expect(run.stdout).toMatch(/Tool calls \(1\):\n {2}step 1 · everything__echo/);

  const watch = await runCli(['watch', id, ...connection]);
  expect(watch.code).toBe(0);
  expect(watch.stdout).toMatch(
    new RegExp(
      [
        '^you> echo please',
        'Echoing\\.',
        '→ everything · echo \\{"message":"from the stream"\\}',
        '✓ everything · echo · \\d+ ms',
        'The echo is back\\.',
        '',
        'The tool said: Echo: from the stream\\n$',
      ].join('\\n'),
    ),
  );
  expect(watch.stderr).toMatch(
    new RegExp(`^turn ${id} completed · completed · \\d+ in / \\d+ out tokens · \\$\\d+\\.\\d{4}\\n$`),
  );

  // Formatter off: the answer is the last step's text, printed once as it was written.
  const plainId = `cli-stream-plain-${Date.now().toString(36)}`;
  expect(
    (await runCli(['run', 'echo please', '--model', 'echo', '--no-format', '--id', plainId, ...common])).code,
  ).toBe(0);
  const plain = await runCli(['watch', plainId, ...connection]);
  expect(plain.code).toBe(0);
  expect(plain.stdout.split('The echo is back.')).toHaveLength(2);
  expect(plain.stdout.endsWith('The echo is back.\n')).toBe(true);

  const missing = await runCli(['watch', 'no-such-turn', ...connection]);
  expect(missing.code).toBe(2);
  expect(missing.stdout).toBe('');
  expect(missing.stderr.trim()).toBe('mcp-turns: no turn, conversation or batch named no-such-turn in namespace default (no workflow no-such-turn, batch-no-such-turn or batch-no-such-turn-sI-of-N)');
});

it("chat --events prints each message's turn as its stream, and nothing else on stdout", async () => {
  const id = `cli-stream-chat-${Date.now().toString(36)}`;
  const chat = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [BIN, 'chat', '--id', id, '--model', 'echo', '--events', ...common],
      { env: { ...process.env, MCP_TURNS_HOME: home } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end('first\nsecond\n');
  });
  expect(chat.code).toBe(0);
  const events = parse(chat.stdout.split('\n'));
  const turns = [...new Set(events.map((e) => e.turnId))];
  expect(turns).toEqual([conversationTurnId(id, 0), conversationTurnId(id, 1)]);
  for (const turnId of turns) {
    const own = events.filter((e) => e.turnId === turnId);
    expect(own.map((e) => e.offset)).toEqual(own.map((_, i) => i));
    expect(own[0]).toMatchObject({ type: 'start' });
    expect(own[own.length - 1]).toMatchObject({ type: 'finish', status: 'completed' });
    expect(finalText(own, 'answer')).toBe('The tool said: Echo: from the stream');
  }
  expect(chat.stderr).toContain(`  turn ${conversationTurnId(id, 1)} · completed\n`);

  // watch of the open conversation: its turns one after the other, until Ctrl-C (exit 130, quietly).
  const watching = spawn(process.execPath, [BIN, 'watch', id, ...connection], { env: process.env });
  let out = '';
  let err = '';
  watching.stdout.on('data', (d: Buffer) => (out += d.toString()));
  watching.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => watching.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  while (!err.includes(conversationTurnId(id, 1)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  expect(out).toMatch(
    /^you> first\nEchoing\.\n[^]*\nyou> second\n[^]*The tool said: Echo: from the stream\n$/,
  );
  expect(out.split('The tool said: Echo: from the stream')).toHaveLength(3);
  watching.kill('SIGINT');
  expect(await exited).toBe(130);
  const ended = (n: number) =>
    `  turn ${conversationTurnId(id, n)} completed · completed · \\d+ in / \\d+ out tokens · \\$\\d+\\.\\d{4}\\n`;
  expect(err).toMatch(new RegExp(`^${ended(0)}${ended(1)}$`));

  // Closed, the conversation's stream ends: one offset sequence over its turns.
  await closeConversation(client, id);
  const closed = await runCli(['watch', id, '--events', ...connection]);
  expect(closed.code).toBe(0);
  const whole = parse(closed.stdout.split('\n'));
  expect(whole.map((e) => e.offset)).toEqual(whole.map((_, i) => i));
  expect(whole.map((e) => [e.turnId, e.type])).toEqual(events.map((e) => [e.turnId, e.type]));
});

// A terminal: python's pty module gives the command one (stdout, stderr and stdin).
const hasPty = spawnSync('python3', ['-c', 'import pty'], { stdio: 'ignore' }).status === 0;
/** Runs `mcp-turns <args>` on a terminal; what it printed there, without the dimming. */
function onTerminal(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'python3',
      ['-c', 'import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)', process.execPath, BIN, ...args],
      { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no end on the terminal:\n${out}`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        out: out.replace(/\r\n/g, '\n').split('\x1b[2m').join('').split('\x1b[22m').join(''),
      });
    });
  });
}

(hasPty ? it : it.skip)(
  'run on a terminal prints the text and the tool calls as they are written, and the answer once',
  async () => {
    const tty = await onTerminal(['run', 'echo please', '--model', 'echo', ...common]);
    expect(tty.code).toBe(0);
    // First, what the turn offers Claude, in one line (on stderr).
    expect(tty.out).toMatch(/^tools: \d+ offered \(everything \d+\)( · \d+ dropped \([^\n]*\))?\nEchoing\.\n/);
    expect(tty.out).toMatch(
      /Echoing\.\n→ everything · echo \{"message":"from the stream"\}\n✓ everything · echo · \d+ ms\nThe echo is back\.\n\nThe tool said: Echo: from the stream\n\nTool calls \(1\):\n {2}step 1 · everything__echo/,
    );
    expect(tty.out.split('The tool said: Echo: from the stream')).toHaveLength(2);
    expect(tty.out).toMatch(/Temporal UI: http/);
  },
);

(hasPty ? it : it.skip)(
  "run on a terminal prints an answer the formatter wrote as Claude's last words once; --json keeps the whole result",
  async () => {
    const id = `cli-stream-repeat-${Date.now().toString(36)}`;
    const tty = await onTerminal(['run', 'what is it?', '--model', 'repeat', '--id', id, ...common]);
    expect(tty.code).toBe(0);
    expect(tty.out.split(REPEATED_ANSWER)).toHaveLength(2);
    expect(tty.out).toMatch(new RegExp(`^tools: [^\n]+\n${REPEATED_ANSWER}\n\nStop reason: completed · steps 1 · model repeat · formatter forced\n`));

    // The formatter did write the answer: the stream and the result carry it.
    const shown = JSON.parse((await runCli(['show', id, '--json', ...connection])).stdout) as {
      result: { response: { conversation: string }; formatMode: string };
    };
    expect(shown.result.response.conversation).toBe(REPEATED_ANSWER);
    expect(shown.result.formatMode).toBe('forced');
    const json = await runCli(['run', 'what is it?', '--model', 'repeat', '--json', ...common]);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { response: { conversation: string } }).response.conversation).toBe(REPEATED_ANSWER);
  },
);
