/**
 * Durability, the reason mcp-turns exists: the worker process is SIGKILLed in the middle of a tool
 * call and, separately, in the middle of a Claude call; a new worker finishes the turn with the same
 * answer as an undisturbed run, and nothing that had completed runs again (the stub counts Claude
 * requests, the counting MCP server counts tool executions). The histories are then scanned for the
 * API key and the injected secret.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { startChatTurn } from '../../src/client/chat-turn-client';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { BIN } from '../support/cli';
import { countingStdio } from '../support/mcp-servers';
import { testClient, uniqueQueue } from '../support/temporal';
import { TEST_API_KEY } from '../support/turn-harness';

jest.setTimeout(180_000);

const INJECTED = 'injected-token-91c7e2-worker-only';
const ENV_SECRET = 'server-env-secret-5d8a11';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-durable-'));

let stub: StubModel;
let client: Client;
const workers: ChildProcess[] = [];

/** One turn's own worker config and count of tool executions (its own counting server). */
interface Run {
  configFile: string;
  countFile: string;
}

function newRun(name: string): Run {
  const countFile = path.join(dir, `${name}.count.jsonl`);
  const configFile = path.join(dir, `${name}.mcp-turns.json`);
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      mcp_servers: {
        counting: countingStdio(countFile, {
          env: { COUNT_FILE: countFile, SECRET_FOR_SERVER: '${COUNTING_SECRET}' },
          inject: { access_token: INJECTED },
          heartbeat_timeout_ms: 2000,
        }),
      },
    }),
  );
  return { configFile, countFile };
}

function executions(run: Run): Array<{ tool: string; args: { label: string } }> {
  if (!fs.existsSync(run.countFile)) return [];
  return fs.readFileSync(run.countFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

function startWorker(run: Run, taskQueue: string): ChildProcess {
  const child = spawn(process.execPath, [BIN, 'worker', '--config', run.configFile, '--task-queue', taskQueue], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: stub.url,
      COUNTING_SECRET: ENV_SECRET,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.resume();
  child.stderr!.resume();
  workers.push(child);
  return child;
}

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const scenario = {
  steps: [
    { content: [{ type: 'text' as const, text: 'Counting first.' }, { type: 'tool_use' as const, name: 'counting__count', input: { label: 'a' } }] },
    { content: [{ type: 'tool_use' as const, name: 'counting__slow', input: { label: 'b', ms: 3000 } }] },
    { content: [{ type: 'text' as const, text: 'All done: {{toolResults}}' }], latencyMs: 3000 },
  ],
  formatter: { conversation: [{ type: 'text', content: 'Final: {{toolResults}}' }] },
};

beforeAll(async () => {
  stub = await startStubModel({ scenarios: { durable: scenario } });
  client = await testClient();
});

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await client?.connection.close();
  await stub?.close();
});

async function runTurn(run: Run, question: string, kill?: { when: () => boolean; what: string }): Promise<{ result: ChatTurnResult; workflowId: string }> {
  const taskQueue = uniqueQueue('durable');
  let worker = startWorker(run, taskQueue);
  const handle = await startChatTurn(client, { question, model: 'durable' }, { taskQueue, workflowId: `durable-${taskQueue}` });
  if (kill) {
    await waitFor(kill.when, kill.what);
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    worker = startWorker(run, taskQueue);
  }
  const result = await handle.result();
  worker.kill('SIGTERM');
  return { result, workflowId: handle.workflowId };
}

function stepRequests(question: string) {
  return stub.requests.filter((r) => JSON.stringify(r.body.messages?.[0]).includes(question));
}

// The three turns run side by side, each on its own task queue, worker and counting server: the
// killed ones spend most of their time waiting for Temporal to time out the attempt the kill cut off.
let baselineRun: Promise<ChatTurnResult> | undefined;
const baseline = (): Promise<ChatTurnResult> => (baselineRun ??= runTurn(newRun('baseline'), 'baseline run').then((r) => r.result));

test.concurrent('runs undisturbed (the baseline)', async () => {
  const result = await baseline();
  expect(result.stopReason).toBe('completed');
  expect(result.response.conversation).toContain('counted a');
  expect(result.response.conversation).toContain('slow b done');
});

test.concurrent('survives a worker killed in the middle of a tool call', async () => {
  const run = newRun('tool-kill');
  const question = 'killed during a tool call';
  const { result, workflowId } = await runTurn(run, question, {
    when: () => executions(run).some((e) => e.tool === 'slow'),
    what: 'the slow tool to start',
  });
  expect(result.response).toEqual((await baseline()).response);
  // `count` had completed before the kill: it never ran again. `slow` was cut off, so it ran twice.
  expect(executions(run).filter((e) => e.tool === 'count')).toHaveLength(1);
  expect(executions(run).filter((e) => e.tool === 'slow')).toHaveLength(2);
  const steps = stepRequests(question).filter((r) => r.kind === 'step' && r.status === 200);
  expect(steps.map((r) => r.step)).toEqual([0, 1, 2]);
  await expectNoSecrets(workflowId);
});

test.concurrent('survives a worker killed in the middle of a Claude call', async () => {
  const run = newRun('claude-kill');
  const question = 'killed during a Claude call';
  const { result, workflowId } = await runTurn(run, question, {
    when: () => stepRequests(question).some((r) => r.kind === 'step' && r.step === 2),
    what: 'the third Claude call to start',
  });
  expect(result.response).toEqual((await baseline()).response);
  expect(executions(run).map((e) => e.tool)).toEqual(['count', 'slow']);
  const steps = stepRequests(question).filter((r) => r.kind === 'step');
  // Steps 0 and 1 answered once; step 2 was cut off by the kill and asked again.
  expect(steps.map((r) => r.step)).toEqual([0, 1, 2, 2]);
  expect(stepRequests(question).filter((r) => r.kind === 'formatter')).toHaveLength(1);
  await expectNoSecrets(workflowId);
});

async function expectNoSecrets(workflowId: string): Promise<void> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const text = JSON.stringify(history);
  const decoded = Buffer.from(text).toString('utf8');
  // Payloads are base64 inside the history JSON: decode every data field too.
  const payloads = [...text.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'));
  const all = [decoded, ...payloads].join('\n');
  expect(all).toContain('counted a'); // the scan does see payload contents
  for (const secret of [TEST_API_KEY, INJECTED, ENV_SECRET]) expect(all).not.toContain(secret);
}
