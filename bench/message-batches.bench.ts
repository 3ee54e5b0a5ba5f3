/**
 * Claude calls through Anthropic's Message Batches API (`messageBatches`), against the stub's
 * Batches API, with a dev server of its own and `mcp-turns worker` processes (their memory and CPU
 * read from /proc). Every absolute figure is printed with the machine's load averages; ratios are
 * measured in the same run. Three parts:
 *
 * 1. QUERIES (1000) queries × 2 tool rounds (everything__echo twice, then text, then the
 *    formatter; fixed usage per step, model claude-sonnet-4-6 so they are priced) through Message
 *    Batches, then the same items interactively: wall time of each; the Message Batches made, per
 *    round (step 1, 2, 3, formatter) and requests per batch; requests that reached /v1/messages in
 *    the batched run (must be 0); the total cost of each and its ratio (must be 0.5);
 *    duplicateSubmissions() (must be empty); every turn completed; the worker's sticky-cache and
 *    replay counters over each run (its Prometheus metrics) and the collector's runs (events, bytes,
 *    request signals, workflow tasks that timed out or failed).
 * 2. From a Message Batch's end to its turns' next requests: per request, to the next request
 *    reaching the collector (the turn's submit activity, from its history) and to the next Message
 *    Batch's creation (the stub's log), split into poll + delivery, the turn, and the collector's
 *    gathering; p50/p90/max beside the poll settings. Again with FLOOR_POLL_INITIAL_MS (10) on
 *    FLOOR_QUERIES (200) queries, for the floor.
 * 3. A fresh worker (sticky cache WAITING_CACHED_WORKFLOWS, default 500 = the worker's default) with
 *    the stub's batches taking an hour: its RSS idle, with WAITING_SMALL (1000) turns waiting for
 *    their first request, and with WAITING (10000) waiting; the collector's history length and runs
 *    (continue-as-new); then the batches are cancelled and the stub must see every Message Batch
 *    cancelled. Starting the turns is timeboxed (WAITING_TIMEBOX_MIN, 15); the waits end early when
 *    the collector is stuck (its workflow task at attempt COLLECTOR_STUCK_ATTEMPTS (5), or scheduled
 *    and not started for COLLECTOR_STUCK_UNSTARTED_S (180)), and when the large batch has started
 *    no turn for WAITING_STALL_S (60) with turns left (the rest then goes into further batches).
 *
 *   npm run bench:message-batches      (QUERIES=1000 WAITING=10000 by default; PARTS=1,2,3)
 *   QUERIES=50 FLOOR_QUERIES=30 WAITING=500 WAITING_SMALL=100 node dist/bench/message-batches.bench.js   (a quick check)
 *
 * Other settings: CONCURRENCY (200), MAX_WAIT_MS (2000), POLL_INITIAL_MS (300), POLL_MAX_MS (1000),
 * PROCESSING_MS (500), FLOOR_POLL_MAX_MS (50), WAITING_CONCURRENCY (200), WAITING_MAX_WAIT_MS
 * (10000), WAITING_POLL_INITIAL_MS (10000), WAITING_POLL_MAX_MS (60000), RUN_TIMEOUT_MIN (20),
 * CANCEL_TIMEOUT_MIN (15). The workers' stderr is kept in a mcp-turns-mb-bench-logs-* directory.
 *
 * Exits non-zero when an assertion fails (each is printed as `FAILED: …`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { writeEverythingConfig } from './everything-config';
import { cpuSeconds, loadAverages } from './machine-figures';
import { metricsDelta, metricsSnapshot } from './worker-metrics';
import { batchShardWorkflowIds, runBatch, startBatch, type BatchItemOutcome } from '../src/client/batch-client';
import { executeChatTurn } from '../src/client/chat-turn-client';
import { batchChildId, type BatchItem, type BatchProgress } from '../src/core/batch';
import { collectorWorkflowId, type CollectorStatus } from '../src/core/message-batches';
import { batchProgressQuery, messageBatchesQuery } from '../src/core/workflow-handlers';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { startStubModel, type Scenario, type StubModel } from '../src/stub';
import type { MessageBatchLog } from '../src/stub/message-batches';
import { freePort, startDevServer, type DevServer } from '../src/temporal/dev-server';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testDataConverter } from '../test/support/settings';

const env = (name: string, fallback: number): number => (process.env[name] === undefined ? fallback : Number(process.env[name]));

const PARTS = new Set((process.env.PARTS ?? '1,2,3').split(',').map((p) => p.trim()));
const QUERIES = env('QUERIES', 1000);
const CONCURRENCY = env('CONCURRENCY', 200);
const MAX_WAIT_MS = env('MAX_WAIT_MS', 2000);
const POLL_INITIAL_MS = env('POLL_INITIAL_MS', 300);
const POLL_MAX_MS = env('POLL_MAX_MS', 1000);
const PROCESSING_MS = env('PROCESSING_MS', 500);
const FLOOR_QUERIES = env('FLOOR_QUERIES', 200);
const FLOOR_POLL_INITIAL_MS = env('FLOOR_POLL_INITIAL_MS', 10);
const FLOOR_POLL_MAX_MS = env('FLOOR_POLL_MAX_MS', 50);
const RUN_TIMEOUT_MIN = env('RUN_TIMEOUT_MIN', 20);
const WAITING = env('WAITING', 10_000);
const WAITING_SMALL = Math.min(env('WAITING_SMALL', 1000), WAITING);
const WAITING_CONCURRENCY = env('WAITING_CONCURRENCY', 200);
const WAITING_CACHED = env('WAITING_CACHED_WORKFLOWS', 500);
const WAITING_MAX_WAIT_MS = env('WAITING_MAX_WAIT_MS', 10_000);
const WAITING_POLL_INITIAL_MS = env('WAITING_POLL_INITIAL_MS', 10_000);
const WAITING_POLL_MAX_MS = env('WAITING_POLL_MAX_MS', 60_000);
const WAITING_TIMEBOX_MIN = env('WAITING_TIMEBOX_MIN', 15);
/** No new request for this long while turns are left to start: the batch has stopped starting them. */
const STALL_S = env('WAITING_STALL_S', 60);
const CANCEL_TIMEOUT_MIN = env('CANCEL_TIMEOUT_MIN', 15);
/** A collector whose workflow task is at this attempt has stopped making progress: the waits end early. */
const STUCK_ATTEMPTS = env('COLLECTOR_STUCK_ATTEMPTS', 5);
/** …or whose workflow task has waited this long to be started. */
const STUCK_UNSTARTED_S = env('COLLECTOR_STUCK_UNSTARTED_S', 180);

