/**
 * Turns no worker can run, read and cancelled as a user does with the CLI: with no worker polling
 * its task queue, and with a worker whose workflow task fails (the CLI holds a keyring the worker
 * lacks; the worker reads payloads from another store than the CLI wrote them to). `show`, `ls`, `watch` and `run` answer from what Temporal records within seconds and say
 * why; `cancel` says so at once and `--terminate` ends the turn. The worker logs the failing task
 * as one line, without a stack.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { BIN, runCli } from '../support/cli';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';
import { until } from '../support/until';

jest.setTimeout(120_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-stuck-'));
const keyring = path.join(dir, 'keyring.json');
let stub: StubModel;
let client: Client;
const children: ChildProcess[] = [];

beforeAll(async () => {
  stub = await startStubModel({ defaultScenario: 'plain', scenarios: { plain: { steps: [{ content: [{ type: 'text', text: 'plain answer' }] }] } } });
  client = await testClient();
  expect((await runCli(['keys', 'new', '--keyring', keyring])).code).toBe(0);
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await client?.connection.close();
  await stub?.close();
});

/** Starts a turn on `taskQueue` without waiting for it; its id. */
async function startTurn(taskQueue: string, env: NodeJS.ProcessEnv = {}, question = ['are you there?']): Promise<string> {
  const started = await runCli(['run', ...question, '--no-wait', '--task-queue', taskQueue, '--address', address], { env });
  expect(started.code).toBe(0);
  return /started (turn-\S+)/.exec(started.stdout)![1]!;
}

/** Runs the CLI until `expected` shows in its output, then stops it (SIGINT); its output so far and the time it took. */
function outputUntil(args: string[], expected: RegExp, env: NodeJS.ProcessEnv): Promise<{ output: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer): void => {
      output += d.toString();
      if (expected.test(output)) {
        child.kill('SIGINT');
        resolve({ output, ms: Date.now() - started });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${expected}:\n${output}`)));
  });
}

it('reads and cancels a turn no worker polls for, at once, saying so', async () => {
  const taskQueue = uniqueQueue('no-worker');
  const id = await startTurn(taskQueue);

  const show = await runCli(['show', id, '--address', address]);
  expect(show.code).toBe(0);
  expect(show.ms).toBeLessThan(5_000);
  expect(show.stdout).toContain(`Turn ${id} · running`);
  expect(show.stdout).toContain('Question: are you there?');
  expect(show.stdout).toContain(`Blocked: no worker polls its task queue ${taskQueue}: it waits for one (\`mcp-turns worker\`)`);

  const watch = await outputUntil(['watch', id, '--address', address], /no worker polls its task queue \S+: it waits for one/, {});
  expect(watch.ms).toBeLessThan(5_000);
  expect(watch.output).toContain(`no worker polls its task queue ${taskQueue}: it waits for one (\`mcp-turns worker\`)`);

  const cancel = await runCli(['cancel', id, '--address', address]);
  expect(cancel.code).toBe(1);
  expect(cancel.ms).toBeLessThan(5_000);
  expect(cancel.stdout.trim()).toBe(
    `turn ${id} cannot carry the cancel out now: no worker polls its task queue ${taskQueue}. ` +
      `The cancel is recorded and takes effect once a worker runs it; \`mcp-turns cancel ${id} --terminate\` ends it now`,
  );
  const terminate = await runCli(['cancel', id, '--terminate', '--address', address]);
  expect(terminate.code).toBe(0);
  expect(terminate.stdout).toMatch(new RegExp(`^terminated turn ${id} \\(was running for `));
  expect((await client.workflow.getHandle(id).describe()).status.name).toBe('TERMINATED');
});

