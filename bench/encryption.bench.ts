/**
 * What encryption at rest costs: the same batch with payloads in plaintext (`off`), encrypted
 * (`on`: MCP_TURNS_KEYRING) and compressed, then encrypted (`on+compress`: also
 * MCP_TURNS_ENCRYPTION_COMPRESS=1). One dev server; each mode has its own `mcp-turns worker`
 * process, task queue, filesystem store and client whose data converter matches the worker's.
 * A batch is BENCH_TURNS (100) turns × 2 tool rounds (everything__echo of ~2 KB of text, then
 * everything__get-sum), the stub answering every Claude call after BENCH_LATENCY_MS (0), with
 * BENCH_CONCURRENCY (50) turns at a time. The modes run interleaved, BENCH_ROUNDS (2) times
 * (off, on, on+compress; again), so the machine's noise falls on all of them; each mode's figures
 * are summed over its rounds. Per mode, with the ratio to `off`: the worker's and the Temporal
 * server's CPU per turn (utime + stime from /proc over the batches), history bytes per turn as the
 * server keeps them (~20 turns of each batch), the bytes and objects the turns added to the store,
 * and the wall time of a batch; every batch with the machine's load (os.loadavg()).
 *
 * First, in process: the EncryptionCodec's encode and decode of 1,000 ~2 KB and 100 ~200 KB JSON
 * payloads, without and with compression: MB/s, and the encoded size against the plain one.
 *
 *   npm run bench:encryption       (BENCH_TURNS=100, BENCH_ROUNDS=2)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { writeEverythingConfig } from './everything-config';
import { runBatch } from '../src/client/batch-client';
import { batchChildId } from '../src/core/batch';
import { EncryptionCodec } from '../src/encryption/encryption-codec';
import { describeEncryption, type EncryptionSettings } from '../src/encryption/encryption-settings';
import { addNewKey, loadKeyring } from '../src/encryption/keyring';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { createDataConverter } from '../src/data-converter/data-converter';
import { formatBytes } from '../src/core/text';
import { startStubModel } from '../src/stub';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { encodedSize, rawHistoryEvents } from '../test/support/history-payloads';
import { storeSize } from './store-size';
import { cpuSeconds, loadAverages } from './machine-figures';
import { encryptionEnv } from './encryption-env';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testSettings } from '../test/support/settings';

const TURNS = Number(process.env.BENCH_TURNS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 0);
/** Child turns of each batch whose history is measured. */
const HISTORY_SAMPLE = 20;

const ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'mcp-turns.js');

/** The project's own prose and code (README, docs, src): realistic text for payloads. */
function projectText(): string {
  const files = ['docs', 'src'].flatMap((dir) =>
    fs
      .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(md|ts)$/.test(f))
      .sort()
      .map((f) => path.join(ROOT, dir, f)),
  );
  return [path.join(ROOT, 'README.md'), ...files].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
}


/** `count` JSON payloads of ~`bytes` each, windows of `text` at different places. */
function jsonPayloads(text: string, count: number, bytes: number): Payload[] {
  const span = text.length - bytes;
  return Array.from({ length: count }, (_, i) => {
    const at = Math.floor((i * span) / count);
    return defaultPayloadConverter.toPayload({ id: i, text: text.slice(at, at + bytes) });
  });
}

async function codecBenchmark(keyringFile: string, text: string): Promise<void> {
  const keyring = loadKeyring(keyringFile);
  console.log('\nEncryptionCodec in process (AES-256-GCM): MB/s of plain payload bytes; encoded size / plain size');
  for (const [count, bytes] of [
    [1000, 2 * 1024],
    [100, 200 * 1024],
  ] as const) {
    const payloads = jsonPayloads(text, count, bytes);
    const plain = payloads.reduce((n, p) => n + encodedSize(p), 0);
    for (const compress of [false, true]) {
      const codec = new EncryptionCodec({ keyring, compress });
      await codec.decode(await codec.encode(payloads)); // warm-up: the first pass is several times slower
      const t0 = performance.now();
      const encoded = await codec.encode(payloads);
      const t1 = performance.now();
      const decoded = await codec.decode(encoded);
      const t2 = performance.now();
      if (decoded.some((p, i) => !Buffer.from(p.data!).equals(payloads[i]!.data!))) throw new Error('a payload did not decode to itself');
      const rate = (ms: number): string => `${(plain / 1e6 / (ms / 1000)).toFixed(0)} MB/s`;
      const size = encoded.reduce((n, p) => n + encodedSize(p), 0);
      console.log(
        `  ${count} × ${formatBytes(Math.round(plain / count))} JSON, ${compress ? 'compressed   ' : 'uncompressed '}: ` +
          `encode ${rate(t1 - t0).padStart(9)}, decode ${rate(t2 - t1).padStart(9)}, encoded / plain ${(size / plain).toFixed(2)}`,
      );
    }
  }
}

