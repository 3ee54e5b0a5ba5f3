/**
 * Many turns waiting for approval at once on one worker: N turns (200 by default) each make one
 * write_file call that waits for a person's approval. The worker is a separate `mcp-turns worker`
 * process (its memory read from /proc, its Temporal metrics scraped) with only 10 activity slots,
 * so N turns can wait at once only because a waiting turn holds no slot. Prints the worker's RSS
 * when ready, over 20 s with every turn waiting (flat: a waiting turn does nothing), and after all
 * were approved and finished; its free activity slots and cached turns while they wait; how long
 * `listPendingApprovals` takes to list them (one visibility call) and the `mcp-turns approvals`
 * command end to end; and the machine's load while measuring.
 *
 *   npm run bench:approvals        (BENCH_TURNS=200, BENCH_CACHED_WORKFLOWS=500 by default)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { startStubModel } from '../src/stub';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { approveToolCall, listPendingApprovals } from '../src/client/approvals';
import { startChatTurn } from '../src/client/chat-turn-client';
import { loadAverages } from './machine-figures';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testDataConverter } from '../test/support/settings';

const TURNS = Number(process.env.BENCH_TURNS ?? 200);
/** The worker's sticky cache: with fewer than TURNS, waiting turns are evicted and come back on the decision. */
const CACHED = Number(process.env.BENCH_CACHED_WORKFLOWS ?? 500);
const ACTIVITY_SLOTS = 10;
const TASK_QUEUE = 'bench-approvals';
const BATCH = `approvals-bench-${Date.now().toString(36)}`;

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** A gauge of the worker's Prometheus metrics, summed over its label sets that have every one of `labels`. */
async function gauge(metricsUrl: string, name: string, ...labels: string[]): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}


async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}

