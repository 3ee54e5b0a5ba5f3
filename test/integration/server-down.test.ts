/**
 * A dev server that is down, as a user meets it: `mcp-turns server --db mydata.db` SIGKILLed in the
 * middle of a batch. The next command names that server and the command that starts it, within
 * 2 s, and starts no other server on its port (its work lives in mydata.db); `server` on another
 * database refuses the port while it runs; restarted as told, the batch goes on where it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startStubModel, type StubModel, type RecordedRequest } from '../../src/stub';
import { lastDevServerRecord, listeningDevServer } from '../../src/temporal/dev-server-record';
import { portIsOpen } from '../../src/temporal/dev-server';
import { processAlive } from '../../src/temporal/process-alive';
import { BIN, ownStateEnv, runCli, startCli } from '../support/cli';
import { freePort } from '../support/ports';
import { uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-server-down-'));
const QUESTIONS = ['q1', 'q2', 'q3', 'q4'];
const taskQueue = uniqueQueue('server-down');
let stub: StubModel;
let env: NodeJS.ProcessEnv;
const pids: number[] = [];

/** The question of a recorded Claude request: its first user message, as text. */
function questionOf(r: RecordedRequest): string {
  const content = r.body.messages[0].content as string | Array<{ type: string; text?: string }>;
  return typeof content === 'string' ? content : content.map((b) => b.text ?? '').join('');
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Completed lines of a results file (a last line still being written is left out). */
function completedIds(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .slice(0, -1)
    .map((l) => JSON.parse(l) as { id: string; status: string })
    .filter((l) => l.status === 'completed')
    .map((l) => l.id);
}

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      // One Claude call per query, slow enough that the kill finds two queries answered and two not.
      slow: { latencyMs: 1000, steps: [{ content: [{ type: 'text', text: 'A: {{question}}' }] }] },
    },
  });
  env = ownStateEnv(home, stub.url);
});

afterAll(async () => {
  for (const pid of pids) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  await stub?.close();
});

it('show, approvals and worker on this machine with nothing listening fail at once with one line', async () => {
  const port = await freePort();
  for (const args of [['show', 'some-turn'], ['approvals']]) {
    const res = await runCli([...args, '--address', `127.0.0.1:${port}`], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `mcp-turns: cannot reach Temporal at 127.0.0.1:${port}: nothing listens there; start a server with \`mcp-turns server --port ${port}\`\n`,
    );
    // At once: the process's start and one refused connect, far under the 10 s of a gRPC connect
    // (a bound with room for a machine running other test files beside this one).
    expect(res.ms).toBeLessThan(5000);
  }
  // A worker too: at once, not after the 10 s of a gRPC connect.
  const worker = await runCli(['worker', '--address', `127.0.0.1:${port}`], { env });
  expect(worker.code).toBe(1);
  expect(worker.stderr).toContain(`mcp-turns: cannot reach Temporal at 127.0.0.1:${port}: nothing listens there`);
  expect(worker.ms).toBeLessThan(8000);
});

