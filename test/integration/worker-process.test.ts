/**
 * A real `mcp-turns worker` process as an operator starts it from a config file: it starts without
 * warnings its own design causes, and its config's turn defaults reach the turns it runs (the
 * tools offered to Claude per request, through the real SDK to the scripted stub).
 */
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { executeChatTurn } from '../../src/client/chat-turn-client';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { everythingStdio } from '../support/mcp-servers';
import { startWorkerProcess } from '../support/worker-process';
import { uniqueQueue } from '../support/temporal';
import { testDataConverter } from '../support/settings';
import { stopChild } from './mcp-fixtures';

jest.setTimeout(120_000);

const taskQueue = uniqueQueue('worker-process');
let stub: StubModel;
let worker: ChildProcess;
let stderr = '';
let client: Client;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: { answer: { steps: [{ content: [{ type: 'text', text: 'no tool needed' }] }], formatter: { conversation: [{ type: 'text', content: 'done' }] } } },
  });
  worker = await startWorkerProcess({
    // Two servers of server-everything: more tools than the default 15 per request.
    config: { mcp_servers: { a: everythingStdio(), b: everythingStdio() }, claude: { maxToolsPerRequest: 40 } },
    taskQueue,
    stubUrl: stub.url,
    onStderr: (text) => (stderr += text),
  });
  const connection = await Connection.connect({ address: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection, ...clientStorageOptions(testDataConverter()) });
});

afterAll(async () => {
  if (worker) await stopChild(worker);
  await client?.connection.close();
  await stub?.close();
});

it("offers Claude as many tools per request as the config's claude.maxToolsPerRequest, past the default 15", async () => {
  const result = await executeChatTurn(client, { question: 'what can you do?', model: 'answer' }, { taskQueue });
  expect(result.stopReason).toBe('completed');
  const [step] = stub.requests.filter((r) => r.scenario === 'answer' && r.kind === 'step');
  const offered = (step!.body.tools as Array<{ name: string }>).map((t) => t.name);
  expect(offered.length).toBeGreaterThan(15);
  expect(offered.length).toBeLessThanOrEqual(40);
  expect(offered.filter((n) => n.startsWith('a__')).length).toBe(offered.filter((n) => n.startsWith('b__')).length);
  expect(result.droppedTools).not.toContainEqual(expect.objectContaining({ reason: expect.stringMatching(/maxToolsPerRequest/) }));
});

it('starts without the "No workflows registered" warning of its activity-only Claude-queue worker, and stops cleanly', async () => {
  // A streamed turn's Claude call runs on the Claude queue: that worker has been running a while.
  await executeChatTurn(client, { question: 'streamed', model: 'answer', stream: true }, { taskQueue });
  const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
  worker.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(stderr).not.toContain('No workflows registered');
});
