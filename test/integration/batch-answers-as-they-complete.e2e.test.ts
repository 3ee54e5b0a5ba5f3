/**
 * A batch's answers are written as their turns complete, whatever their shard is doing: 60 queries
 * through Message Batches over three shards, the worker SIGKILLed once after the first Message Batch
 * was created, one query's request errored in its Message Batch (four times, so its turn straggles
 * for several rounds). The other 59 answers must be in the results file while the straggler's turn
 * still runs, and the last progress line must count what the file holds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { WorkflowNotFoundError } from '@temporalio/client';
import { batchChildId } from '../../src/core/batch';
import { startStubModel, type Scenario, type StubModel } from '../../src/stub';
import { BIN } from '../support/cli';
import { spawn } from 'node:child_process';
import { everythingStdio } from '../support/mcp-servers';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';
import { until } from '../support/until';

jest.setTimeout(240_000);

const MODEL = 'claude-sonnet-4-6';
const QUERIES = 60;
const STRAGGLER = 'q7';
const oneRound: Scenario = {
  steps: [
    { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'echo {{question}}' } }] },
    { content: [{ type: 'text', text: 'answered {{toolResults}}' }] },
  ],
  formatter: { conversation: [{ type: 'text', content: 'A: {{question}}' }] },
};
// The straggler: its first request errors (overloaded, retryable) in four Message Batches in a row.
const errorsInItsBatch: Scenario = { ...oneRound, faults: [{ step: 0, status: 529, times: 4 }] };
const config = {
  mcp_servers: { everything: everythingStdio({ local_activity: false }) },
  claude: { messageBatches: { maxWaitMs: 1000, pollInitialMs: 300, pollMaxMs: 1000 } },
};

let stub: StubModel;
const processes: ChildProcess[] = [];
afterAll(async () => {
  for (const p of processes) if (p.exitCode === null) p.kill('SIGKILL');
  await stub?.close();
});

function lines(file: string): Array<{ id: string; status: string; answer?: string }> {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; status: string; answer?: string });
}

test('after a worker SIGKILL, every answer is in the results file as its turn completes, before the straggler of its shard', async () => {
  stub = await startStubModel({ scenarios: { 'one-round': oneRound, 'errors-in-its-batch': errorsInItsBatch }, defaultScenario: 'one-round', messageBatches: { processingMs: 1500 } });
  const taskQueue = uniqueQueue('batch-as-they-complete');
  const start = (): Promise<ChildProcess> => startWorkerProcess({ config, taskQueue, stubUrl: stub.url }).then((w) => (processes.push(w), w));
  const first = await start();

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-as-they-complete-'));
  const name = `asc-${Date.now().toString(36)}`;
  const file = path.join(dir, 'queries.jsonl');
  const out = path.join(dir, 'results.jsonl');
  const question = (i: number): string => `query ${i}${`q${i}` === STRAGGLER ? ' [[scenario:errors-in-its-batch]]' : ''}`;
  fs.writeFileSync(file, Array.from({ length: QUERIES }, (_, i) => JSON.stringify({ id: `q${i + 1}`, question: question(i + 1), model: MODEL })).join('\n') + '\n');

  // Concurrency 60: three shards of 20.
  const cli = spawn(process.execPath, [BIN, 'batch', file, '--name', name, '--out', out, '--concurrency', '60', '--message-batches', '--task-queue', taskQueue], {
    env: { ...process.env, TEMPORAL_ADDRESS: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: stub.url },
  });
  processes.push(cli);
  let stderr = '';
  cli.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => cli.once('exit', r));

  await until(() => stub.messageBatches.batches.length > 0, 'the first Message Batch', 90_000);
  first.kill('SIGKILL');
  await start();

  // Every other answer lands in the file while the straggler's turn is still running.
  await until(() => lines(out).length >= QUERIES - 1, `${QUERIES - 1} lines in ${out}; stderr so far:\n${stderr}`, 120_000);
  const client = await testClient();
  const straggler = client.workflow.getHandle(batchChildId(name, STRAGGLER));
  const status = await straggler.describe().then(
    (d) => d.status.name,
    (err: unknown) => (err instanceof WorkflowNotFoundError ? 'NOT_FOUND' : Promise.reject(err)),
  );
  expect(status).toBe('RUNNING');
  expect(lines(out).map((l) => l.id)).not.toContain(STRAGGLER);

  expect(await exited).toBe(0);
  const written = lines(out);
  expect(written.map((l) => l.id).sort()).toEqual(Array.from({ length: QUERIES }, (_, i) => `q${i + 1}`).sort());
  expect(written.filter((l) => l.status !== 'completed')).toEqual([]);
  for (const l of written) expect(l.answer).toBe(`A: ${question(Number(l.id.slice(1)))}`);
  // The straggler's request errored in four Message Batches, then was answered once.
  const stragglerRequests = stub.messageBatches.batches.flatMap((b) => b.requests.filter((r) => r.question === question(7) && r.kind === 'step' && r.step === 0));
  expect(stragglerRequests.map((r) => r.outcome)).toEqual(['errored', 'errored', 'errored', 'errored', 'succeeded']);
  expect(stub.messageBatches.duplicateSubmissions()).toEqual([]);
  // The last progress line counts what the file holds.
  const progress = stderr.split('\n').filter((l) => l.startsWith(`batch ${name}: `) && / done · /.test(l));
  expect(progress.at(-1)).toMatch(new RegExp(`^batch ${name}: ${QUERIES}/${QUERIES} done · 0 failed`));
  await client.connection.close();
});