interface Mode {
  name: 'off' | 'on' | 'on+compress';
  encryption?: EncryptionSettings;
}

/** A mode's worker, client and store, and its figures summed over the rounds. */
interface ModeRun {
  mode: Mode;
  taskQueue: string;
  store: string;
  worker: ChildProcess;
  client: Client;
  workerCpu: number;
  serverCpu: number;
  wall: number;
  historyBytes: number;
  historyTurns: number;
  storedBytes: number;
  storedObjects: number;
  loads: number[];
}

/** The worker's ready line; rejects when it exits first. */
function readyLine(worker: ChildProcess, taskQueue: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    worker.stdout!.on('data', (d: Buffer) => {
      const text = d.toString();
      if (text.includes('mcp-turns worker on')) resolve(text.trim());
    });
    worker.once('exit', (code) => reject(new Error(`the worker on ${taskQueue} exited (${code}) before it was ready`)));
  });
}

async function stop(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((r) => worker.once('exit', r));
  worker.kill('SIGTERM');
  await exited;
}

/** One batch of the mode's; its figures are added to the mode's. */
async function measureBatch(run: ModeRun, round: number, serverPid: number): Promise<void> {
  const name = `encryption-${run.mode.name.replace('+', '-')}-${round}-${Date.now().toString(36)}`;
  // Questions unique to the batch: the store keeps equal payloads once, so a repeated batch would add nothing.
  const items = Array.from({ length: TURNS }, (_, i) => ({ id: String(i + 1), input: { question: `${name} query ${i + 1}`, model: 'bench' } }));
  const failures: string[] = [];
  const store0 = storeSize(run.store);
  const worker0 = cpuSeconds(run.worker.pid!);
  const server0 = cpuSeconds(serverPid);
  const t0 = performance.now();
  await runBatch(run.client, {
    name,
    items,
    concurrency: CONCURRENCY,
    taskQueue: run.taskQueue,
    onResult: (o) => {
      if (o.status !== 'completed') failures.push(`${o.id}: ${o.error}`);
    },
  });
  const wall = (performance.now() - t0) / 1000;
  const workerCpu = cpuSeconds(run.worker.pid!) - worker0;
  const serverCpu = cpuSeconds(serverPid) - server0;
  const store1 = storeSize(run.store);
  const load = os.loadavg()[0]!;
  const loads = loadAverages();
  if (failures.length) throw new Error(`${run.mode.name}, round ${round}: ${failures.length} of ${TURNS} turns failed; first ${failures[0]}`);

  const step = Math.max(1, Math.floor(TURNS / HISTORY_SAMPLE));
  for (const item of items.filter((_, i) => i % step === 0)) {
    const events = await rawHistoryEvents(run.client, batchChildId(name, item.id));
    run.historyBytes += temporal.api.history.v1.History.encode({ events }).finish().length;
    run.historyTurns++;
  }
  run.workerCpu += workerCpu;
  run.serverCpu += serverCpu;
  run.wall += wall;
  run.storedBytes += store1.bytes - store0.bytes;
  run.storedObjects += store1.objects - store0.objects;
  run.loads.push(load);
  console.log(
    `  round ${round}, ${run.mode.name.padEnd(11)}: wall ${wall.toFixed(1)} s; CPU worker ${workerCpu.toFixed(2)} s, server ${serverCpu.toFixed(2)} s; ` +
      `stored ${formatBytes(store1.bytes - store0.bytes)} in ${store1.objects - store0.objects} objects; load ${loads}`,
  );
}

