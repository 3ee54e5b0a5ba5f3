/**
 * Batch throughput on one worker: N turns × R tool rounds with the stub answering every Claude call
 * after a latency, run as one batch (`runBatch`: its shards and their children), interactively or
 * with every Claude call through Message Batches. The worker is a separate `mcp-turns worker`
 * process so its peak memory (VmHWM) and CPU time can be read from /proc, and its Prometheus
 * metrics give the workflow tasks it replayed. Prints wall time, turns/s, worker peak RSS and CPU
 * per turn, replays and sticky-cache misses per turn, the stub's peak concurrency, history bytes
 * per turn, and the Temporal server's CPU and requests per turn, with the machine's load.
 *
 *   npm run bench:batch            (BENCH_TURNS=1000 BENCH_TOOL_ROUNDS=2 BENCH_LATENCY_MS=200 by default)
 *   BENCH_TURNS=10000 BENCH_TOOL_ROUNDS=1 BENCH_LATENCY_MS=0 npm run bench:batch
 *   BENCH_TURNS=10000 BENCH_TOOL_ROUNDS=1 BENCH_LATENCY_MS=0 BENCH_MESSAGE_BATCHES=1 npm run bench:batch
 *
 * Other settings: BENCH_CONCURRENCY (200), BENCH_CACHED_WORKFLOWS (the worker's sticky cache; its
 * default when unset), BENCH_PROCESSING_MS (a Message Batch's processing time at the stub, 500),
 * BENCH_LOCAL_ACTIVITY=true|false|auto (server-everything's local_activity), BENCH_WORKER (JSON: the
 * config's worker: section), BENCH_WORKER_PROF=dir (a V8 CPU profile of the worker).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeEverythingConfig } from './everything-config';
import { spawn } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { startStubModel } from '../src/stub';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { devServerEnv } from '../src/temporal/dev-server-tuning';
import { runBatch } from '../src/client/batch-client';
import { batchChildId } from '../src/core/batch';
import { counterDelta, frontendRequests, METRICS_FLUSH_MS, persistenceRequests } from './dev-server-metrics';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testDataConverter } from '../test/support/settings';
import { collectorRuns } from './collector-runs';
import { collectorWorkflowId } from '../src/core/message-batches';
import { counterGrowth, metricsDelta, metricsSnapshot, REPLAYS, WORKFLOW_TASKS } from './worker-metrics';

const TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 200);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 200);
const TOOL_ROUNDS = Number(process.env.BENCH_TOOL_ROUNDS ?? 2);
const MESSAGE_BATCHES = ['1', 'true'].includes(process.env.BENCH_MESSAGE_BATCHES ?? '');
const PROCESSING_MS = Number(process.env.BENCH_PROCESSING_MS ?? 500);
const CACHED_WORKFLOWS = process.env.BENCH_CACHED_WORKFLOWS ? Number(process.env.BENCH_CACHED_WORKFLOWS) : undefined;
/** The tool calls of the rounds, in turn: echo, then get-sum. */
const TOOL_STEPS = [
  { content: [{ type: 'tool_use' as const, name: 'everything__echo', input: { message: 'one' } }] },
  { content: [{ type: 'tool_use' as const, name: 'everything__get-sum', input: { a: 1, b: 2 } }] },
];

/** Fields of /proc/<pid>/stat after the command name: [0] state, [1] parent pid, [11] utime, [12] stime. */
function statFields(pid: number | string): string[] {
  return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

function cpuSecondsOf(fields: string[]): number {
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks
}

function procStat(pid: number): { peakRssMb: number; cpuSeconds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return { peakRssMb: hwm / 1024, cpuSeconds: cpuSecondsOf(statFields(pid)) };
}

/** CPU seconds of a process's descendants (the worker's MCP servers), from /proc. */
function descendantsCpuSeconds(root: number): number {
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const fields = statFields(pid);
      parent.set(Number(pid), Number(fields[1]));
      cpu.set(Number(pid), cpuSecondsOf(fields));
    } catch {
      // the process ended while we read
    }
  }
  const isBelow = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...cpu].filter(([pid]) => isBelow(pid)).reduce((sum, [, s]) => sum + s, 0);
}

