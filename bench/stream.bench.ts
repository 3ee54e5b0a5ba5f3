/**
 * What streaming a turn costs and buys. One dev server of its own (its /metrics on a free port), the
 * stub model in this process, and one worker: this file forked as a child process running the same
 * in-process worker `mcp-turns run` starts (src/cli/in-process-worker.ts: config file, Claude
 * settings, worker tuning), with server-everything for MCP; the child reports its memory over IPC
 * (it also loads this module's imports, a few MB the real worker does not).
 * Subscribers (`subscribeTurn`) run in this process, on one client.
 *
 *  1. First token vs whole answer: streamed turns of one tool round, a 40-word reply at 100 ms a
 *     word and the formatter's answer paced too; the time from a Claude call's start (the stub's
 *     `startedAt`) to its first `text-delta` at a subscriber, and from the turn's start to its first
 *     `text-delta`, against the time to the result. Medians.
 *  2. Cost per turn of the same turn with no stream delays and 0 ms latency: streaming off, on with
 *     no subscriber (the heartbeats alone), with 1, with 20; then at a realistic pace (30 words at
 *     20 ms; "off" answers unstreamed after the same time). History events and bytes per turn as the
 *     server keeps them, the dev server's CPU per turn (utime + stime from /proc), the worker's and
 *     this process's, and the server's request counts from its /metrics (flushed about once a second:
 *     read after a pause), i.e. heartbeats per Claude call, describes and history reads per
 *     subscriber. Modes run in interleaved rounds. Target: streamed with 1 subscriber ≤ 1.3× the
 *     server CPU of unstreamed.
 *  3. 50 streamed turns at once, one subscriber each: the worker's RSS and heap before and at peak,
 *     the server's CPU for the run and per turn.
 *
 *   npm run bench:stream   (BENCH_STREAM_LATENCY_TURNS=5, BENCH_STREAM_TURNS=20, BENCH_STREAM_PACED_TURNS=8,
 *                           BENCH_STREAM_CONCURRENT=50, BENCH_STREAM_ROUNDS=2)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { metricsText } from './dev-server-metrics';
import { writeEverythingConfig } from './everything-config';
import { fork, type ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { startStubModel, type RecordedRequest, type Scenario, type StubModel } from '../src/stub';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { startChatTurn } from '../src/client/chat-turn-client';
import { subscribeTurn } from '../src/client/subscribe';
import { stepTextId, ANSWER_TEXT_ID } from '../src/core/stream-events';
import { inProcessWorkerSetup, startInProcessWorker } from '../src/cli/in-process-worker';
import { temporalTarget } from '../src/temporal/connection';
import { dataConverterOf } from '../src/data-converter/data-converter';
import { rawHistoryEvents } from '../test/support/history-payloads';
import { cpuSeconds, loadAverages } from './machine-figures';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testDataConverter, testSettings } from '../test/support/settings';

const LATENCY_TURNS = Number(process.env.BENCH_STREAM_LATENCY_TURNS ?? 5);
const COST_TURNS = Number(process.env.BENCH_STREAM_TURNS ?? 20);
const PACED_TURNS = Number(process.env.BENCH_STREAM_PACED_TURNS ?? 8);
const CONCURRENT = Number(process.env.BENCH_STREAM_CONCURRENT ?? 50);
const ROUNDS = Number(process.env.BENCH_STREAM_ROUNDS ?? 2);
const MANY_SUBSCRIBERS = 20;
const TASK_QUEUE = 'bench-stream';
const WORKER_CHILD = '--stream-bench-worker';
/** Claude calls the worker runs at once (the default, 10, would queue most of the 50 turns' calls). */
const MAX_CONCURRENT_CALLS = 100;

// ---------------------------------------------------------------------------------------------
// Scenarios: one tool round (a short text and an echo), a reply, the formatter's answer.

const words = (n: number, tag: string): string =>
  Array.from({ length: n }, (_, i) => `${tag}${i + 1}`).join(' ');
