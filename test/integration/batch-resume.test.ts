/**
 * Batch mode as an operator uses it: 200 queries at concurrency 20 through `mcp-turns batch`, the
 * CLI SIGKILLed halfway and run again. Every result line ends up present exactly once, bad input
 * lines are reported by number while the rest runs, and no query reaches Claude twice (the stub
 * counts requests per question).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { startStubModel, type StubModel } from '../../src/stub';
import { BIN, runCli } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { uniqueQueue } from '../support/temporal';

jest.setTimeout(180_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-batch-'));
const input = path.join(dir, 'queries.jsonl');
const out = path.join(dir, 'results.jsonl');
const taskQueue = uniqueQueue('batch');
const name = `resume-${Date.now().toString(36)}`;
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
let stub: StubModel;
let worker: ChildProcess;

const lines = (): Array<{ id: string; status: string; answer?: string }> =>
  fs.existsSync(out) ? fs.readFileSync(out, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)) : [];

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      batch: {
        latencyMs: 40,
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
          { content: [{ type: 'text', text: 'answered {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'A: {{toolResults}}' }] },
      },
    },
  });
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ mcp_servers: { everything: everythingStdio() }, claude: { maxConcurrentCalls: 40 } }));
  worker = spawn(process.execPath, [BIN, 'worker', '--config', config, '--task-queue', taskQueue, '--log-level', 'WARN'], {
    env: { ...process.env, TEMPORAL_ADDRESS: address, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: stub.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => worker.stdout!.on('data', (d: Buffer) => d.toString().includes('mcp-turns worker on') && resolve()));

  const rows: string[] = [];
  for (let i = 1; i <= 200; i++) {
    rows.push(JSON.stringify(i % 2 ? { question: `q${i}`, model: 'batch' } : { id: `item-${i}`, question: `q${i}`, model: 'batch' }));
    if (i === 50) rows.push('{ this is not json');
    if (i === 120) rows.push(JSON.stringify({ id: 'no-question', model: 'batch' }));
  }
  fs.writeFileSync(input, rows.join('\n') + '\n');
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await stub?.close();
});

const args = ['batch', input, '--concurrency', '20', '--out', out, '--name', name, '--task-queue', taskQueue, '--address', address];

it('survives the CLI being killed halfway, and never runs a query twice', async () => {
  const first = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  first.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 120_000;
  while (lines().length < 60) {
    if (Date.now() > deadline || first.exitCode !== null) throw new Error(`batch did not get to 60 results: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  const atKill = lines().length;
  expect(atKill).toBeLessThan(200);
  expect(stderr).toContain(`${input}:51: not JSON`);
  expect(stderr).toMatch(new RegExp(`${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:122: question: `));

  const second = await runCli(args, { timeoutMs: 150_000 });
  expect(second.code).toBe(0);
  const results = lines();
  expect(results).toHaveLength(200);
  expect(new Set(results.map((r) => r.id)).size).toBe(200);
  expect(results.every((r) => r.status === 'completed')).toBe(true);
  expect(results.find((r) => r.id === 'item-2')!.answer).toContain('Echo: q2');
  expect(second.stdout).toMatch(/^200 results in .*: 200 completed, 0 failed$/m);
  expect(second.stdout).toMatch(/^tokens: \d+ in, \d+ out, \d+ cache read, \d+ cache write · cost \$\d+\.\d{4}$/m);
  expect(second.stdout).toMatch(/^turn time: p50 \d+\.\d\d s, p95 \d+\.\d\d s$/m);

  // Every question reached Claude's first step exactly once, across both runs of the CLI.
  const firstSteps = new Map<string, number>();
  for (const r of stub.requests.filter((q) => q.kind === 'step' && q.step === 0 && q.status === 200)) {
    const q = r.body.messages[0].content as string;
    firstSteps.set(q, (firstSteps.get(q) ?? 0) + 1);
  }
  expect(firstSteps.size).toBe(200);
  expect([...firstSteps.values()].every((n) => n === 1)).toBe(true);

  // A third run has nothing left to run: same file, no new Claude requests.
  const before = stub.requests.length;
  const third = await runCli(args, { timeoutMs: 60_000 });
  expect(third.code).toBe(0);
  expect(lines()).toHaveLength(200);
  expect(stub.requests.length).toBe(before);
});

it('splits a wide window over several batch workflows and still reports every query once', async () => {
  const wide = path.join(dir, 'wide.jsonl');
  const wideOut = path.join(dir, 'wide.results.jsonl');
  fs.writeFileSync(wide, Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: `w${i}`, question: `wide ${i}`, model: 'batch' })).join('\n'));
  const res = await runCli(['batch', wide, '--concurrency', '60', '--out', wideOut, '--name', `${name}-wide`, '--task-queue', taskQueue, '--address', address], { timeoutMs: 120_000 });
  expect(res.code).toBe(0);
  const ids = fs.readFileSync(wideOut, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id as string);
  expect(ids.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `w${i}`).sort());
  const { Client, Connection } = await import('@temporalio/client');
  const client = new Client({ connection: await Connection.connect({ address }) });
  try {
    const shards: string[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowType = 'chatBatch' AND McpTurnsBatch = '${name}-wide'` })) shards.push(w.workflowId);
    expect(shards.sort()).toEqual([1, 2, 3].map((i) => `batch-${name}-wide-s${i}-of-3`));
  } finally {
    await client.connection.close();
  }
});