it('a killed server on its own database: the batch names it and starts none; restarted, the batch goes on where it was', async () => {
  const port = await freePort();
  const uiPort = await freePort();
  const address = `127.0.0.1:${port}`;
  const db = path.join(home, 'mydata.db');
  const serverArgs = ['server', '--port', String(port), '--ui-port', String(uiPort), '--db', db];
  const server = await startCli(serverArgs, /Temporal Web UI:/, { env });
  pids.push(server.child.pid!);
  const record = lastDevServerRecord(address, env.MCP_TURNS_HOME!)!;
  pids.push(record.pid);
  // Without a record, `server` learns the database from the process that listens (Linux /proc).
  expect(listeningDevServer(port)).toEqual({ pid: record.pid, dbFile: db });

  // The worker is a process of its own: it outlives the server's death and polls the restarted one.
  const worker = await startWorkerProcess({
    config: { mcpServers: {} },
    taskQueue,
    stubUrl: stub.url,
    env: { ...env, TEMPORAL_ADDRESS: address },
    extraArgs: ['--log-level', 'ERROR'],
  });
  pids.push(worker.pid!);
  const input = path.join(home, 'q.jsonl');
  const out = path.join(home, 'q.results.jsonl');
  fs.writeFileSync(
    input,
    QUESTIONS.map((q) => JSON.stringify({ id: q, question: q, model: 'slow' })).join('\n'),
  );
  const batchArgs = ['batch', input, '--concurrency', '2', '--task-queue', taskQueue, '--address', address];
  const first = spawn(process.execPath, [BIN, ...batchArgs], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  pids.push(first.pid!);
  const deadline = Date.now() + 60_000;
  while (completedIds(out).length < 2) {
    if (Date.now() > deadline || first.exitCode !== null)
      throw new Error('the batch never answered two queries');
    await new Promise((r) => setTimeout(r, 50));
  }
  // The server dies as a whole: the temporal process and the `mcp-turns server` that ran it.
  process.kill(record.pid, 'SIGKILL');
  server.child.kill('SIGKILL');
  await server.exited;
  const answeredBeforeKill = completedIds(out);
  first.kill('SIGKILL'); // the batch's command went down with it: the user runs it again

  const expectedLine =
    `mcp-turns: the Temporal dev server on ${address} (database ${db}, pid ${record.pid}) is not running: ` +
    `start it with \`mcp-turns server --port ${port} --ui-port ${uiPort} --db ${db}\``;
  const refused = await runCli(batchArgs, { env });
  expect(refused.code).toBe(1);
  expect(refused.stderr.trim().split('\n').pop()).toBe(expectedLine);
  expect(refused.stderr).not.toContain('starting');
  expect(await portIsOpen('127.0.0.1', port)).toBe(false);
  const approvals = await runCli(['approvals', '--address', address], { env });
  expect([approvals.code, approvals.stderr]).toEqual([1, `${expectedLine}\n`]);

  // Started again as the line says, on the same database: the batch goes on where it was.
  const told = /start it with `mcp-turns (.+)`$/.exec(expectedLine)![1]!.split(' ');
  const restarted = await startCli(told, /Temporal Web UI:/, { env });
  pids.push(restarted.child.pid!, lastDevServerRecord(address, env.MCP_TURNS_HOME!)!.pid);
  const other = await runCli(['server', '--port', String(port), '--db', path.join(home, 'other.db')], {
    env,
  });
  expect(other.code).toBe(1);
  expect(other.stderr).toMatch(
    new RegExp(
      `^mcp-turns: the Temporal dev server on ${address} \\(pid \\d+\\) uses another database \\(${escape(db)}\\), not ${escape(path.join(home, 'other.db'))}: `,
    ),
  );
  const again = await runCli(batchArgs, { env, timeoutMs: 90_000 });
  expect(again.code).toBe(0);
  expect(completedIds(out).sort()).toEqual(QUESTIONS);
  // Claude saw each query answered before the kill once: nothing finished was run again.
  const calls = (q: string): number =>
    stub.requests.filter((r) => r.kind === 'step' && questionOf(r) === q).length;
  expect(answeredBeforeKill.length).toBeGreaterThanOrEqual(2);
  for (const q of answeredBeforeKill) expect(calls(q)).toBe(1);
  restarted.child.kill('SIGINT');
  expect(await restarted.exited).toBe(0);
  // A clean stop forgets the server; a killed one was remembered (the line above came from its record).
  expect(lastDevServerRecord(address, env.MCP_TURNS_HOME!)).toBeUndefined();
  console.log(
    `answered before the kill: ${answeredBeforeKill.join(', ')}; the refused batch ${(refused.ms / 1000).toFixed(1)} s; ` +
      `the batch after the restart ${(again.ms / 1000).toFixed(1)} s; Claude calls: ${QUESTIONS.map((q) => `${q} ${calls(q)}`).join(', ')}`,
  );
});