it('says why a turn whose workflow task fails makes no progress: run, watch, show, ls and cancel', async () => {
  const taskQueue = uniqueQueue('no-key');
  // The worker has no keyring; the CLI encrypts under one.
  let workerLog = '';
  const worker = await startWorkerProcess({ config: {}, taskQueue, stubUrl: stub.url, env: { MCP_TURNS_KEYRING: '' }, onStderr: (text) => (workerLog += text) });
  children.push(worker);
  const withKey = { MCP_TURNS_KEYRING: keyring, ANTHROPIC_BASE_URL: stub.url, ANTHROPIC_API_KEY: 'test' };
  const why = /workflow task failing: a payload is encrypted under key k1, and this process has no keyring: set MCP_TURNS_KEYRING to a keyring file holding k1, attempt \d+; Temporal retries it until a worker can run it \(`mcp-turns cancel (turn-\S+) --terminate` ends it\)/;

  const run = await outputUntil(['run', 'plain', '--task-queue', taskQueue, '--address', address], why, withKey);
  expect(run.ms).toBeLessThan(15_000);
  const id = why.exec(run.output)![1]!;

  const watch = await outputUntil(['watch', id, '--address', address], why, withKey);
  expect(watch.ms).toBeLessThan(5_000);

  const show = await runCli(['show', id, '--address', address], { env: withKey });
  expect(show.code).toBe(0);
  expect(show.ms).toBeLessThan(5_000);
  expect(show.stdout).toMatch(new RegExp(`Blocked: ${why.source}`));

  // ls lists from visibility, a moment behind: asked until the turn is listed.
  let row: { id: string; blocked?: string[] } | undefined;
  await until(async () => {
    const ls = await runCli(['ls', '--json', '--status', 'running', '--limit', '100', '--address', address], { env: withKey });
    row = (JSON.parse(ls.stdout) as Array<{ id: string; blocked?: string[] }>).find((r) => r.id === id);
    return row !== undefined;
  }, `${id} listed by ls`, 20_000, 500);
  expect(row!.blocked?.[0]).toMatch(why);

  const cancel = await runCli(['cancel', id, '--address', address], { env: withKey });
  expect(cancel.code).toBe(1);
  expect(cancel.ms).toBeLessThan(5_000);
  expect(cancel.stdout).toContain(`turn ${id} cannot carry the cancel out now: its workflow task fails (attempt `);
  expect(cancel.stdout).toContain(`\`mcp-turns cancel ${id} --terminate\` ends it now`);
  expect((await runCli(['cancel', id, '--terminate', '--address', address], { env: withKey })).code).toBe(0);
  worker.kill('SIGTERM');
  // The worker's log says why in one line: no stack.
  expect(workerLog).toContain('EncryptionKeyMissing: a payload is encrypted under key k1, and this process has no keyring');
  expect(workerLog).not.toMatch(/\n\s+at /);
});

it('names both stores when the worker looks for a payload in another store than the client wrote it to', async () => {
  const taskQueue = uniqueQueue('two-stores');
  const workerStore = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-worker-store-'));
  const worker = await startWorkerProcess({ config: {}, taskQueue, stubUrl: stub.url, env: { MCP_TURNS_STORAGE: `fs:${workerStore}` }, onStderr: () => undefined });
  children.push(worker);
  // A question past the storage threshold: its payload is stored, in the client's store.
  const file = path.join(dir, 'long-question.txt');
  fs.writeFileSync(file, 'why is the sky blue? '.repeat(15_000));
  const id = await startTurn(taskQueue, {}, ['--file', file]);
  const clientStore = `fs:${process.env.MCP_TURNS_TEST_PAYLOAD_DIR!}`;
  const why = new RegExp(
    `Blocked: workflow task failing: stored payload [0-9a-f]+ was written to ${clientStore}, and this process reads fs:${workerStore}: ` +
      'every process that starts, runs or reads these workflows \\(CLI, client, worker, serve\\) must use the same store \\(MCP_TURNS_STORAGE\\)',
  );
  let shown = '';
  await until(async () => {
    shown = (await runCli(['show', id, '--address', address])).stdout;
    return why.test(shown);
  }, `show of ${id} naming both stores`, 20_000, 500);
  expect(shown).toMatch(why);
  expect((await runCli(['cancel', id, '--terminate', '--address', address])).code).toBe(0);
  worker.kill('SIGTERM');
});
