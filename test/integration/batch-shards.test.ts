/**
 * Wide batch windows are split over several `chatBatch` workflows (shards); every query is still
 * reported exactly once. (The 200-query kill-and-resume must-show lives in batch.test.ts.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { runCli } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-shards-'));
const taskQueue = uniqueQueue('shards');
const name = `shards-${Date.now().toString(36)}`;
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
let stub: StubModel;
let worker: ChildProcess;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      batch: {
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
          { content: [{ type: 'text', text: 'answered {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'A: {{toolResults}}' }] },
      },
    },
  });
  worker = await startWorkerProcess({ config: { mcp_servers: { everything: everythingStdio() } }, taskQueue, stubUrl: stub.url });
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await stub?.close();
});

it('splits a wide window over several batch workflows and still reports every query once', async () => {
  const input = path.join(dir, 'wide.jsonl');
  const out = path.join(dir, 'wide.results.jsonl');
  fs.writeFileSync(input, Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: `w${i}`, question: `wide ${i}`, model: 'batch' })).join('\n'));
  const res = await runCli(['batch', input, '--concurrency', '60', '--out', out, '--name', name, '--task-queue', taskQueue, '--address', address], { timeoutMs: 120_000 });
  expect(res.code).toBe(0);
  const ids = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id as string);
  expect(ids.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `w${i}`).sort());
  const firstSteps = stub.requests.filter((r) => r.kind === 'step' && r.step === 0 && r.status === 200);
  expect(firstSteps).toHaveLength(30);
  const client = new Client({ connection: await Connection.connect({ address }) });
  try {
    const shards: string[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowType = 'chatBatch' AND McpTurnsBatch = '${name}'` })) shards.push(w.workflowId);
    expect(shards.sort()).toEqual([1, 2, 3].map((i) => `batch-${name}-s${i}-of-3`));
  } finally {
    await client.connection.close();
  }
});