async function main(): Promise<void> {
  const metricsPort = await freePort();
  const server = await startDevServer({ cliPath: testTemporalCli().path, port: await freePort(), uiPort: await freePort(), extraArgs: ['--metrics-port', String(metricsPort)] });
  const stub = await startStubModel({
    scenarios: {
      bench: {
        latencyMs: LATENCY,
        steps: [...Array.from({ length: TOOL_ROUNDS }, (_, i) => TOOL_STEPS[i % TOOL_STEPS.length]!), { content: [{ type: 'text', text: 'done: {{toolResults}}' }] }],
        formatter: { conversation: [{ type: 'text', content: 'answer: {{toolResults}}' }] },
      },
    },
    messageBatches: { processingMs: PROCESSING_MS },
  });
  const config = writeEverythingConfig('mcp-turns-bench-', {
    claude: { maxConcurrentCalls: CONCURRENCY * 2, ...(MESSAGE_BATCHES ? { messageBatches: { maxWaitMs: 2000, pollInitialMs: 300, pollMaxMs: 1000 } } : {}) },
    // BENCH_WORKER='{"workflowThreadPoolSize":1}' tries other worker tuning (the config's worker: section).
    worker: {
      ...(CACHED_WORKFLOWS !== undefined ? { maxCachedWorkflows: CACHED_WORKFLOWS } : {}),
      ...(process.env.BENCH_WORKER ? (JSON.parse(process.env.BENCH_WORKER) as Record<string, unknown>) : {}),
    },
  });
  const bin = path.resolve(__dirname, '..', '..', 'bin', 'mcp-turns.js');
  // BENCH_WORKER_PROF=dir writes a V8 CPU profile of the worker there (open it in Chrome DevTools).
  const profile = process.env.BENCH_WORKER_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_WORKER_PROF] : [];
  const workerMetricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${workerMetricsPort}/metrics`;
  const workerArgs = [...profile, bin, 'worker', '--config', config, '--task-queue', 'bench-batch', '--log-level', 'WARN', '--metrics', `127.0.0.1:${workerMetricsPort}`];
  const worker = spawn(process.execPath, workerArgs, {
    env: { ...process.env, TEMPORAL_ADDRESS: server.address, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: stub.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => worker.stdout!.on('data', (d: Buffer) => d.toString().includes('mcp-turns worker on') && resolve()));
  const client = new Client({ connection: await Connection.connect({ address: server.address }), ...clientStorageOptions(testDataConverter()) });

  const name = `bench-${Date.now().toString(36)}`;
  const items = Array.from({ length: TURNS }, (_, i) => ({ id: String(i + 1), input: { question: `bench query ${i + 1}`, model: 'bench' } }));
  const { cpuSeconds: cpu0, peakRssMb: idleRssMb } = procStat(worker.pid!);
  const serverCpu0 = procStat(server.pid!).cpuSeconds;
  const [frontend0, persistence0] = [await frontendRequests(metricsPort), await persistenceRequests(metricsPort)];
  const mcpCpu0 = descendantsCpuSeconds(worker.pid!);
  const metrics0 = await metricsSnapshot(metricsUrl);
  const ownCpu0 = process.cpuUsage();
  const t0 = performance.now();
  let completed = 0;
  let failed = 0;
  let lastPrint = t0;
  await runBatch(client, {
    name,
    items,
    concurrency: CONCURRENCY,
    taskQueue: 'bench-batch',
    ...(MESSAGE_BATCHES ? { messageBatches: true } : {}),
    onProgress: (p) => {
      if (performance.now() - lastPrint < 30_000) return;
      lastPrint = performance.now();
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${worker.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      console.log(
        `  [${((performance.now() - t0) / 1000).toFixed(0)} s] completed ${p.completed}, failed ${p.failed}, running ${p.running.length}` +
          (p.waitingMessageBatch ? `, waiting for a Message Batch ${p.waitingMessageBatch.length}` : '') +
          ` · worker RSS ${rss.toFixed(0)} MB · load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
      );
    },
    onResult: (o) => {
      if (o.status === 'completed') completed++;
      else failed++;
    },
  });
  const wall = (performance.now() - t0) / 1000;
  const { peakRssMb, cpuSeconds } = procStat(worker.pid!);
  const { cpuSeconds: serverCpu1, peakRssMb: serverPeakRssMb } = procStat(server.pid!);
  const serverCpu = serverCpu1 - serverCpu0;
  await new Promise((r) => setTimeout(r, METRICS_FLUSH_MS));
  const frontend = counterDelta(frontend0, await frontendRequests(metricsPort));
  const persistence = counterDelta(persistence0, await persistenceRequests(metricsPort));
  const mcpCpu = descendantsCpuSeconds(worker.pid!) - mcpCpu0;
  const metrics1 = await metricsSnapshot(metricsUrl);
  const own = process.cpuUsage(ownCpu0);
  const ownCpu = (own.user + own.system) / 1e6;

  let historyBytes = 0;
  const sample = items.filter((_, i) => i % Math.max(1, Math.floor(TURNS / 20)) === 0);
  for (const item of sample) {
    const history = await client.workflow.getHandle(batchChildId(name, item.id)).fetchHistory();
    historyBytes += Buffer.byteLength(JSON.stringify(history));
  }

  console.log(
    `\n${TURNS} turns × ${TOOL_ROUNDS} tool round(s), stub latency ${LATENCY} ms, batch concurrency ${CONCURRENCY}, one worker ` +
      `(local_activity of the server: ${process.env.BENCH_LOCAL_ACTIVITY ?? 'auto, the default'}; sticky cache ${CACHED_WORKFLOWS ?? 'the worker default'})` +
      (MESSAGE_BATCHES ? `, every Claude call through Message Batches (${PROCESSING_MS} ms processing at the stub; ${stub.messageBatches.batches.length} Message Batches)` : ', interactive'),
  );
  console.log(`  completed ${completed}, failed ${failed}`);
  console.log(`  wall ${wall.toFixed(1)} s → ${(TURNS / wall).toFixed(1)} turns/s (target: ${TURNS} within 60 s)`);
  console.log(`  worker peak RSS ${peakRssMb.toFixed(0)} MB (target < 600 MB; ${idleRssMb.toFixed(0)} MB when ready, before the batch)`);
  console.log(`  worker CPU ${(cpuSeconds - cpu0).toFixed(1)} s = ${(((cpuSeconds - cpu0) / wall) * 100).toFixed(0)}% of one core over the run (${os.availableParallelism()} cores here)`);
  const totalCpu = cpuSeconds - cpu0 + serverCpu + mcpCpu + ownCpu;
  console.log(
    `  CPU of the whole run: ${totalCpu.toFixed(1)} s of the ${(wall * os.availableParallelism()).toFixed(0)} s the machine had ` +
      `(worker ${(cpuSeconds - cpu0).toFixed(1)}, Temporal server ${serverCpu.toFixed(1)}, MCP server ${mcpCpu.toFixed(1)}, ` +
      `client + stub ${ownCpu.toFixed(1)}) = ${((totalCpu / wall / os.availableParallelism()) * 100).toFixed(0)}% busy`,
  );
  console.log(`  Temporal server CPU per turn ${((serverCpu / TURNS) * 1000).toFixed(1)} ms, worker CPU per turn ${(((cpuSeconds - cpu0) / TURNS) * 1000).toFixed(1)} ms (load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  console.log(`  Temporal dev server peak RSS ${serverPeakRssMb.toFixed(0)} MB (GOGC=${devServerEnv().GOGC})`);
  console.log(`  stub peak concurrent Claude requests ${stub.maxConcurrent}`);
  console.log(
    `  replays (workflow tasks the sticky cache could not serve) ${(counterGrowth(metrics0, metrics1, REPLAYS) / TURNS).toFixed(2)} per turn, ` +
      `workflow tasks ${(counterGrowth(metrics0, metrics1, WORKFLOW_TASKS) / TURNS).toFixed(2)} per turn; worker metrics over the run: ${metricsDelta(metrics0, metrics1)}`,
  );
  console.log(`  history ${(historyBytes / sample.length / 1024).toFixed(1)} KiB per turn (mean of ${sample.length})`);
  if (MESSAGE_BATCHES) {
    const c = await collectorRuns(client, collectorWorkflowId('bench-batch', 'bench'));
    console.log(
      `  collector: ${c.runs} run(s) (continued as new ${c.runs - 1}×), the longest ${c.maxEvents} events; ` +
        `workflow tasks timed out ${c.tasksTimedOut}, failed ${c.tasksFailed}`,
    );
  }
  // What the server was asked per turn: load-independent, unlike its CPU time.
  const perTurn = (m: Map<string, number>): string => {
    const total = [...m.values()].reduce((a, b) => a + b, 0);
    const top = [...m].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).slice(0, 6);
    return `${(total / TURNS).toFixed(1)} (${top.map(([k, v]) => `${k} ${(v / TURNS).toFixed(1)}`).join(', ')})`;
  };
  console.log(`  server requests per turn ${perTurn(frontend)}`);
  console.log(`  database requests per turn ${perTurn(persistence)}`);

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