const MODEL = 'claude-sonnet-4-6';
const BIN = path.resolve(__dirname, '..', '..', 'bin', 'mcp-turns.js');
const usage = { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
/** Two tool rounds, then the answer, then the formatter; fixed usage per step. */
const twoRounds: Scenario = {
  steps: [
    { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'one {{question}}' } }], usage },
    { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'two {{question}}' } }], usage },
    { content: [{ type: 'text', text: 'answered {{toolResults}}' }], usage },
  ],
  formatter: { conversation: [{ type: 'text', content: 'A: {{question}}' }] },
};

const failures: string[] = [];
function check(ok: boolean, what: string): void {
  if (!ok) {
    failures.push(what);
    console.log(`  FAILED: ${what}`);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const load = (): string => `load ${loadAverages()}`;
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1))]!;
}
function spread(values: number[], unit = ' ms'): string {
  if (!values.length) return 'n/a (no data)';
  const r = (v: number): string => String(Math.round(v));
  return `p50 ${r(percentile(values, 0.5))}${unit}, p90 ${r(percentile(values, 0.9))}${unit}, max ${r(Math.max(...values))}${unit} (n=${values.length})`;
}
function minMedMax(values: number[]): string {
  if (!values.length) return 'n/a';
  return `${Math.min(...values)} / ${percentile(values, 0.5)} / ${Math.max(...values)}`;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** A gauge of a worker's Prometheus metrics, summed over its label sets. */
async function gauge(metricsUrl: string, name: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(metricsUrl)).text();
    const lines = text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    if (!lines.length) return undefined;
    return lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  } catch {
    return undefined;
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done in ${s(ms)}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
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

interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  taskQueue: string;
  metricsUrl?: string;
  stderrFile: string;
  stop(): Promise<void>;
}

interface Ctx {
  home: string;
  /** Kept after the run: the workers' stderr. */
  logs: string;
  server: DevServer;
  stub: StubModel;
  client: Client;
}