/** Runs `fn` on every item, at most `width` at a time. */
async function inWindow<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-approvals-bench-'));
  const files = path.join(dir, 'files');
  fs.mkdirSync(files);
  const server = await startDevServer({ cliPath: testTemporalCli().path, port: await freePort(), uiPort: await freePort() });
  const stub = await startStubModel({
    scenarios: {
      write: {
        steps: [
          { content: [{ type: 'text', text: 'Writing.' }, { type: 'tool_use', name: 'files__write_file', input: { path: '{{question}}', content: 'approved' } }] },
          { content: [{ type: 'text', text: 'done: {{toolResults}}' }] },
        ],
      },
    },
  });
  const config = path.join(dir, 'config.json');
  const filesystem = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
  fs.writeFileSync(
    config,
    JSON.stringify({
      mcp_servers: { files: { type: 'stdio', command: process.execPath, args: [filesystem, files], approval: { always: ['write_file'] } } },
      worker: { maxCachedWorkflows: CACHED, maxConcurrentActivityTaskExecutions: ACTIVITY_SLOTS },
    }),
  );
  const bin = path.resolve(__dirname, '..', '..', 'bin', 'mcp-turns.js');
  const env = { ...process.env, TEMPORAL_ADDRESS: server.address, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: stub.url };
  const metricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const worker = spawn(process.execPath, [bin, 'worker', '--config', config, '--task-queue', TASK_QUEUE, '--log-level', 'WARN', '--metrics', `127.0.0.1:${metricsPort}`], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => worker.stdout!.on('data', (d: Buffer) => d.toString().includes('mcp-turns worker on') && resolve()));
  const client = new Client({ connection: await Connection.connect({ address: server.address }), ...clientStorageOptions(testDataConverter()) });
  // One turn to the end first, so the worker has loaded everything a turn needs (sandbox, MCP server).
  const warm = await startChatTurn(client, { question: path.join(files, 'warm.txt'), model: 'write', format: false }, { taskQueue: TASK_QUEUE });
  for (;;) {
    const pending = await listPendingApprovals(client);
    if (pending.some((p) => p.turnId === warm.workflowId)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await approveToolCall(client, warm.workflowId, undefined, { identity: 'bench' });
  await warm.result();
  await new Promise((r) => setTimeout(r, 2000));
  const readyRss = rssMb(worker.pid!);

  const t0 = performance.now();
  const ids: string[] = [];
  await inWindow(
    Array.from({ length: TURNS }, (_, i) => i),
    20,
    async (i) => {
      const handle = await startChatTurn(
        client,
        { question: path.join(files, `f${i}.txt`), model: 'write', format: false },
        { taskQueue: TASK_QUEUE, workflowId: `${BATCH}-${i}`, batch: BATCH },
      );
      ids.push(handle.workflowId);
    },
  );
  let listed = 0;
  while (listed < TURNS) {
    listed = (await listPendingApprovals(client, { batch: BATCH })).length;
    if (listed < TURNS) await new Promise((r) => setTimeout(r, 250));
  }
  const allWaitingS = (performance.now() - t0) / 1000;
  // Every turn waits: the worker's memory over 20 s, its free activity slots and its cached turns.
  const waitingRss: number[] = [];
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 5000));
    waitingRss.push(rssMb(worker.pid!));
  }
  const freeSlots = await gauge(metricsUrl, 'temporal_worker_task_slots_available', 'worker_type="ActivityWorker"', `task_queue="${TASK_QUEUE}"`);
  const cachedTurns = await gauge(metricsUrl, 'temporal_sticky_cache_size');
  const waitingLoad = loadAverages();

  const lists = [];
  for (let i = 0; i < 5; i++) {
    const { value, ms } = await timed(() => listPendingApprovals(client, { batch: BATCH }));
    if (value.length !== TURNS) throw new Error(`listed ${value.length} of ${TURNS}`);
    lists.push(ms);
  }
  const listAll = await timed(() => listPendingApprovals(client));
  const cliT0 = performance.now();
  const cli = spawnSync(process.execPath, [bin, 'approvals', '--batch', BATCH, '--address', server.address], { encoding: 'utf8' });
  const cliMs = performance.now() - cliT0;
  const cliRows = cli.stdout.trim().split('\n').length - 1;
  const listLoad = loadAverages();

  const t1 = performance.now();
  await inWindow(ids, 20, async (id) => {
    await approveToolCall(client, id, undefined, { identity: 'bench' });
  });
  await Promise.all(ids.map((id) => client.workflow.getHandle(id).result()));
  const approveS = (performance.now() - t1) / 1000;
  const written = fs.readdirSync(files).filter((f) => /^f\d+\.txt$/.test(f)).length;
  await new Promise((r) => setTimeout(r, 3000));
  const afterRss = rssMb(worker.pid!);

  console.log(`\n${TURNS} turns waiting for approval at once on one worker (${ACTIVITY_SLOTS} activity slots, sticky cache ${CACHED} turns, ${os.availableParallelism()} cores)`);
  console.log(`  all ${TURNS} listed as waiting ${allWaitingS.toFixed(1)} s after the first start`);
  console.log(
    `  worker RSS: ${readyRss.toFixed(0)} MB ready (after one turn); with ${TURNS} waiting, every 5 s for 20 s: ${waitingRss.map((r) => r.toFixed(0)).join(', ')} MB ` +
      `(spread ${(Math.max(...waitingRss) - Math.min(...waitingRss)).toFixed(0)} MB); ${afterRss.toFixed(0)} MB after all were approved and finished`,
  );
  const evicted = cachedTurns < TURNS ? ` (the other ${TURNS - cachedTurns} evicted; they come back on the decision)` : '';
  console.log(`  while ${TURNS} wait: ${freeSlots} of ${ACTIVITY_SLOTS} activity slots free, ${cachedTurns} turns in the worker's cache${evicted}`);
  console.log(`  listPendingApprovals (${TURNS} turns, one visibility call): median ${median(lists).toFixed(0)} ms, max ${Math.max(...lists).toFixed(0)} ms of 5 (target < 1000 ms); without the batch filter ${listAll.ms.toFixed(0)} ms`);
  console.log(`  mcp-turns approvals --batch: ${cliRows} rows in ${cliMs.toFixed(0)} ms end to end (node start, connect, list, print)`);
  console.log(`  approving all ${TURNS} (20 decisions at a time) to all finished: ${approveS.toFixed(1)} s; files written: ${written}`);
  console.log(`  load average (1/5/15 min): ${waitingLoad} while waiting, ${listLoad} while listing, ${loadAverages()} at the end`);

  worker.kill('SIGTERM');
  await new Promise((r) => worker.once('exit', r));
  await client.connection.close();
  await stub.close();
  await server.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
