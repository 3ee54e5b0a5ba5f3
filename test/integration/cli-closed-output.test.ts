/**
 * Output to a closed pipe (`run … | head -2`, `watch ID | head -1`), as a shell makes it: the reader
 * closes its end after the first lines. The command ends quietly (141, or as it would have), never
 * with a stack, and a `run` that runs its own worker keeps it until the turn has ended.
 */
import { spawn } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { BIN, runCli } from '../support/cli';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
let stub: StubModel;
let client: Client;

beforeAll(async () => {
  // Slow text: the turn writes long after the reader has gone.
  const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
  stub = await startStubModel({ defaultScenario: 'slow', scenarios: { slow: { streamDelayMs: 100, steps: [{ content: [{ type: 'text', text: words }] }] } } });
  client = await testClient();
});

afterAll(async () => {
  await client?.connection.close();
  await stub?.close();
});

/** Runs the CLI, closes the read end of its stdout after `lines` lines; its exit code and stderr. */
function closedAfter(args: string[], lines: number): Promise<{ code: number | null; stderr: string; read: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: stub.url, TEMPORAL_ADDRESS: address },
  });
  let read = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    read += d.toString();
    if (read.split('\n').length > lines) child.stdout.destroy(); // as `head` exits
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr, read })));
}

it('a run with its own worker keeps it until the turn ends once its output is closed, and ends quietly', async () => {
  const taskQueue = uniqueQueue('closed-run');
  const { code, stderr, read } = await closedAfter(['run', 'slow', '--events', '--task-queue', taskQueue], 2);
  const turnId = (JSON.parse(read.split('\n')[0]!) as { turnId: string }).turnId;
  expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
  expect(code).toBe(0);
  // Its worker stayed until the turn ended.
  expect((await client.workflow.getHandle(turnId).describe()).status.name).toBe('COMPLETED');
});

it('watch ends quietly with 141 when its reader goes, in either form', async () => {
  const taskQueue = uniqueQueue('closed-watch');
  const worker = await startWorkerProcess({ config: {}, taskQueue, stubUrl: stub.url });
  try {
    for (const form of [[], ['--events']]) {
      const started = await runCli(['run', 'slow', '--no-wait', '--task-queue', taskQueue, '--address', address]);
      const turnId = /started (turn-\S+)/.exec(started.stdout)![1]!;
      const { code, stderr } = await closedAfter(['watch', turnId, ...form], 1);
      expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
      expect(code).toBe(141);
      await client.workflow.getHandle(turnId).result();
    }
  } finally {
    worker.kill('SIGTERM');
  }
});