/** A `mcp-turns worker` process with the everything MCP server and `sections` in its config. */
async function startWorker(ctx: Ctx, label: string, taskQueue: string, sections: Record<string, unknown>, metrics = false): Promise<WorkerProcess> {
  const config = writeEverythingConfig(`mcp-turns-mb-bench-${label}-`, sections);
  const stderrFile = path.join(ctx.logs, `worker-${label}.stderr.log`);
  const stderr = fs.openSync(stderrFile, 'w');
  const metricsPort = metrics ? await freePort() : undefined;
  const child = spawn(
    process.execPath,
    [BIN, 'worker', '--config', config, '--task-queue', taskQueue, '--log-level', 'WARN', ...(metricsPort ? ['--metrics', `127.0.0.1:${metricsPort}`] : [])],
    {
      env: { ...process.env, TEMPORAL_ADDRESS: ctx.server.address, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: ctx.stub.url },
      stdio: ['ignore', 'pipe', stderr],
    },
  );
  fs.closeSync(stderr);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        if (out.length < 10_000) out += d.toString();
        if (out.includes('mcp-turns worker on')) resolve();
      });
      void exited.then((code) => reject(new Error(`worker ${label} exited (${code}) before it was ready; see ${stderrFile}`)));
    }),
    120_000,
    `worker ${label} ready`,
  );
  return {
    child,
    pid: child.pid!,
    taskQueue,
    ...(metricsPort ? { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` } : {}),
    stderrFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The worker's log lines (WARN and above) by message, most frequent first. */
function stderrSummary(w: WorkerProcess): string {
  const lines = fs.readFileSync(w.stderrFile, 'utf8').split('\n');
  const counts = new Map<string, number>();
  for (const line of lines) {
    const m = /\[(WARN|ERROR)\]\s+([^{]*)/.exec(line);
    if (!m) continue;
    const key = `${m[1]} ${m[2]!.trim().replace(/[0-9a-f]{8}-[0-9a-f-]{27}(:\d+)*/g, '<run>').slice(0, 160)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  if (!counts.size) return `worker log: no WARN/ERROR lines (${w.stderrFile})`;
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 4);
  return `worker log (${w.stderrFile}): ${top.map(([k, n]) => `${n}× "${k}"`).join('; ')}${counts.size > 4 ? `; ${counts.size - 4} other messages` : ''}`;
}

const items = (prefix: string, n: number, from = 1): BatchItem[] =>
  Array.from({ length: n }, (_, i) => ({ id: `q${from + i}`, input: { question: `${prefix} question ${from + i}`, model: MODEL } }));

interface RunFigures {
  name: string;
  outcomes: BatchItemOutcome[];
  /** The worker's sticky cache, replays and failed workflow tasks over the run. */
  metrics: string;
  wallMs: number;
  workerCpuS: number;
  serverCpuS: number;
  load: string;
}

/** Runs a batch to its end, printing progress every 30 s. */
async function runTimed(ctx: Ctx, worker: WorkerProcess, name: string, list: BatchItem[], messageBatches: boolean): Promise<RunFigures> {
  const outcomes: BatchItemOutcome[] = [];
  const metrics0 = await metricsSnapshot(worker.metricsUrl);
  const cpu0 = cpuSeconds(worker.pid);
  const serverCpu0 = cpuSeconds(ctx.server.pid!);
  const t0 = Date.now();
  let lastPrint = t0;
  await withTimeout(
    runBatch(ctx.client, {
      name,
      items: list,
      concurrency: CONCURRENCY,
      taskQueue: worker.taskQueue,
      messageBatches,
      onResult: (o) => void outcomes.push(o),
      onProgress: (p: BatchProgress) => {
        if (Date.now() - lastPrint < 30_000) return;
        lastPrint = Date.now();
        console.log(
          `    [${s(Date.now() - t0)}] ${name}: completed ${p.completed}, failed ${p.failed}, running ${p.running.length}` +
            (p.waitingMessageBatch ? `, have waited for a Message Batch ${p.waitingMessageBatch.length}` : '') +
            `, Message Batches so far ${ctx.stub.messageBatches.batches.length} (${load()})`,
        );
      },
    }),
    RUN_TIMEOUT_MIN * 60_000,
    `batch ${name}`,
  );
  const wallMs = Date.now() - t0;
  return {
    name,
    outcomes,
    metrics: metricsDelta(metrics0, await metricsSnapshot(worker.metricsUrl)),
    wallMs,
    workerCpuS: cpuSeconds(worker.pid) - cpu0,
    serverCpuS: cpuSeconds(ctx.server.pid!) - serverCpu0,
    load: load(),
  };
}

const roundOf = (r: { kind: string; step: number }): string => (r.kind === 'formatter' ? 'formatter' : `step ${r.step + 1}`);
const ROUNDS = ['step 1', 'step 2', 'step 3', 'formatter'];

function printBatchRounds(batches: MessageBatchLog[]): void {
  const perBatch = batches.map((b) => b.requests.length);
  const mixed = batches.filter((b) => new Set(b.requests.map(roundOf)).size > 1).length;
  console.log(`  Message Batches created: ${batches.length}; requests per batch min/median/max ${minMedMax(perBatch)}; ${mixed} batches held requests of more than one round`);
  const rounds = new Set([...ROUNDS, ...batches.flatMap((b) => b.requests.map(roundOf))]);
  for (const round of rounds) {
    const counts = batches.map((b) => b.requests.filter((r) => roundOf(r) === round).length).filter((n) => n > 0);
    if (!counts.length) continue;
    console.log(`    ${round.padEnd(9)}: ${counts.reduce((a, b) => a + b, 0)} requests in ${counts.length} Message Batches, per batch min/median/max ${minMedMax(counts)}`);
  }
}

// ---------- turn histories: when a turn's requests reached the collector and its results came back

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

function isType(e: HistoryEvent, type: temporal.api.enums.v1.EventType): boolean {
  const t = e.eventType as unknown;
  return typeof t === 'number' ? t === type : String(t).endsWith(EventType[type].replace(/^EVENT_TYPE_/, ''));
}

function decode<T>(payload: Payload | null | undefined): T | undefined {
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload<T>(payload);
  } catch {
    return undefined; // a stored payload (a claim): matched by order instead
  }
}

interface TurnTimes {
  /** Each request the turn submitted (in order): its custom_id (when readable) and when the submit activity completed. */
  submits: Array<{ customId?: string; at: number }>;
  /** Each result signalled to the turn (in order). */
  results: Array<{ customId?: string; at: number }>;
}

async function turnTimes(client: Client, workflowId: string): Promise<TurnTimes> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, string>();
  const times: TurnTimes = { submits: [], results: [] };
  for (const e of history.events ?? []) {
    if (isType(e, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)) {
      scheduled.set(String(e.eventId), e.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
    } else if (isType(e, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)) {
      const attrs = e.activityTaskCompletedEventAttributes;
      if (scheduled.get(String(attrs?.scheduledEventId)) !== 'submitToMessageBatch') continue;
      const result = decode<{ customId?: string; done?: unknown }>(attrs?.result?.payloads?.[0] as Payload | undefined);
      if (result?.done) continue; // a formatter done without a request
      times.submits.push({ ...(result?.customId ? { customId: result.customId } : {}), at: tsToMs(e.eventTime) });
    } else if (isType(e, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)) {
      const attrs = e.workflowExecutionSignaledEventAttributes;
      if (attrs?.signalName !== 'messageBatchResult') continue;
      const outcome = decode<{ customId?: string }>(attrs.input?.payloads?.[0] as Payload | undefined);
      times.results.push({ ...(outcome?.customId ? { customId: outcome.customId } : {}), at: tsToMs(e.eventTime) });
    }
  }
  return times;
}

/** The poll times after creation, and when a batch ending `processingMs` after its creation is seen. */
function pollSchedule(initial: number, max: number, processingMs: number): string {
  const at: number[] = [];
  let t = 0;
  let delay = initial;
  while (t <= processingMs && at.length < 200) {
    t += delay;
    at.push(t);
    delay = Math.min(Math.round(delay * 1.5), max);
  }
  const shown = at.length > 6 ? [...at.slice(0, 3), '…', ...at.slice(-2)] : at;
  return `polls at +${shown.join(', +')} ms after creation: a batch ending at +${processingMs} ms is seen at +${t} ms (poll delay ${t - processingMs} ms)`;
}

/**
 * From each Message Batch's end to the next requests of its turns: from the stub's log (the next
 * batch's creation) and the turns' histories (the result's arrival, the next request at the collector).
 */
async function latencyFigures(ctx: Ctx, label: string, batchName: string, list: BatchItem[], batches: MessageBatchLog[], settings: { maxWaitMs: number; pollInitialMs: number; pollMaxMs: number }): Promise<void> {
  const t0 = Date.now();
  const questionToId = new Map(list.map((item) => [item.input.question, item.id]));
  const times = new Map<string, TurnTimes>();
  await inWindow(list, 8, async (item) => {
    try {
      times.set(item.id, await turnTimes(ctx.client, batchChildId(batchName, item.id)));
    } catch (err) {
      console.log(`    history of ${item.id} not read: ${(err as Error).message}`);
    }
  });
  const fetchMs = Date.now() - t0;

  // Each question's requests in the order its turn made them (Message Batch creation order).
  const byQuestion = new Map<string, Array<{ batch: MessageBatchLog; customId: string }>>();
  for (const b of batches) {
    for (const r of b.requests) {
      if (!byQuestion.has(r.question)) byQuestion.set(r.question, []);
      byQuestion.get(r.question)!.push({ batch: b, customId: r.customId });
    }
  }
  const toNextBatch: number[] = [];
  const toCollector: number[] = [];
  const toResult: number[] = [];
  const turnPart: number[] = [];
  const gathering: number[] = [];
  const firstDelivered = new Map<string, number>();
  const lastDelivered = new Map<string, number>();
  let unmatched = 0;
  for (const [question, seq] of byQuestion) {
    seq.sort((a, b) => a.batch.createdAt - b.batch.createdAt);
    const id = questionToId.get(question);
    const t = id ? times.get(id) : undefined;
    const find = (list: TurnTimes['submits'], customId: string, index: number): number | undefined =>
      (list.find((x) => x.customId === customId) ?? (list.every((x) => !x.customId) ? list[index] : undefined))?.at;
    for (let i = 0; i < seq.length; i++) {
      const { batch, customId } = seq[i]!;
      if (batch.endedAt === undefined) continue;
      const delivered = t ? find(t.results, customId, i) : undefined;
      if (delivered !== undefined) {
        toResult.push(delivered - batch.endedAt);
        firstDelivered.set(batch.id, Math.min(firstDelivered.get(batch.id) ?? Infinity, delivered - batch.endedAt));
        lastDelivered.set(batch.id, Math.max(lastDelivered.get(batch.id) ?? -Infinity, delivered - batch.endedAt));
      }
      const next = seq[i + 1];
      if (!next) continue;
      toNextBatch.push(next.batch.createdAt - batch.endedAt);
      const atCollector = t ? find(t.submits, next.customId, i + 1) : undefined;
      if (atCollector === undefined) {
        unmatched++;
        continue;
      }
      toCollector.push(atCollector - batch.endedAt);
      gathering.push(next.batch.createdAt - atCollector);
      if (delivered !== undefined) turnPart.push(atCollector - delivered);
    }
  }
  console.log(`\n  ${label}: from a Message Batch's end to its turns' next requests (${times.size} turn histories read in ${s(fetchMs)}; ${load()})`);
  console.log(
    `    settings: processingMs ${ctx.stub.messageBatches.settings.processingMs}, maxWaitMs ${settings.maxWaitMs}, pollInitialMs ${settings.pollInitialMs} ×1.5 up to pollMaxMs ${settings.pollMaxMs}: ` +
      pollSchedule(settings.pollInitialMs, settings.pollMaxMs, ctx.stub.messageBatches.settings.processingMs),
  );
  console.log(`    batch end → its first result signalled to a turn (poll delay + retrieve + read results), per batch: ${spread([...firstDelivered.values()])}`);
  console.log(`    batch end → its last result signalled (+ delivery, 16 signals at a time), per batch:          ${spread([...lastDelivered.values()])}`);
  console.log(`    batch end → the result at the turn, per request:                                           ${spread(toResult)}`);
  console.log(`    result at the turn → its next request at the collector (the turn: workflow task, echo tool, submit activity): ${spread(turnPart)}`);
  console.log(`    batch end → the next request at the collector (poll + delivery + turn), per request:       ${spread(toCollector)}`);
  console.log(`    next request at the collector → its Message Batch created (gathering ≤ maxWaitMs + create): ${spread(gathering)}`);
  console.log(`    batch end → the next Message Batch created (all of the above), per request:                ${spread(toNextBatch)}`);
  if (unmatched) console.log(`    (${unmatched} next requests not found in their turn's history)`);
}

// ---------- part 1 and 2

async function partOneAndTwo(ctx: Ctx): Promise<void> {
  const messageBatches = { maxWaitMs: MAX_WAIT_MS, pollInitialMs: POLL_INITIAL_MS, pollMaxMs: POLL_MAX_MS };
  const worker = await startWorker(ctx, 'queries', 'bench-mb-queries', { claude: { maxConcurrentCalls: CONCURRENCY * 2, promptCaching: false, messageBatches } }, true);
  ctx.stub.messageBatches.settings.processingMs = PROCESSING_MS;
  const list = items('mb', QUERIES);
  const tag = Date.now().toString(36);
  console.log(
    `\n1. ${QUERIES} queries × 2 tool rounds (echo, echo, text, formatter), ${MODEL}, batch concurrency ${CONCURRENCY}, one worker process; ` +
      `collector maxWaitMs ${MAX_WAIT_MS}, pollInitialMs ${POLL_INITIAL_MS}, pollMaxMs ${POLL_MAX_MS}; stub processingMs ${PROCESSING_MS}; ${os.availableParallelism()} cores`,
  );
  try {
    const logFrom = ctx.stub.messageBatches.batches.length;
    const requestsFrom = ctx.stub.requests.length;
    const batchedName = `mb-batched-${tag}`;
    const batched = await runTimed(ctx, worker, batchedName, list, true);
    const direct = ctx.stub.requests.slice(requestsFrom).filter((r) => r.path.startsWith('/v1/messages'));
    const batches = ctx.stub.messageBatches.batches.slice(logFrom);

    const interactiveFrom = ctx.stub.requests.length;
    const interactive = await runTimed(ctx, worker, `mb-interactive-${tag}`, list, false);
    const interactiveRequests = ctx.stub.requests.length - interactiveFrom;

    const cost = (r: RunFigures): number => r.outcomes.reduce((n, o) => n + (o.result?.costUsd ?? 0), 0);
    const completed = (r: RunFigures): number => r.outcomes.filter((o) => o.status === 'completed').length;
    const batchedCost = cost(batched);
    const interactiveCost = cost(interactive);
    const ratio = batchedCost / interactiveCost;
    const duplicates = ctx.stub.messageBatches.duplicateSubmissions();
    const requestsInBatches = batches.reduce((n, b) => n + b.requests.length, 0);

    console.log(`  through Message Batches: ${s(batched.wallMs)} wall, ${completed(batched)} of ${QUERIES} completed; worker CPU ${batched.workerCpuS.toFixed(1)} s, Temporal server CPU ${batched.serverCpuS.toFixed(1)} s (${batched.load})`);
    console.log(`  interactive:             ${s(interactive.wallMs)} wall, ${completed(interactive)} of ${QUERIES} completed; worker CPU ${interactive.workerCpuS.toFixed(1)} s, Temporal server CPU ${interactive.serverCpuS.toFixed(1)} s (${interactive.load}); ${interactiveRequests} requests to /v1/messages`);
    console.log(`  wall time batched / interactive: ${(batched.wallMs / interactive.wallMs).toFixed(1)}×; worker CPU batched / interactive: ${(batched.workerCpuS / interactive.workerCpuS).toFixed(1)}×`);
    console.log(`  worker metrics over the batched run: ${batched.metrics}`);
    console.log(`  worker metrics over the interactive run: ${interactive.metrics}`);
    console.log(`  ${await collectorHistory(ctx, worker.taskQueue)}`);
    printBatchRounds(batches);
    console.log(`  requests in Message Batches: ${requestsInBatches} (${QUERIES} × 4 = ${QUERIES * 4}); requests that reached /v1/messages in the batched run: ${direct.length}`);
    console.log(
      `  cost: batched $${batchedCost.toFixed(4)}, interactive $${interactiveCost.toFixed(4)}, ratio ${ratio.toFixed(6)}; ` +
        `per turn $${(batchedCost / QUERIES).toFixed(6)} vs $${(interactiveCost / QUERIES).toFixed(6)}`,
    );
    console.log(`  duplicateSubmissions(): ${JSON.stringify(duplicates.slice(0, 5))}${duplicates.length > 5 ? ` (+${duplicates.length - 5})` : ''}`);
    const failed = [...batched.outcomes, ...interactive.outcomes].filter((o) => o.status !== 'completed');
    if (failed.length) console.log(`  failed turns: ${failed.length}, e.g. ${failed[0]!.workflowId}: ${failed[0]!.error}`);
    check(completed(batched) === QUERIES && batched.outcomes.length === QUERIES, `every batched turn completed (${completed(batched)} of ${QUERIES})`);
    check(completed(interactive) === QUERIES && interactive.outcomes.length === QUERIES, `every interactive turn completed (${completed(interactive)} of ${QUERIES})`);
    check(direct.length === 0, `no request of the batched run reached /v1/messages (${direct.length} did)`);
    check(requestsInBatches === QUERIES * 4, `every batched request in a Message Batch once (${requestsInBatches} of ${QUERIES * 4})`);
    check(batchedCost > 0 && Math.abs(ratio - 0.5) < 1e-6, `batched cost is half the interactive cost (ratio ${ratio})`);
    check(duplicates.length === 0, `no duplicate submissions (${duplicates.length})`);
    console.log(`  ${stderrSummary(worker)}`);

    if (PARTS.has('2')) {
      console.log(`\n2. Latency from a Message Batch's end to the turns' next requests`);
      await latencyFigures(ctx, `the ${QUERIES}-query run above`, batchedName, list, batches, messageBatches);
    }
  } finally {
    await worker.stop();
  }

  if (!PARTS.has('2') || FLOOR_QUERIES <= 0) return;
  const floorSettings = { maxWaitMs: MAX_WAIT_MS, pollInitialMs: FLOOR_POLL_INITIAL_MS, pollMaxMs: FLOOR_POLL_MAX_MS };
  const floorWorker = await startWorker(ctx, 'floor', 'bench-mb-floor', { claude: { maxConcurrentCalls: CONCURRENCY * 2, promptCaching: false, messageBatches: floorSettings } });
  try {
    const floorList = items('floor', FLOOR_QUERIES);
    const logFrom = ctx.stub.messageBatches.batches.length;
    const name = `mb-floor-${tag}`;
    const run = await runTimed(ctx, floorWorker, name, floorList, true);
    const batches = ctx.stub.messageBatches.batches.slice(logFrom);
    const done = run.outcomes.filter((o) => o.status === 'completed').length;
    console.log(`\n  floor run: ${FLOOR_QUERIES} queries through Message Batches with pollInitialMs ${FLOOR_POLL_INITIAL_MS}, pollMaxMs ${FLOOR_POLL_MAX_MS}: ${s(run.wallMs)} wall, ${done} completed, ${batches.length} Message Batches (${run.load})`);
    check(done === FLOOR_QUERIES, `every turn of the floor run completed (${done} of ${FLOOR_QUERIES})`);
    await latencyFigures(ctx, `floor (${FLOOR_QUERIES} queries, small polls)`, name, floorList, batches, floorSettings);
    console.log(`  ${stderrSummary(floorWorker)}`);
  } finally {
    await floorWorker.stop();
  }
}

// ---------- part 3

interface StartedBatch {
  name: string;
  total: number;
  concurrency: number;
  list: BatchItem[];
}

/** Each shard's progress, in shard order (undefined: it did not answer). */
async function shardProgressByShard(ctx: Ctx, b: StartedBatch): Promise<Array<BatchProgress | undefined>> {
  const ids = batchShardWorkflowIds(b.name, b.concurrency, b.total);
  return Promise.all(
    ids.map((id) =>
      withTimeout(ctx.client.workflow.getHandle(id).query(batchProgressQuery), 10_000, `query ${id}`).catch(() => undefined),
    ),
  );
}

async function collectorStatus(ctx: Ctx, taskQueue: string): Promise<CollectorStatus | undefined> {
  return withTimeout(ctx.client.workflow.getHandle(collectorWorkflowId(taskQueue, MODEL)).query(messageBatchesQuery), 20_000, 'collector query').catch(() => undefined);
}

/** The collector's current run as the server sees it, and whether its workflow tasks have stopped completing. */
async function collectorHealth(ctx: Ctx, taskQueue: string): Promise<{ line: string; stuck: boolean }> {
  const id = collectorWorkflowId(taskQueue, MODEL);
  try {
    const d = await withTimeout(ctx.client.workflow.getHandle(id).describe(), 20_000, 'describe');
    const task = d.raw.pendingWorkflowTask;
    const attempt = task?.attempt ?? 0;
    // A workflow task scheduled and not started: how long it has waited for the worker.
    const unstartedMs = task?.scheduledTime && !task.startedTime ? Date.now() - tsToMs(task.scheduledTime) : 0;
    const mb = Number(d.historySize) / 2 ** 20;
    const stuck = ['TERMINATED', 'FAILED', 'TIMED_OUT'].includes(d.status.name) || attempt >= STUCK_ATTEMPTS || unstartedMs >= STUCK_UNSTARTED_S * 1000;
    return {
      line:
        `collector run ${d.status.name}, ${d.historyLength} events, ${mb.toFixed(1)} MB` +
        (attempt > 1 ? `, its workflow task at attempt ${attempt}` : '') +
        (unstartedMs >= 10_000 ? `, its workflow task scheduled ${s(unstartedMs)} ago and not started` : ''),
      stuck,
    };
  } catch (err) {
    return { line: `collector not described (${(err as Error).message})`, stuck: false };
  }
}

/**
 * The collector's runs, newest first (walking continue-as-new back through each run's first event):
 * events, history bytes, request and withdraw signals (distinct requests), workflow tasks that timed out or failed.
 */
async function collectorHistory(ctx: Ctx, taskQueue: string): Promise<string> {
  const id = collectorWorkflowId(taskQueue, MODEL);
  try {
    const d = await withTimeout(ctx.client.workflow.getHandle(id).describe(), 30_000, 'describe');
    const runs: string[] = [];
    let runId: string | undefined = d.runId;
    while (runId && runs.length < 50) {
      const handle: WorkflowHandle = ctx.client.workflow.getHandle(id, runId);
      const rd = await handle.describe();
      const history: temporal.api.history.v1.IHistory = await withTimeout(handle.fetchHistory(), 300_000, 'history');
      const counts = { signals: 0, requests: 0, withdraws: 0, timedOut: 0, failed: 0, creates: 0 };
      const distinct = new Set<string>();
      let undecoded = 0;
      for (const e of history.events ?? []) {
        if (isType(e, EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)) counts.timedOut++;
        else if (isType(e, EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)) counts.failed++;
        else if (isType(e, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) && e.activityTaskScheduledEventAttributes?.activityType?.name === 'createMessageBatch') counts.creates++;
        else if (isType(e, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)) {
          const a = e.workflowExecutionSignaledEventAttributes;
          if (a?.signalName === 'messageBatchRequest') {
            // One signal carries the requests a worker's submits made together, one payload each.
            counts.signals++;
            for (const payload of a.input?.payloads ?? []) {
              counts.requests++;
              const request = decode<{ entry?: { batchRequest?: string } }>(payload as Payload);
              if (request?.entry?.batchRequest) distinct.add(request.entry.batchRequest);
              else undecoded++;
            }
          } else if (a?.signalName === 'messageBatchWithdraw') counts.withdraws++;
        }
      }
      runs.push(
        `${rd.status.name} ${rd.historyLength} events ${(Number(rd.historySize) / 2 ** 20).toFixed(1)} MB: ${counts.signals} request signals carrying ${counts.requests} requests ` +
          `(${undecoded ? `${undecoded} stored, ` : ''}${distinct.size} distinct read), ` +
          `${counts.withdraws} withdraw signals, ${counts.creates} creates, ${counts.timedOut} workflow tasks timed out, ${counts.failed} failed`,
      );
      runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
    return `collector ${id}: ${runs.length} run(s), ${runs.length > 1 ? `continued as new ${runs.length - 1}×` : 'never continued as new'}; newest first:\n      ${runs.join('\n      ')}`;
  } catch (err) {
    return `collector ${id}: not described (${(err as Error).message})`;
  }
}

async function partThree(ctx: Ctx): Promise<void> {
  const taskQueue = 'bench-mb-waiting';
  const settings = { maxWaitMs: WAITING_MAX_WAIT_MS, pollInitialMs: WAITING_POLL_INITIAL_MS, pollMaxMs: WAITING_POLL_MAX_MS };
  ctx.stub.messageBatches.settings.processingMs = 3_600_000;
  const worker = await startWorker(
    ctx,
    'waiting',
    taskQueue,
    { claude: { maxConcurrentCalls: 400, promptCaching: false, messageBatches: settings }, worker: { maxCachedWorkflows: WAITING_CACHED } },
    true,
  );
  const started: StartedBatch[] = [];
  const logFrom = ctx.stub.messageBatches.batches.length;
  const ourBatches = (): MessageBatchLog[] => ctx.stub.messageBatches.batches.slice(logFrom);
  const inBatches = (): number => ourBatches().reduce((n, b) => n + b.requests.length, 0);
  const tag = Date.now().toString(36);
  console.log(
    `\n3. Memory of turns waiting for a Message Batch: one fresh worker process (sticky cache maxCachedWorkflows ${WAITING_CACHED}, set in its config; the worker's default is 500), ` +
      `stub processingMs 1 h; collector maxWaitMs ${settings.maxWaitMs}, pollInitialMs ${settings.pollInitialMs}, pollMaxMs ${settings.pollMaxMs}; batch concurrency ${WAITING_CONCURRENCY}`,
  );
  try {
    // One interactive turn to the end first, so the worker has loaded what a turn needs (sandbox, MCP server).
    await executeChatTurn(ctx.client, { question: 'warm-up', model: MODEL }, { taskQueue });
    await sleep(5000);
    const idle = rssMb(worker.pid);
    const idleCache = await gauge(worker.metricsUrl!, 'temporal_sticky_cache_size');
    console.log(`  worker RSS idle (after one interactive turn): ${idle.toFixed(0)} MB, ${idleCache ?? '?'} workflows cached (${load()})`);

    /**
     * Waits until `target` requests are in Message Batches (the stub's log), printing progress every
     * 15 s. Ends early when the collector's workflow task stops completing, or when `watched` has
     * turns left to start but has started none for STALL_S with every one of its shards answering.
     */
    type WaitEnd = 'all' | 'timebox' | 'collector stuck' | 'batch stopped starting turns';
    const wait = async (target: number, label: string, deadline: number, watched?: StartedBatch): Promise<WaitEnd> => {
      const t0 = Date.now();
      let lastStarted = -1;
      let lastStartChange = Date.now();
      let lastCheck = 0;
      for (;;) {
        const count = inBatches();
        if (count >= target) return 'all';
        if (Date.now() > deadline) {
          console.log(`    timebox reached: ${count} of ${target} requests in Message Batches after ${s(Date.now() - t0)}`);
          return 'timebox';
        }
        if (Date.now() - lastCheck >= 15_000) {
          lastCheck = Date.now();
          const [collector, health, byBatch] = await Promise.all([
            collectorStatus(ctx, taskQueue),
            collectorHealth(ctx, taskQueue),
            Promise.all(started.map(async (b) => ({ b, shards: await shardProgressByShard(ctx, b) }))),
          ]);
          const known = byBatch.flatMap(({ shards }) => shards.filter((p): p is BatchProgress => p !== undefined));
          const unanswered = byBatch.reduce((n, { shards }) => n + shards.filter((p) => !p).length, 0);
          console.log(
            `    [${s(Date.now() - t0)}] ${label}: turns started ${known.reduce((n, p) => n + p.nextIndex, 0)}, waiting for a Message Batch ${known.reduce((n, p) => n + (p.waitingMessageBatch?.length ?? 0), 0)}` +
              `${unanswered ? ` (${unanswered} shards did not answer)` : ''}; collector pending ${collector?.pending.requests ?? '? (no answer)'}; ` +
              `requests in Message Batches ${count} (${ourBatches().length} batches) of ${target}; ${health.line}; worker RSS ${rssMb(worker.pid).toFixed(0)} MB (${load()})`,
          );
          if (health.stuck) {
            console.log(`    COLLECTOR STUCK: ${health.line}; no longer waiting`);
            return 'collector stuck';
          }
          const mine = watched ? byBatch.find(({ b }) => b === watched)?.shards : undefined;
          if (mine && mine.every((p) => p !== undefined)) {
            const shards = mine as BatchProgress[];
            const startedTurns = shards.reduce((n, p) => n + p.nextIndex, 0);
            if (startedTurns !== lastStarted) {
              lastStarted = startedTurns;
              lastStartChange = Date.now();
            } else if (shards.some((p) => p.nextIndex < p.total) && Date.now() - lastStartChange >= STALL_S * 1000) {
              console.log(
                `    BATCH STOPPED STARTING TURNS: ${watched!.name} has started no turn for ${STALL_S} s with ${watched!.total - startedTurns} left: ` +
                  `started per shard ${shards.map((p) => `${p.nextIndex}/${p.total}`).join(' ')}; running ${shards.reduce((n, p) => n + p.running.length, 0)}, ` +
                  `of them waiting for a Message Batch ${shards.reduce((n, p) => n + (p.waitingMessageBatch?.length ?? 0), 0)}`,
              );
              return 'batch stopped starting turns';
            }
          }
        }
        await sleep(2000);
      }
    };

    const startWaiting = async (name: string, list: BatchItem[]): Promise<StartedBatch> => {
      await startBatch(ctx.client, { name, items: list, concurrency: WAITING_CONCURRENCY, taskQueue, messageBatches: true });
      const b = { name, total: list.length, concurrency: WAITING_CONCURRENCY, list };
      started.push(b);
      return b;
    };

    /** Turns that have waited for a Message Batch (the shards' count; none goes on while the stub holds them for an hour). */
    const waitingTurns = async (): Promise<number> => {
      const shards = (await Promise.all(started.map((b) => shardProgressByShard(ctx, b)))).flat();
      return shards.reduce((n, p) => n + (p?.waitingMessageBatch?.length ?? 0), 0);
    };

    const measure = async (label: string): Promise<number> => {
      await sleep(10_000);
      const samples: number[] = [];
      for (let i = 0; i < 3; i++) {
        samples.push(rssMb(worker.pid));
        if (i < 2) await sleep(5000);
      }
      const cached = await gauge(worker.metricsUrl!, 'temporal_sticky_cache_size');
      const rss = percentile(samples, 0.5);
      const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${worker.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      console.log(
        `  worker RSS with ${label}: ${samples.map((r) => r.toFixed(0)).join(', ')} MB (every 5 s, 10 s after the last request reached a Message Batch); peak so far ${hwm.toFixed(0)} MB; ` +
          `${cached ?? '?'} workflows in its sticky cache (max ${WAITING_CACHED}) (${load()})`,
      );
      return rss;
    };

    // The small size.
    const t0 = Date.now();
    await startWaiting(`mb-wait-${tag}-a`, items('wait', WAITING_SMALL));
    const smallEnd = await wait(WAITING_SMALL, `${WAITING_SMALL} turns`, Date.now() + WAITING_TIMEBOX_MIN * 60_000);
    console.log(`  ${inBatches()} requests in ${ourBatches().length} Message Batches ${s(Date.now() - t0)} after the first start${smallEnd === 'all' ? '' : ` (${smallEnd})`}`);
    const smallReached = inBatches();
    const smallWaiting = await waitingTurns();
    const small = await measure(`${smallWaiting} turns waiting, ${smallReached} of their requests in Message Batches`);
    let stuck = smallEnd === 'collector stuck';

    // The large size: the rest in one batch, and further batches if that one stops starting turns.
    let reached = smallReached;
    let rssLarge: number | undefined;
    let largeWaiting = 0;
    if (WAITING > WAITING_SMALL && !stuck) {
      const t1 = Date.now();
      const deadline = t1 + WAITING_TIMEBOX_MIN * 60_000;
      const rest = items('wait', WAITING - WAITING_SMALL, WAITING_SMALL + 1);
      const big = await startWaiting(`mb-wait-${tag}-b`, rest);
      console.log(`  started batch ${big.name}: ${rest.length} queries (${batchShardWorkflowIds(big.name, big.concurrency, big.total).length} shards), ${WAITING} turns in all`);
      let end = await wait(WAITING, `${WAITING} turns`, deadline, big);
      if (end === 'batch stopped starting turns') {
        // The rest goes into further batches (a workaround in the bench, not in src/), each no larger than what one batch started.
        const progress = (await shardProgressByShard(ctx, big)) as Array<BatchProgress | undefined>;
        const startedInBig = progress.reduce((n, p) => n + (p?.nextIndex ?? 0), 0);
        const cap = Math.max(1, startedInBig);
        // startBatch's split: shard i holds items [i·size, (i+1)·size).
        const size = Math.ceil(rest.length / progress.length);
        const notStarted = progress.flatMap((p, i) => rest.slice(i * size, (i + 1) * size).slice(p?.nextIndex ?? size));
        console.log(`  the other ${notStarted.length} queries go into further batches of at most ${cap} each, so that ${WAITING} turns wait at once`);
        for (let k = 0; k * cap < notStarted.length; k++) await startWaiting(`mb-wait-${tag}-more${k + 1}`, notStarted.slice(k * cap, (k + 1) * cap));
        end = await wait(WAITING, `${WAITING} turns (with further batches)`, deadline);
      }
      stuck = end === 'collector stuck';
      reached = inBatches();
      console.log(`  ${reached} requests in ${ourBatches().length} Message Batches ${s(Date.now() - t1)} after the large batch's first start${end === 'all' ? '' : ` (${end}: not all ${WAITING})`}`);
      largeWaiting = await waitingTurns();
      rssLarge = await measure(`${largeWaiting} turns waiting, ${reached} of their requests in Message Batches`);
    }

    const further = largeWaiting - smallWaiting;
    console.log(
      `\n  worker RSS: idle ${idle.toFixed(0)} MB; ${smallWaiting} turns waiting ${small.toFixed(0)} MB (+${(small - idle).toFixed(0)} MB)` +
        (rssLarge !== undefined
          ? `; ${largeWaiting} waiting ${rssLarge.toFixed(0)} MB (+${(rssLarge - idle).toFixed(0)} MB over idle, ${(rssLarge - small).toFixed(0)} MB over ${smallWaiting} waiting` +
            (further >= 100 ? ` = ${(((rssLarge - small) * 1024) / further).toFixed(1)} KB per further waiting turn)` : ')')
          : ''),
    );
    const status = await collectorStatus(ctx, taskQueue);
    if (status) {
      console.log(
        `  collector query: pending ${status.pending.requests}, ${status.batches.length} Message Batches waited for (${status.batches.reduce((n, b) => n + b.requests, 0)} requests); ` +
          `totals ${JSON.stringify(status.totals)}`,
      );
    } else console.log('  collector query: no answer');
    console.log(`  ${await collectorHistory(ctx, taskQueue)}`);

    // Cancel every batch: each turn withdraws its request; a Message Batch whose requests are all withdrawn is cancelled.
    const ours = ourBatches();
    const tc = Date.now();
    for (const b of started) {
      for (const id of batchShardWorkflowIds(b.name, b.concurrency, b.total)) {
        await ctx.client.workflow.getHandle(id).cancel().catch((err: unknown) => console.log(`    cancel ${id}: ${(err as Error).message}`));
      }
    }
    console.log(`\n  cancelled ${started.length} batch(es) (${started.map((b) => b.name).join(', ')}); waiting for the stub to see their ${ours.length} Message Batches cancelled`);
    let lastPrint = Date.now();
    let cancelDeadline = tc + (stuck ? 2 : CANCEL_TIMEOUT_MIN) * 60_000;
    let allCanceledAt: number | undefined;
    while (Date.now() < cancelDeadline) {
      if (ours.every((b) => b.canceled)) {
        allCanceledAt = Date.now();
        break;
      }
      if (Date.now() - lastPrint >= 15_000) {
        lastPrint = Date.now();
        const [st, health] = await Promise.all([collectorStatus(ctx, taskQueue), collectorHealth(ctx, taskQueue)]);
        const withdrawn = st?.batches.reduce((n, b) => n + b.withdrawn, 0);
        console.log(
          `    [${s(Date.now() - tc)}] ${ours.filter((b) => b.canceled).length} of ${ours.length} Message Batches cancelled; requests withdrawn at the collector ${withdrawn ?? '? (no answer)'}; ${health.line} (${load()})`,
        );
        if (health.stuck && !stuck) {
          stuck = true;
          console.log(`    COLLECTOR STUCK: ${health.line}; waiting 2 min more at most`);
          cancelDeadline = Math.min(cancelDeadline, Date.now() + 2 * 60_000);
        }
      }
      await sleep(1000);
    }
    const canceled = ours.filter((b) => b.canceled).length;
    console.log(
      `  stub: ${canceled} of ${ours.length} Message Batches cancelled` +
        (allCanceledAt ? ` ${s(allCanceledAt - tc)} after the cancel calls` : ` ${s(Date.now() - tc)} after the cancel calls (not all)`) +
        `; ${ours.filter((b) => b.status === 'ended').length} ended (${load()})`,
    );
    check(ours.length > 0 && canceled === ours.length, `cancelling the batches cancelled all their Message Batches (${canceled} of ${ours.length})`);
    // The collector reads each cancelled batch's results at its next poll (up to pollMaxMs later).
    let after = await collectorStatus(ctx, taskQueue);
    const settleDeadline = Date.now() + (stuck ? 0 : 2 * WAITING_POLL_MAX_MS + 60_000);
    while (after && after.batches.length > 0 && Date.now() < settleDeadline) {
      await sleep(5000);
      after = (await collectorStatus(ctx, taskQueue)) ?? after;
    }
    if (after) console.log(`  collector ${s(Date.now() - tc)} after the cancel calls: pending ${after.pending.requests}, ${after.batches.length} Message Batches waited for; totals ${JSON.stringify(after.totals)}`);
    console.log(`  ${await collectorHistory(ctx, taskQueue)}`);
    console.log(`  worker RSS after the cancel: ${rssMb(worker.pid).toFixed(0)} MB; ${stderrSummary(worker)}`);
  } finally {
    await worker.stop();
  }
}

async function main(): Promise<void> {
  // The Temporal CLI as installed for the project, found before MCP_TURNS_HOME points elsewhere.
  const cliPath = testTemporalCli().path;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-mb-bench-'));
  // Stored payloads (collector inputs, batch requests) go to this run's own directory; the workers inherit it.
  process.env.MCP_TURNS_HOME = home;
  console.log(`bench:message-batches on ${os.availableParallelism()} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; parts ${[...PARTS].join(',')}; ${load()}`);
  const server = await startDevServer({ port: await freePort(), uiPort: await freePort(), cliPath });
  const stub = await startStubModel({ scenarios: { 'two-rounds': twoRounds }, defaultScenario: 'two-rounds', messageBatches: { processingMs: PROCESSING_MS } });
  const client = new Client({ connection: await Connection.connect({ address: server.address }), ...clientStorageOptions(testDataConverter()) });
  const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-mb-bench-logs-'));
  const ctx: Ctx = { home, logs, server, stub, client };
  const t0 = Date.now();
  try {
    if (PARTS.has('1')) await partOneAndTwo(ctx);
    if (PARTS.has('3')) await partThree(ctx);
  } catch (err) {
    failures.push(`the bench stopped: ${(err as Error).stack ?? String(err)}`);
    console.log(`  FAILED: ${(err as Error).stack ?? String(err)}`);
  } finally {
    await client.connection.close();
    await stub.close();
    await server.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
  console.log(`\n${failures.length ? `${failures.length} assertion(s) failed:\n  ${failures.join('\n  ')}` : 'all assertions held'}; ${s(Date.now() - t0)} in all (${load()})`);
  process.exit(failures.length ? 1 : 0);
}

void main();
