/**
 * Batch throughput on one worker: N turns × 2 tool rounds with the stub answering every Claude call
 * after 200 ms, run as one `chatBatch`. The worker is a separate `mcp-turns worker` process so its
 * peak memory (VmHWM) and CPU time can be read from /proc. Prints wall time, turns/s, worker peak
 * RSS and CPU share, the stub's peak concurrency, and history bytes per turn.
 *
 *   npm run bench:batch            (BENCH_TURNS=1000 by default)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { startStubModel } from '../src/stub';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { runBatch } from '../src/client/batch-client';
import { batchChildId } from '../src/core/batch';

const TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 200);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 200);

function procStat(pid: number): { peakRssMb: number; cpuSeconds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(stat[11]) + Number(stat[12]); // utime + stime
  return { peakRssMb: hwm / 1024, cpuSeconds: ticks / 100 };
}

async function main(): Promise<void> {
  const server = await startDevServer({ port: await freePort(), uiPort: await freePort() });
  const stub = await startStubModel({
    scenarios: {
      bench: {
        latencyMs: LATENCY,
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'one' } }] },
          { content: [{ type: 'tool_use', name: 'everything__get-sum', input: { a: 1, b: 2 } }] },
          { content: [{ type: 'text', text: 'done: {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'answer: {{toolResults}}' }] },
      },
    },
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-bench-'));
  const config = path.join(dir, 'config.json');
  const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  fs.writeFileSync(
    config,
    JSON.stringify({
      mcp_servers: { everything: { type: 'stdio', command: process.execPath, args: [everything, 'stdio'] } },
      claude: { maxConcurrentCalls: CONCURRENCY * 2 },
    }),
  );
  const bin = path.resolve(__dirname, '..', '..', 'bin', 'mcp-turns.js');
  const worker = spawn(process.execPath, [bin, 'worker', '--config', config, '--task-queue', 'bench-batch', '--log-level', 'WARN'], {
    env: { ...process.env, TEMPORAL_ADDRESS: server.address, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: stub.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => worker.stdout!.on('data', (d: Buffer) => d.toString().includes('mcp-turns worker on') && resolve()));
  const client = new Client({ connection: await Connection.connect({ address: server.address }) });

  const name = `bench-${Date.now().toString(36)}`;
  const items = Array.from({ length: TURNS }, (_, i) => ({ id: String(i + 1), input: { question: `bench query ${i + 1}`, model: 'bench' } }));
  const cpu0 = procStat(worker.pid!).cpuSeconds;
  const t0 = performance.now();
  let completed = 0;
  let failed = 0;
  await runBatch(client, {
    name,
    items,
    concurrency: CONCURRENCY,
    taskQueue: 'bench-batch',
    onResult: (o) => {
      if (o.status === 'completed') completed++;
      else failed++;
    },
  });
  const wall = (performance.now() - t0) / 1000;
  const { peakRssMb, cpuSeconds } = procStat(worker.pid!);

  let historyBytes = 0;
  const sample = items.filter((_, i) => i % Math.max(1, Math.floor(TURNS / 20)) === 0);
  for (const item of sample) {
    const history = await client.workflow.getHandle(batchChildId(name, item.id)).fetchHistory();
    historyBytes += Buffer.byteLength(JSON.stringify(history));
  }

  console.log(`\n${TURNS} turns × 2 tool rounds, stub latency ${LATENCY} ms, batch concurrency ${CONCURRENCY}, one worker`);
  console.log(`  completed ${completed}, failed ${failed}`);
  console.log(`  wall ${wall.toFixed(1)} s → ${(TURNS / wall).toFixed(1)} turns/s (target: ${TURNS} within 60 s)`);
  console.log(`  worker peak RSS ${peakRssMb.toFixed(0)} MB (target < 600 MB)`);
  console.log(`  worker CPU ${(cpuSeconds - cpu0).toFixed(1)} s = ${(((cpuSeconds - cpu0) / wall) * 100).toFixed(0)}% of one core over the run (${os.availableParallelism()} cores here)`);
  console.log(`  stub peak concurrent Claude requests ${stub.maxConcurrent}`);
  console.log(`  history ${(historyBytes / sample.length / 1024).toFixed(1)} KiB per turn (mean of ${sample.length})`);

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
