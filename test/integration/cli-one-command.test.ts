/**
 * `mcp-turns run` and `batch` with nothing else running: the first command starts the dev server in
 * the background and a worker in its own process; the next command finds that server; with a worker
 * process polling the queue, the commands use it. Claude is the scripted stub.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { liveWorkflowPollers } from '../../src/client/task-queue-pollers';
import { readDevServerRecord } from '../../src/temporal/dev-server-record';
import { portIsOpen } from '../../src/temporal/dev-server';
import { processAlive } from '../../src/temporal/process-alive';
import { ownStateEnv, runCli } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { freePort } from '../support/ports';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(150_000);

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-one-command-'));
const config = path.join(home, 'cfg.json');
let stub: StubModel;
let address: string;
let port: number;
let env: NodeJS.ProcessEnv;
let worker: ChildProcess | undefined;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      one: {
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
          { content: [{ type: 'text', text: 'done' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'answer: {{toolResults}}' }] },
      },
    },
  });
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { everything: everythingStdio() } }));
  port = await freePort();
  address = `127.0.0.1:${port}`;
  env = ownStateEnv(home, stub.url);
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await stub?.close();
  // The dev server the first command left running: stopped by the test that checks --stop, else here.
  const record = readDevServerRecord(address, env.MCP_TURNS_HOME!);
  if (record && processAlive(record.pid)) process.kill(record.pid, 'SIGKILL');
});

it('run --config starts the dev server and a worker; the next command reuses the server; a polling worker is used; server --stop ends it', async () => {
  const t0 = Date.now();
  const first = await runCli(
    ['run', 'first question', '--config', config, '--address', address, '--model', 'one', '--json'],
    { env, timeoutMs: 120_000 },
  );
  const firstMs = Date.now() - t0;
  expect(first.code).toBe(0);
  expect(JSON.parse(first.stdout).response.conversation).toBe('answer: Echo: first question');
  expect(first.stderr).toContain(
    `No Temporal server answers on ${address}: starting the dev server in the background`,
  );
  expect(first.stderr).toContain(`\`mcp-turns server --stop --port ${port}\` stops it`);
  expect(first.stderr).toContain(
    'No worker polls task queue mcp-turns: running one in this process until the command ends (config',
  );
  expect(first.stderr).toContain('MCP servers: everything');
  const record = readDevServerRecord(address, env.MCP_TURNS_HOME!);
  expect(record).toMatchObject({ address, uiUrl: `http://127.0.0.1:${port + 1000}` });
  expect(fs.existsSync(path.join(env.MCP_TURNS_HOME!, 'temporal.db'))).toBe(true);

  // The second command finds the first one's server (no start) and runs its own worker again: the
  // first worker's poller is still listed by Temporal, but its process is gone.
  const t1 = Date.now();
  const second = await runCli(
    ['run', 'second question', '--config', config, '--address', address, '--model', 'one'],
    { env },
  );
  const secondMs = Date.now() - t1;
  expect(second.code).toBe(0);
  expect(second.stdout).toContain('answer: Echo: second question');
  expect(second.stdout).toContain(
    `Temporal UI: http://127.0.0.1:${port + 1000}/namespaces/default/workflows/turn-`,
  );
  expect(second.stderr).not.toContain('starting the dev server');
  expect(second.stderr).toContain('running one in this process');

  const input = path.join(home, 'questions.jsonl');
  fs.writeFileSync(
    input,
    ['b1', 'b2', 'b3'].map((q) => JSON.stringify({ id: q, question: q, model: 'one' })).join('\n'),
  );
  const batch = await runCli(['batch', input, '--config', config, '--address', address], { env });
  expect(batch.code).toBe(0);
  expect(batch.stderr).toContain('running one in this process');
  expect(batch.stdout).toMatch(/^3 results in .*: 3 answered, 0 failed$/m);
  const results = fs
    .readFileSync(input.replace(/\.jsonl$/, '.results.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; answer: string });
  expect(results.map((r) => [r.id, r.answer]).sort()).toEqual([
    ['b1', 'answer: Echo: b1'],
    ['b2', 'answer: Echo: b2'],
    ['b3', 'answer: Echo: b3'],
  ]);

  // With a worker process polling the queue, run uses it and says --config is not used.
  worker = await startWorkerProcess({
    config: { mcp_servers: { everything: everythingStdio() } },
    taskQueue: 'mcp-turns',
    stubUrl: stub.url,
    env: { TEMPORAL_ADDRESS: address, ...env },
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  try {
    for (let i = 0; i < 50 && !(await liveWorkflowPollers(client, 'mcp-turns')).length; i++)
      await new Promise((r) => setTimeout(r, 100));
  } finally {
    await connection.close();
  }
  const third = await runCli(
    ['run', 'third question', '--config', config, '--address', address, '--model', 'one'],
    { env },
  );
  expect(third.code).toBe(0);
  expect(third.stdout).toContain('answer: Echo: third question');
  expect(third.stderr).toMatch(
    /A worker already polls task queue mcp-turns \(\d+@.+\): it runs the work with its own config; --config is not used\./,
  );
  expect(third.stderr).not.toContain('running one in this process');
  worker.kill('SIGTERM');
  worker = undefined;

  const stop = await runCli(['server', '--stop', '--port', String(port)], { env });
  expect(stop.code).toBe(0);
  expect(stop.stdout).toContain(`Stopped the Temporal dev server on ${address} (pid ${record!.pid})`);
  expect(processAlive(record!.pid)).toBe(false);
  expect(await portIsOpen('127.0.0.1', port)).toBe(false);
  // --state-dir is where the records are looked for (and MCP_TURNS_HOME's stand-in).
  const elsewhere = path.join(home, 'elsewhere');
  const none = await runCli(['--state-dir', elsewhere, 'server', '--stop', '--port', String(port)], { env });
  expect(none.code).toBe(2);
  expect(none.stderr.trim()).toBe(`mcp-turns: no dev server started by mcp-turns runs on ${address} (records in ${elsewhere})`);
  console.log(
    `run with nothing running: ${(firstMs / 1000).toFixed(1)} s (dev server start included); second run ${(secondMs / 1000).toFixed(1)} s`,
  );
});