function report(runs: ModeRun[]): void {
  const off = runs[0]!;
  const ratio = (value: number, base: number): string => (base > 0 ? `×${(value / base).toFixed(2)}` : '×-');
  const turns = TURNS * ROUNDS;
  const columns: Array<[string, (r: ModeRun) => number, (v: number) => string]> = [
    ['wall per batch', (r) => r.wall / ROUNDS, (v) => `${v.toFixed(1)} s`],
    ['worker CPU per turn', (r) => r.workerCpu / turns, (v) => `${(v * 1000).toFixed(1)} ms`],
    ['server CPU per turn', (r) => r.serverCpu / turns, (v) => `${(v * 1000).toFixed(1)} ms`],
    ['history per turn', (r) => r.historyBytes / r.historyTurns, (v) => formatBytes(Math.round(v))],
    ['stored per turn', (r) => r.storedBytes / turns, (v) => formatBytes(Math.round(v))],
    ['objects per turn', (r) => r.storedObjects / turns, (v) => v.toFixed(1)],
  ];
  console.log(`\nPer mode, summed over ${ROUNDS} round(s) of ${TURNS} turns (ratio to off); ${os.availableParallelism()} cores`);
  console.log(`  ${'mode'.padEnd(11)} | ${columns.map(([title]) => title.padStart(20)).join(' | ')} | load (1 min) after each batch`);
  for (const r of runs) {
    const cells = columns.map(([, value, format]) => `${format(value(r))} ${ratio(value(r), value(off))}`.padStart(20));
    console.log(`  ${r.mode.name.padEnd(11)} | ${cells.join(' | ')} | ${r.loads.map((l) => l.toFixed(2)).join(', ')}`);
  }
}

async function main(): Promise<void> {
  const cleanups: Array<() => unknown> = [];
  try {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-encryption-bench-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const keyringFile = path.join(dir, 'keyring.json');
    addNewKey(keyringFile);
    const text = projectText();
    await codecBenchmark(keyringFile, text);

    const config = writeEverythingConfig('mcp-turns-bench-', { claude: { maxConcurrentCalls: CONCURRENCY * 2 } });
    cleanups.push(() => fs.rmSync(path.dirname(config), { recursive: true, force: true }));
    const server = await startDevServer({ cliPath: testTemporalCli().path, port: await freePort(), uiPort: await freePort() });
    cleanups.push(() => server.stop());
    const echo = text.slice(0, 2048);
    const stub = await startStubModel({
      scenarios: {
        bench: {
          latencyMs: LATENCY,
          steps: [
            { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: `${echo}\n({{question}})` } }] },
            { content: [{ type: 'tool_use', name: 'everything__get-sum', input: { a: 1, b: 2 } }] },
            { content: [{ type: 'text', text: 'done: {{toolResults}}' }] },
          ],
          formatter: { conversation: [{ type: 'text', content: 'answer: {{toolResults}}' }] },
        },
      },
    });
    cleanups.push(() => stub.close());
    const connection = await Connection.connect({ address: server.address });
    cleanups.push(() => connection.close());

    const modes: Mode[] = [
      { name: 'off' },
      { name: 'on', encryption: { keyringFile, compress: false } },
      { name: 'on+compress', encryption: { keyringFile, compress: true } },
    ];
    const runs: ModeRun[] = [];
    for (const mode of modes) {
      const slug = mode.name.replace('+', '-');
      const store = path.join(dir, `payloads-${slug}`);
      const taskQueue = `bench-encryption-${slug}`;
      const env: NodeJS.ProcessEnv = {
        ...encryptionEnv(process.env, mode.encryption),
        TEMPORAL_ADDRESS: server.address,
        ANTHROPIC_API_KEY: 'bench',
        ANTHROPIC_BASE_URL: stub.url,
        MCP_TURNS_STORAGE: `fs:${store}`,
      };
      const worker = spawn(process.execPath, [BIN, 'worker', '--config', config, '--task-queue', taskQueue, '--log-level', 'ERROR'], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      cleanups.push(() => stop(worker));
      const ready = await readyLine(worker, taskQueue);
      if (!ready.split('; ').includes(describeEncryption(mode.encryption))) throw new Error(`the ${mode.name} worker is not set up as its mode says: ${ready}`);
      const client = new Client({ connection, ...clientStorageOptions(createDataConverter(testSettings(env).storage.get(), mode.encryption)) });
      runs.push({ mode, taskQueue, store, worker, client, workerCpu: 0, serverCpu: 0, wall: 0, historyBytes: 0, historyTurns: 0, storedBytes: 0, storedObjects: 0, loads: [] });
    }

    console.log(
      `\n${TURNS} turns × 2 tool rounds a batch (echo of ${formatBytes(Buffer.byteLength(echo))} of text, then get-sum), stub latency ${LATENCY} ms, ` +
        `batch concurrency ${CONCURRENCY}; ${ROUNDS} round(s) of off, on, on+compress; ${os.availableParallelism()} cores`,
    );
    for (let round = 1; round <= ROUNDS; round++) {
      for (const run of runs) await measureBatch(run, round, server.pid!);
    }
    report(runs);
  } finally {
    // Also after a failure: no worker or dev server is left running, no temporary directory left behind.
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (err) {
        console.error(`cleanup: ${(err as Error).message}`);
      }
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