const STEP1_TEXT = 'Let me echo that first.';
const ECHO_INPUT = { message: 'hello from the stream bench' };
const formatterInput = (n: number): Record<string, unknown> => ({
  conversation: [{ type: 'text', content: words(n, 'answer') }],
});

function turnScenario(opts: {
  replyWords: number;
  answerWords: number;
  pace: number;
  formatterPace: number;
}): Scenario {
  return {
    streamDelayMs: opts.pace,
    formatterStreamDelayMs: opts.formatterPace,
    steps: [
      {
        content: [
          { type: 'text', text: STEP1_TEXT },
          { type: 'tool_use', name: 'everything__echo', input: ECHO_INPUT },
        ],
      },
      { content: [{ type: 'text', text: words(opts.replyWords, 'word') }] },
    ],
    formatter: formatterInput(opts.answerWords),
  };
}

/** The time the stub takes to stream content at `pace` (a pause between two deltas; see src/stub/sse.ts). */
function streamMs(blocks: Array<{ text?: string; json?: unknown }>, pace: number): number {
  let deltas = 0;
  for (const b of blocks) {
    if (b.text !== undefined) deltas += b.text.match(/^\s+|\S+\s*/g)?.length ?? 0;
    if (b.json !== undefined) deltas += Math.ceil(JSON.stringify(b.json).length / 12);
  }
  return Math.max(0, deltas - 1) * pace;
}

/** The paced scenario unstreamed: each call answers after the time its stream would take. */
function unstreamedTwin(replyWords: number, answerWords: number, pace: number): Scenario {
  return {
    latencyMs: streamMs([{ json: formatterInput(answerWords) }], pace), // the formatter's
    steps: [
      {
        content: [
          { type: 'text', text: STEP1_TEXT },
          { type: 'tool_use', name: 'everything__echo', input: ECHO_INPUT },
        ],
        latencyMs: streamMs([{ text: STEP1_TEXT }, { json: ECHO_INPUT }], pace),
      },
      {
        content: [{ type: 'text', text: words(replyWords, 'word') }],
        latencyMs: streamMs([{ text: words(replyWords, 'word') }], pace),
      },
    ],
    formatter: formatterInput(answerWords),
  };
}

const PACED = { replyWords: 30, answerWords: 30, pace: 20 };
const SCENARIOS: Record<string, Scenario> = {
  latency: turnScenario({ replyWords: 40, answerWords: 40, pace: 100, formatterPace: 50 }),
  fast: turnScenario({ replyWords: 40, answerWords: 40, pace: 0, formatterPace: 0 }),
  paced: turnScenario({ ...PACED, formatterPace: PACED.pace }),
  'paced-off': unstreamedTwin(PACED.replyWords, PACED.answerWords, PACED.pace),
};

// ---------------------------------------------------------------------------------------------
// Small helpers: medians, /proc, the server's metrics.

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : '-');
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const sleep = (t: number): Promise<void> => new Promise((r) => setTimeout(r, t));

/**
 * The server's request counters: `service_requests` (frontend, history, matching) and
 * `persistence_requests`, summed by service and operation, e.g. "frontend RecordActivityTaskHeartbeat".
 */
async function serverCounters(metricsPort: number): Promise<Map<string, number>> {
  const text = await metricsText(metricsPort);
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(service_requests|persistence_requests)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const label = (name: string): string | undefined => new RegExp(`${name}="([^"]*)"`).exec(m[2]!)?.[1];
    const service = m[1] === 'persistence_requests' ? 'db' : (label('service_name') ?? '?');
    const key = `${service} ${label('operation') ?? '?'}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(m[3]));
  }
  return counts;
}

/** The server's metrics are flushed about once a second: counters read after that long include every request made before. */
const METRICS_FLUSH_MS = 1200;

function counterDelta(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The worker child: the in-process worker of `mcp-turns run`, reporting its memory.

interface MemSample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}
type ParentMessage = { type: 'mem'; reset: boolean } | { type: 'stop' };
type ChildMessage = { type: 'ready' } | { type: 'mem'; now: MemSample; peak: MemSample };

function memNow(): MemSample {
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
  return { rss, heapUsed, heapTotal, external };
}

async function workerChild(address: string): Promise<void> {
  // This process's environment: MCP_TURNS_CONFIG names the worker's config file.
  const settings = testSettings();
  const setup = inProcessWorkerSetup(settings);
  const target = temporalTarget(settings.temporal.get(), { address, namespace: 'default' });
  const worker = await startInProcessWorker(setup, target, TASK_QUEUE, settings, dataConverterOf(settings));
  let peak = memNow();
  const sampler = setInterval(() => {
    const m = memNow();
    peak = {
      rss: Math.max(peak.rss, m.rss),
      heapUsed: Math.max(peak.heapUsed, m.heapUsed),
      heapTotal: Math.max(peak.heapTotal, m.heapTotal),
      external: Math.max(peak.external, m.external),
    };
  }, 25);
  const send = (m: ChildMessage): void => void process.send!(m);
  process.on('message', (msg: ParentMessage) => {
    if (msg.type === 'mem') {
      const now = memNow();
      if (msg.reset) peak = now;
      send({ type: 'mem', now, peak });
    } else {
      stopping = true;
      clearInterval(sampler);
      void worker.stop().then(() => process.exit(0));
    }
  });
  let stopping = false;
  void worker.failed.catch((err: unknown) => {
    if (stopping) return;
    console.error(err);
    process.exit(1);
  });
  process.once('disconnect', () => process.exit(1)); // the bench is gone: so is its worker
  send({ type: 'ready' });
}

function askWorkerMemory(child: ChildProcess, reset: boolean): Promise<{ now: MemSample; peak: MemSample }> {
  return new Promise((resolve) => {
    const onMessage = (m: ChildMessage): void => {
      if (m.type !== 'mem') return;
      child.off('message', onMessage);
      resolve(m);
    };
    child.on('message', onMessage);
    child.send({ type: 'mem', reset } satisfies ParentMessage);
  });
}

// ---------------------------------------------------------------------------------------------
// Turns and their subscribers.

interface Mode {
  label: string;
  model: string;
  stream: boolean;
  subscribers: number;
}

interface Timings {
  /** Per text id: the first and last `text-delta` at the first subscriber (Date.now()). */
  first: Map<string, number>;
  last: Map<string, number>;
  /** Text ids of the steps, in order. */
  steps: string[];
  firstAny?: number;
}

interface TurnRun {
  workflowId: string;
  question: string;
  startedAt: number;
  resultAt: number;
  timings: Timings;
  /** Subscribers whose stream ended with a completed `finish`. */
  finished: number;
}

/** The question of a recorded Claude request (its first user message). */
function questionOfRequest(r: RecordedRequest): string | undefined {
  const first = (
    r.body?.messages as Array<{ content: string | Array<{ type: string; text?: string }> }> | undefined
  )?.[0];
  if (!first) return undefined;
  return typeof first.content === 'string'
    ? first.content
    : first.content.find((b) => b.type === 'text')?.text;
}

class Bench {
  constructor(
    readonly client: Client,
    readonly stub: StubModel,
  ) {}

  async runTurn(mode: Mode, question: string): Promise<TurnRun> {
    const startedAt = Date.now();
    const handle = await startChatTurn(
      this.client,
      { question, model: mode.model, format: true, maxSteps: 10, ...(mode.stream ? { stream: true } : {}) },
      { taskQueue: TASK_QUEUE },
    );
    const timings: Timings = { first: new Map(), last: new Map(), steps: [] };
    const subscribers = Array.from({ length: mode.subscribers }, async (_, i) => {
      let completed = false;
      for await (const e of subscribeTurn(this.client, handle.workflowId)) {
        if (e.type === 'finish') completed = e.status === 'completed';
        if (i > 0) continue;
        const now = Date.now();
        if (e.type === 'start-step') timings.steps.push(stepTextId(e.step));
        if (e.type === 'text-delta') {
          timings.firstAny ??= now;
          if (!timings.first.has(e.id)) timings.first.set(e.id, now);
          timings.last.set(e.id, now);
        }
      }
      return completed;
    });
    // Both awaited at once: a subscriber that fails fails the turn (and the bench, cleaning up) at once.
    let resultAt = 0;
    const [, seen] = await Promise.all([
      handle.result().then(() => (resultAt = Date.now())),
      Promise.all(subscribers),
    ]);
    const finished = seen.filter(Boolean).length;
    return { workflowId: handle.workflowId, question, startedAt, resultAt, timings, finished };
  }

  /** The Claude requests of a turn: its step calls in order, its formatter call. */
  requestsOf(run: TurnRun): { steps: RecordedRequest[]; formatter?: RecordedRequest } {
    const mine = this.stub.requests.filter(
      (r) => r.kind !== 'count_tokens' && questionOfRequest(r) === run.question,
    );
    const formatter = mine.find((r) => r.kind === 'formatter');
    return {
      steps: mine.filter((r) => r.kind === 'step').sort((a, b) => a.step - b.step),
      ...(formatter ? { formatter } : {}),
    };
  }
}

/** First token, last token at the subscriber and the model's whole answer, from the call's start. */
interface CallTimes {
  first: number;
  last: number;
  whole: number;
}

function callTimes(
  run: TurnRun,
  id: string | undefined,
  request: RecordedRequest | undefined,
): CallTimes | undefined {
  if (!id || !request) return undefined;
  const first = run.timings.first.get(id);
  const last = run.timings.last.get(id);
  if (first === undefined || last === undefined) return undefined;
  return {
    first: first - request.startedAt,
    last: last - request.startedAt,
    whole: request.endedAt - request.startedAt,
  };
}

// ---------------------------------------------------------------------------------------------

interface Cost {
  mode: Mode;
  turns: number;
  wallMs: number;
  serverCpu: number;
  workerCpu: number;
  benchCpu: number;
  claudeCalls: number;
  counters: Map<string, number>;
  runs: TurnRun[];
}

async function main(): Promise<void> {
  const began = performance.now();
  const loadAtStart = loadAverages();
  const metricsPort = await freePort();
  const server = await startDevServer({
    cliPath: testTemporalCli().path,
    port: await freePort(),
    uiPort: await freePort(),
    extraArgs: ['--metrics-port', String(metricsPort)],
  });
  const stub = await startStubModel({ scenarios: SCENARIOS });
  const config = writeEverythingConfig('mcp-turns-stream-bench-', { claude: { maxConcurrentCalls: MAX_CONCURRENT_CALLS } });
  const child = fork(__filename, [WORKER_CHILD, server.address], {
    env: {
      ...process.env,
      MCP_TURNS_CONFIG: config,
      ANTHROPIC_API_KEY: 'bench',
      ANTHROPIC_BASE_URL: stub.url,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const client = new Client({
    connection: await Connection.connect({ address: server.address }),
    ...clientStorageOptions(testDataConverter()),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.on('message', (m: ChildMessage) => m.type === 'ready' && resolve());
      child.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it was ready`)));
    });
    const bench = new Bench(client, stub);
    const serverPid = server.pid!;
    const workerPid = child.pid!;
    const cores = os.availableParallelism();
    const progress = (line: string): void => void process.stderr.write(`${line}\n`);

    // Warm up: workflow cache, MCP connection, both paths.
    for (const [i, mode] of [
      { label: 'warm', model: 'fast', stream: false, subscribers: 0 },
      { label: 'warm', model: 'fast', stream: true, subscribers: 1 },
      { label: 'warm', model: 'paced', stream: true, subscribers: 1 },
    ].entries())
      await bench.runTurn(mode, `warm-up ${i}`);

    // The server idle (the worker polling): its CPU rate, for the turns' wall time.
    await sleep(500);
    const idle0 = { cpu: cpuSeconds(serverPid), at: performance.now() };
    await sleep(4000);
    const idleCpuPerSecond = (cpuSeconds(serverPid) - idle0.cpu) / ((performance.now() - idle0.at) / 1000);

    // 1. First token vs whole answer.
    progress(`1. ${LATENCY_TURNS} paced streamed turns…`);
    const latencyRuns: TurnRun[] = [];
    for (let i = 0; i < LATENCY_TURNS; i++)
      latencyRuns.push(
        await bench.runTurn(
          { label: 'latency', model: 'latency', stream: true, subscribers: 1 },
          `latency ${i}`,
        ),
      );
    const latencyLoad = loadAverages();
    const reply: CallTimes[] = [];
    const answer: CallTimes[] = [];
    for (const run of latencyRuns) {
      const { steps, formatter } = bench.requestsOf(run);
      const r = callTimes(run, run.timings.steps[1], steps[1]);
      const a = callTimes(run, ANSWER_TEXT_ID, formatter);
      if (r) reply.push(r);
      if (a) answer.push(a);
    }
    const turnFirst = latencyRuns.map((r) => (r.timings.firstAny ?? NaN) - r.startedAt);
    const turnResult = latencyRuns.map((r) => r.resultAt - r.startedAt);

    // 2. Cost per turn, modes interleaved in rounds.
    const measure = async (modes: Mode[], turns: number): Promise<Cost[]> => {
      const costs: Cost[] = modes.map((mode) => ({
        mode,
        turns: 0,
        wallMs: 0,
        serverCpu: 0,
        workerCpu: 0,
        benchCpu: 0,
        claudeCalls: 0,
        counters: new Map(),
        runs: [],
      }));
      const perRound = Math.max(1, Math.round(turns / ROUNDS));
      await sleep(METRICS_FLUSH_MS);
      let counters0 = await serverCounters(metricsPort);
      for (let round = 0; round < ROUNDS; round++) {
        for (const cost of costs) {
          progress(`2. ${cost.mode.label}: round ${round + 1} of ${ROUNDS}, ${perRound} turns…`);
          const requests0 = stub.requests.length;
          const server0 = cpuSeconds(serverPid);
          const worker0 = cpuSeconds(workerPid);
          const bench0 = process.cpuUsage();
          const t0 = performance.now();
          for (let i = 0; i < perRound; i++)
            cost.runs.push(await bench.runTurn(cost.mode, `${cost.mode.label} ${round}.${i} ${Date.now()}`));
          cost.wallMs += performance.now() - t0;
          const benchCpu = process.cpuUsage(bench0);
          cost.benchCpu += (benchCpu.user + benchCpu.system) / 1e6;
          cost.serverCpu += cpuSeconds(serverPid) - server0;
          cost.workerCpu += cpuSeconds(workerPid) - worker0;
          await sleep(METRICS_FLUSH_MS);
          const counters1 = await serverCounters(metricsPort);
          for (const [k, v] of counterDelta(counters1, counters0))
            cost.counters.set(k, (cost.counters.get(k) ?? 0) + v);
          counters0 = counters1;
          cost.claudeCalls += stub.requests.slice(requests0).filter((r) => r.kind !== 'count_tokens').length;
          cost.turns += perRound;
        }
      }
      return costs;
    };
    const modesOf = (model: string, offModel: string): Mode[] => [
      { label: `${model} off`, model: offModel, stream: false, subscribers: 0 },
      { label: `${model} on, 0 subs`, model, stream: true, subscribers: 0 },
      { label: `${model} on, 1 sub`, model, stream: true, subscribers: 1 },
      { label: `${model} on, ${MANY_SUBSCRIBERS} subs`, model, stream: true, subscribers: MANY_SUBSCRIBERS },
    ];
    const fastCosts = await measure(modesOf('fast', 'fast'), COST_TURNS);
    const fastLoad = loadAverages();
    const pacedCosts = await measure(modesOf('paced', 'paced-off'), PACED_TURNS);
    const pacedLoad = loadAverages();

    const histories = new Map<Cost, { events: number; bytes: number }>();
    for (const cost of [...fastCosts, ...pacedCosts]) {
      let events = 0;
      let bytes = 0;
      for (const run of cost.runs) {
        const history = await rawHistoryEvents(client, run.workflowId);
        events += history.length;
        bytes += temporal.api.history.v1.History.encode({ events: history }).finish().length;
      }
      histories.set(cost, { events: events / cost.runs.length, bytes: bytes / cost.runs.length });
    }

    // 3. CONCURRENT streamed turns at once, one subscriber each.
    progress(`3. ${CONCURRENT} streamed turns at once…`);
    await sleep(METRICS_FLUSH_MS);
    const counters0 = await serverCounters(metricsPort);
    const memBefore = await askWorkerMemory(child, true);
    stub.maxConcurrent = 0;
    const server0 = cpuSeconds(serverPid);
    const worker0 = cpuSeconds(workerPid);
    const bench0 = process.cpuUsage();
    const t0 = performance.now();
    const burst = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        bench.runTurn(
          { label: 'burst', model: 'paced', stream: true, subscribers: 1 },
          `burst ${i} ${Date.now()}`,
        ),
      ),
    );
    const burstWallMs = performance.now() - t0;
    const burstBench = process.cpuUsage(bench0);
    const burstServerCpu = cpuSeconds(serverPid) - server0;
    const burstWorkerCpu = cpuSeconds(workerPid) - worker0;
    await sleep(METRICS_FLUSH_MS);
    const burstCounters = counterDelta(await serverCounters(metricsPort), counters0);
    const memDuring = await askWorkerMemory(child, false);
    const burstLoad = loadAverages();
    const burstReplyFirst: number[] = [];
    const burstTurnFirst: number[] = [];
    for (const run of burst) {
      const { steps } = bench.requestsOf(run);
      const r = callTimes(run, run.timings.steps[1], steps[1]);
      if (r) burstReplyFirst.push(r.first);
      if (run.timings.firstAny) burstTurnFirst.push(run.timings.firstAny - run.startedAt);
    }
    const burstResult = burst.map((r) => r.resultAt - r.startedAt);

    // ---------------------------------------------------------------------------------------------
    // The report.
    const out = (line = ''): void => console.log(line);
    const count = (c: Map<string, number>, key: string): number => c.get(key) ?? 0;
    const HB = 'frontend RecordActivityTaskHeartbeat';
    const DESCRIBE = 'frontend DescribeWorkflowExecution';
    /** History reads: plain and long polls (`waitNewEvent`, which the frontend counts as PollWorkflowExecutionHistory). */
    const historyReads = (c: Map<string, number>): number =>
      count(c, 'frontend GetWorkflowExecutionHistory') + count(c, 'frontend PollWorkflowExecutionHistory');
    const DB_UPDATE = 'db UpdateWorkflowExecution';

    out(
      `\nStreaming bench: ${cores} cores (${os.cpus()[0]?.model ?? '?'}); load 1/5/15 at start ${loadAtStart}`,
    );
    out(
      `  dev server pid ${serverPid} (idle with the worker polling: ${(idleCpuPerSecond * 1000).toFixed(0)} ms CPU/s); ` +
        `worker: a child process (pid ${workerPid}) running the in-process worker of \`mcp-turns run\`, maxConcurrentCalls ${MAX_CONCURRENT_CALLS}; ` +
        'stub model, client and subscribers in the bench process',
    );

    out(
      `\n1. First token vs whole answer: ${latencyRuns.length} streamed turns one at a time, 1 subscriber; load ${latencyLoad}`,
    );
    out(
      '   step 1: 5 words + an echo call; step 2: a 40-word reply at 100 ms a word; formatter answer (40 words) at 50 ms per JSON chunk; model latency 0 ms',
    );
    out(
      "   call                | first token at subscriber | last token at subscriber | model wrote the whole reply | (from the call's start, median)",
    );
    const row = (name: string, xs: CallTimes[]): void =>
      out(
        `   ${name.padEnd(19)} | ${ms(median(xs.map((x) => x.first))).padStart(25)} | ${ms(median(xs.map((x) => x.last))).padStart(24)} | ` +
          `${ms(median(xs.map((x) => x.whole))).padStart(27)} |`,
      );
    row('step 2 (reply)', reply);
    row('formatter (answer)', answer);
    out(
      `   turn: first text-delta ${ms(median(turnFirst))} after the start, result ${ms(median(turnResult))} after it ` +
        `(first token at ${((median(turnFirst) / median(turnResult)) * 100).toFixed(1)}% of the wait); ` +
        `reply's first token ${ms(median(reply.map((x) => x.first)))} vs ${ms(median(reply.map((x) => x.whole)))} for the whole reply ` +
        `(${(median(reply.map((x) => x.whole)) / median(reply.map((x) => x.first))).toFixed(0)}× sooner)`,
    );

    const costTable = (title: string, costs: Cost[], loadNow: string): void => {
      const off = costs[0]!;
      const offCpu = off.serverCpu / off.turns;
      const offNet = offCpu - (idleCpuPerSecond * off.wallMs) / 1000 / off.turns;
      out(`\n${title}; load ${loadNow}`);
      out(
        '   mode                 | wall/turn | server CPU/turn (net of idle) | ×off (net) | worker CPU/turn | bench CPU/turn | ' +
          'history events | history bytes | heartbeats/Claude call | describes/sub | history reads/sub | db updates/turn | subs finished',
      );
      for (const c of costs) {
        const cpu = c.serverCpu / c.turns;
        const net = cpu - (idleCpuPerSecond * c.wallMs) / 1000 / c.turns;
        const h = histories.get(c)!;
        const subs = c.turns * c.mode.subscribers;
        const finished = c.runs.reduce((n, r) => n + r.finished, 0);
        out(
          `   ${c.mode.label.padEnd(20)} | ${ms(c.wallMs / c.turns).padStart(9)} | ${`${ms(cpu * 1000)} (${ms(net * 1000)})`.padStart(29)} | ` +
            `${`${(cpu / offCpu).toFixed(2)} (${(net / offNet).toFixed(2)})`.padStart(10)} | ${ms((c.workerCpu / c.turns) * 1000).padStart(15)} | ` +
            `${ms((c.benchCpu / c.turns) * 1000).padStart(14)} | ${h.events.toFixed(0).padStart(14)} | ${`${(h.bytes / 1024).toFixed(1)} KiB`.padStart(13)} | ` +
            `${(count(c.counters, HB) / c.claudeCalls).toFixed(2).padStart(22)} | ` +
            `${subs ? (count(c.counters, DESCRIBE) / subs).toFixed(1).padStart(12) : '-'.padStart(12)} | ` +
            `${subs ? (((historyReads(c.counters) / c.turns - historyReads(off.counters) / off.turns) * c.turns) / subs).toFixed(1).padStart(17) : '-'.padStart(17)} | ` +
            `${(count(c.counters, DB_UPDATE) / c.turns).toFixed(1).padStart(15)} | ${subs ? `${finished}/${subs}` : '-'}`,
        );
      }
      const on1 = costs[2]!;
      const ratio = on1.serverCpu / on1.turns / offCpu;
      out(
        `   streamed with 1 subscriber: ${ratio.toFixed(2)}× the server CPU of unstreamed (target ≤ 1.3×: ${ratio <= 1.3 ? 'met' : 'NOT met'}); ` +
          `with ${MANY_SUBSCRIBERS}: ${(costs[3]!.serverCpu / costs[3]!.turns / offCpu).toFixed(2)}×; ` +
          `streamed with no subscriber (heartbeats alone): ${(costs[1]!.serverCpu / costs[1]!.turns / offCpu).toFixed(2)}×`,
      );
      if (process.env.BENCH_STREAM_DUMP)
        for (const c of costs)
          out(
            `   [${c.mode.label}] ${[...c.counters]
              .sort()
              .map(([k, v]) => `${k} ${(v / c.turns).toFixed(1)}`)
              .join(', ')}`,
          );
      // Where the server's added requests go: the operations that grew most per turn against "off".
      for (const c of costs.slice(1)) {
        const grown = [...new Set([...c.counters.keys(), ...off.counters.keys()])]
          .map((k) => [k, count(c.counters, k) / c.turns - count(off.counters, k) / off.turns] as const)
          .filter(([, d]) => Math.abs(d) >= 0.5)
          .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
          .slice(0, 8);
        out(
          `   ${c.mode.label}: server requests per turn against off: ` +
            (grown.length
              ? grown.map(([k, d]) => `${k} ${d > 0 ? '+' : ''}${d.toFixed(1)}`).join(', ')
              : 'no change'),
        );
      }
    };
    costTable(
      `2a. Cost per turn, no stream delays, 0 ms latency (step 1: 5 words + echo; step 2: 40 words; formatter: 40 words): ` +
        `${fastCosts[0]!.turns} turns per mode, one at a time, ${ROUNDS} interleaved rounds`,
      fastCosts,
      fastLoad,
    );
    costTable(
      `2b. Cost per turn at a realistic pace (${PACED.replyWords} words at ${PACED.pace} ms, answer at ${PACED.pace} ms per chunk; ` +
        `"off" answers unstreamed after the same time): ${pacedCosts[0]!.turns} turns per mode, ${ROUNDS} interleaved rounds`,
      pacedCosts,
      pacedLoad,
    );
    out(
      '   (server requests from its /metrics: heartbeats = RecordActivityTaskHeartbeat over all activities / Claude calls; ' +
        'history reads/sub = history reads and long polls per subscriber beyond those of "off" (the result() wait); ' +
        'db updates = UpdateWorkflowExecution writes; bench CPU = client, subscribers and stub)',
    );

    out(`\n3. ${CONCURRENT} streamed turns at once (paced scenario), 1 subscriber each; load ${burstLoad}`);
    out(
      `   all answered in ${(burstWallMs / 1000).toFixed(1)} s (turn: p50 ${ms(median(burstResult))}, p95 ${ms(pct(burstResult, 95))}); ` +
        `subscribers finished ${burst.reduce((n, r) => n + r.finished, 0)}/${CONCURRENT}`,
    );
    out(
      `   first text-delta after the turn's start: p50 ${ms(median(burstTurnFirst))}, p95 ${ms(pct(burstTurnFirst, 95))}; ` +
        `reply's first token after its call's start: p50 ${ms(median(burstReplyFirst))}, p95 ${ms(pct(burstReplyFirst, 95))}`,
    );
    out(
      `   worker (child process) RSS ${mb(memBefore.now.rss)} before → peak ${mb(memDuring.peak.rss)}; main-thread heap used ` +
        `${mb(memBefore.now.heapUsed)} → peak ${mb(memDuring.peak.heapUsed)} (heap total peak ${mb(memDuring.peak.heapTotal)}; ` +
        `workflow threads' heaps are in RSS only); sampled every 25 ms`,
    );
    out(
      `   dev server CPU ${burstServerCpu.toFixed(2)} s for the run = ${ms((burstServerCpu / CONCURRENT) * 1000)} per turn ` +
        `(${((burstServerCpu / (burstWallMs / 1000)) * 100).toFixed(0)}% of a core); worker CPU ${burstWorkerCpu.toFixed(2)} s ` +
        `(${ms((burstWorkerCpu / CONCURRENT) * 1000)} per turn); bench process ${((burstBench.user + burstBench.system) / 1e6).toFixed(2)} s`,
    );
    out(
      `   server requests per turn: heartbeats ${(count(burstCounters, HB) / CONCURRENT).toFixed(1)}, describes ${(count(burstCounters, DESCRIBE) / CONCURRENT).toFixed(1)}, ` +
        `history reads ${(historyReads(burstCounters) / CONCURRENT).toFixed(1)}, db updates ${(count(burstCounters, DB_UPDATE) / CONCURRENT).toFixed(1)}; ` +
        `stub peak concurrent requests ${stub.maxConcurrent}`,
    );
    out(`\nWhole bench ${((performance.now() - began) / 1000).toFixed(0)} s; load at the end ${loadAverages()}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.send({ type: 'stop' } satisfies ParentMessage);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await client.connection.close();
    await stub.close();
    await server.stop();
    fs.rmSync(path.dirname(config), { recursive: true, force: true });
  }
}

if (process.argv[2] === WORKER_CHILD) {
  workerChild(process.argv[3]!).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
