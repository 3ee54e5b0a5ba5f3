/**
 * One `mcp-turns serve` under 100 concurrent SSE clients: its CPU and memory, and nothing refused.
 * A dev server of its own (its /metrics on a free port), the stub model in this process, one
 * `mcp-turns worker` and one `mcp-turns serve --address …` as child processes (serve starts no
 * worker and no server of its own then), so serve's CPU (utime + stime from /proc/<pid>/stat) and
 * memory (VmRSS, VmHWM from /proc/<pid>/status) are its own. The SSE clients run in this process on
 * node:http with one keep-alive agent (up to 256 sockets).
 *
 *  1. The run: 91 turns started at once through `POST /v1/turns`, then 100 SSE clients at once on
 *     `GET /v1/turns/{id}/events`: 90 on 90 distinct turns, 10 on the 91st. Every client must get
 *     200 and a dense stream (offsets 0..n-1) ending with a completed `finish`; the 10 clients of
 *     the shared turn the same events; no request refused (429, 5xx or a dropped connection).
 *     Serve's CPU for the run, per turn and per delivered event; its RSS before, at peak (sampled
 *     every 50 ms) and after; events delivered per second; time to first event per client.
 *  2. A ratio in the same process: 10 clients on one turn against 10 clients on 10 turns (the same
 *     events delivered, one shared reader against ten), serve's CPU for the streams, in interleaved
 *     rounds.
 *
 *   npm run bench:serve   (BENCH_SERVE_SOLO=90, BENCH_SERVE_SHARED=10, BENCH_SERVE_WORDS=100,
 *                          BENCH_SERVE_PACE=25, BENCH_SERVE_ROUNDS=3; BENCH_SERVE_NODE_ARGS: node flags for serve)
 * Exits 1 when a check fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { frontendRequests, METRICS_FLUSH_MS } from './dev-server-metrics';
import { writeEverythingConfig } from './everything-config';
import { startStubModel, type Scenario } from '../src/stub';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { cpuSeconds, loadAverages } from './machine-figures';
import { testTemporalCli } from '../test/support/temporal-cli';

const SOLO = Number(process.env.BENCH_SERVE_SOLO ?? 90);
const SHARED = Number(process.env.BENCH_SERVE_SHARED ?? 10);
const WORDS = Number(process.env.BENCH_SERVE_WORDS ?? 100);
const PACE = Number(process.env.BENCH_SERVE_PACE ?? 25);
const ROUNDS = Number(process.env.BENCH_SERVE_ROUNDS ?? 3);
/** Node flags for the serve process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/serve-prof" to profile it. */
const SERVE_NODE_ARGS = (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const ANSWER_WORDS = 30;
const TASK_QUEUE = 'bench-serve';
const MODEL = 'serve-bench';
/** Claude calls the worker runs at once (the default, 10, would queue most of the 91 turns' calls). */
const MAX_CONCURRENT_CALLS = 100;
/** A stream not ended by then fails the bench. */
const STREAM_TIMEOUT_MS = 240_000;
const SAMPLE_MS = 50;
const IDLE_MS = 3000;
const SETTLE_MS = 3000;
const BIN = path.resolve(__dirname, '..', '..', 'bin', 'mcp-turns.js');

// ---------------------------------------------------------------------------------------------
// The scenario: one tool round (a short text and an echo), a reply at a realistic pace, the answer.

const words = (n: number, tag: string): string => Array.from({ length: n }, (_, i) => `${tag}${i + 1}`).join(' ');
const SCENARIO: Scenario = {
  streamDelayMs: PACE,
  formatterStreamDelayMs: PACE,
  steps: [
    {
      content: [
        { type: 'text', text: 'Let me echo that first.' },
        { type: 'tool_use', name: 'everything__echo', input: { message: 'hello from the serve bench' } },
      ],
    },
    { content: [{ type: 'text', text: words(WORDS, 'word') }] },
  ],
  formatter: { conversation: [{ type: 'text', content: words(ANSWER_WORDS, 'answer') }] },
};

// ---------------------------------------------------------------------------------------------
// Small helpers: percentiles, /proc, the dev server's metrics.

const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : '-');
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const sleep = (t: number): Promise<void> => new Promise((r) => setTimeout(r, t));
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

/** VmRSS and VmHWM (peak RSS since the process started) of a process, in bytes. */
function memOf(pid: number): { rss: number; hwm: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** The highest RSS of `pid` while it runs, sampled every {@link SAMPLE_MS}. */
function rssSampler(pid: number): { stop(): number } {
  let peak = memOf(pid).rss;
  const timer = setInterval(() => (peak = Math.max(peak, memOf(pid).rss)), SAMPLE_MS);
  return {
    stop(): number {
      clearInterval(timer);
      return Math.max(peak, memOf(pid).rss);
    },
  };
}


// ---------------------------------------------------------------------------------------------
// The HTTP clients.

const agent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });

interface Tally {
  statuses: Map<number, number>;
  connectionErrors: string[];
}
const tally: Tally = { statuses: new Map(), connectionErrors: [] };
const count = (status: number): void => void tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);

interface Posted {
  status: number;
  id?: string;
  ms: number;
}

function postTurn(base: string, question: string): Promise<Posted> {
  const body = JSON.stringify({ question, model: MODEL });
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      `${base}/v1/turns`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          count(res.statusCode ?? 0);
          let id: string | undefined;
          try {
            id = (JSON.parse(text) as { id?: string }).id;
          } catch {
            id = undefined;
          }
          if (res.statusCode !== 202) process.stderr.write(`POST /v1/turns: ${res.statusCode} ${text.slice(0, 300)}\n`);
          resolve({ status: res.statusCode ?? 0, ...(id ? { id } : {}), ms: performance.now() - t0 });
        });
      },
    );
    req.on('error', (err) => {
      tally.connectionErrors.push(`POST: ${err.message}`);
      resolve({ status: 0, ms: performance.now() - t0 });
    });
    req.end(body);
  });
}

interface Stream {
  turnId: string;
  status: number;
  /** The SSE ids, in order. */
  ids: number[];
  /** The `data:` lines of the numbered events, as received. */
  data: string[];
  types: string[];
  /** The `offset` in each event's JSON (it must equal the SSE id). */
  offsets: Array<number | undefined>;
  finishStatus?: string;
  /** Events without an id (an `error` the server writes when the stream cannot be read). */
  unnumbered: string[];
  sentAt: number;
  firstEventAt?: number;
  firstTextAt?: number;
  endedAt: number;
  ended: boolean;
  error?: string;
}

function openStream(base: string, turnId: string): Promise<Stream> {
  const s: Stream = {
    turnId,
    status: 0,
    ids: [],
    data: [],
    types: [],
    offsets: [],
    unnumbered: [],
    sentAt: performance.now(),
    endedAt: 0,
    ended: false,
  };
  return new Promise((resolve) => {
    let done = false;
    const finish = (error?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.endedAt = performance.now();
      if (error) s.error = error;
      resolve(s);
    };
    const req = http.get(
      `${base}/v1/turns/${encodeURIComponent(turnId)}/events`,
      { agent, headers: { accept: 'text/event-stream' } },
      (res) => {
        s.status = res.statusCode ?? 0;
        count(s.status);
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const id = /^id: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (data === undefined) continue; // a keep-alive comment
            if (id === undefined) {
              s.unnumbered.push(data);
              continue;
            }
            const now = performance.now();
            s.firstEventAt ??= now;
            s.ids.push(Number(id));
            s.data.push(data);
            const event = JSON.parse(data) as { type: string; offset?: number; status?: string };
            s.types.push(event.type);
            s.offsets.push(event.offset);
            if (event.type === 'text-delta') s.firstTextAt ??= now;
            if (event.type === 'finish') s.finishStatus = event.status;
          }
        });
        res.on('end', () => {
          s.ended = true;
          finish(res.statusCode === 200 ? undefined : `status ${res.statusCode}`);
        });
        res.on('error', (err) => finish(err.message));
        res.on('aborted', () => finish('aborted'));
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`not ended after ${STREAM_TIMEOUT_MS / 1000} s`));
    }, STREAM_TIMEOUT_MS);
    req.on('error', (err) => {
      tally.connectionErrors.push(`GET events: ${err.message}`);
      finish(err.message);
    });
  });
}

/** What is wrong with a stream, or undefined when it is whole: 200, dense offsets, a completed finish, nothing else. */
function problemOf(s: Stream): string | undefined {
  if (s.status !== 200) return `status ${s.status}`;
  if (s.error) return s.error;
  if (!s.ended) return 'not ended';
  if (s.unnumbered.length) return `error event: ${s.unnumbered[0]!.slice(0, 200)}`;
  if (!s.ids.length) return 'no event';
  for (let i = 0; i < s.ids.length; i++) {
    if (s.ids[i] !== i) return `id ${s.ids[i]} at position ${i} (a gap or a duplicate)`;
    if (s.offsets[i] !== i) return `offset ${s.offsets[i]} in event ${i}`;
  }
  if (s.types[s.types.length - 1] !== 'finish') return `last event is ${s.types[s.types.length - 1]}, not finish`;
  if (s.finishStatus !== 'completed') return `finish status ${s.finishStatus}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Child processes.

/** Resolves with the first match of `pattern` in the output of `stream` (keeps reading; lines go to `onLine`). */
function waitForLine(
  name: string,
  child: ChildProcess,
  stream: NodeJS.ReadableStream,
  pattern: RegExp,
  onLine: (line: string) => void,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let found = false;
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        onLine(line);
        const m = found ? null : pattern.exec(line);
        if (m) {
          found = true;
          resolve(m);
        }
      }
    });
    child.once('exit', (code) => {
      if (!found) reject(new Error(`${name} exited (${code}) before it was ready`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------

interface Phase {
  /** Serve's CPU seconds for the POSTs, and for the streams (from the first GET to the last end). */
  postCpu: number;
  streamCpu: number;
  postMs: number;
  streamMs: number;
  streams: Stream[];
  events: number;
}

async function main(): Promise<void> {
  const began = performance.now();
  const loadAtStart = loadAverages();
  const cores = os.availableParallelism();
  const metricsPort = await freePort();
  const server = await startDevServer({
    cliPath: testTemporalCli().path,
    port: await freePort(),
    uiPort: await freePort(),
    extraArgs: ['--metrics-port', String(metricsPort)],
  });
  const stub = await startStubModel({ scenarios: { [MODEL]: SCENARIO } });
  const config = writeEverythingConfig('mcp-turns-serve-bench-', { claude: { maxConcurrentCalls: MAX_CONCURRENT_CALLS } });
  const env = { ...process.env };
  delete env.MCP_TURNS_CONFIG;
  delete env.MCP_TURNS_SERVE_TOKENS;
  const worker = spawn(
    process.execPath,
    [BIN, 'worker', '--config', config, '--address', server.address, '--task-queue', TASK_QUEUE, '--log-level', 'WARN'],
    { env: { ...env, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: stub.url }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const serve = spawn(process.execPath, [...SERVE_NODE_ARGS, BIN, 'serve', '--port', '0', '--address', server.address, '--task-queue', TASK_QUEUE], {
    env,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  /** Serve's own lines after its banner (a failed stream, an error): shown, and counted. */
  const serveLines: string[] = [];
  let serveReady = false;
  const failures: string[] = [];
  try {
    const [, banner] = await Promise.all([
      waitForLine('mcp-turns worker', worker, worker.stdout!, /^mcp-turns worker on /, () => undefined),
      waitForLine('mcp-turns serve', serve, serve.stderr!, /mcp-turns serve on (http:\/\/\S+) \(/, (line) => {
        if (serveReady) {
          serveLines.push(line);
          process.stderr.write(`[serve] ${line}\n`);
        }
      }),
    ]);
    serveReady = true;
    const base = banner[1]!;
    const servePid = serve.pid!;
    const workerPid = worker.pid!;
    const serverPid = server.pid!;
    const progress = (line: string): void => void process.stderr.write(`${line}\n`);

    // Warm up: serve's routes, the worker's sandbox and MCP connection, one turn at a time.
    progress('warming up…');
    for (let i = 0; i < 2; i++) {
      const posted = await postTurn(base, `warm-up ${i}`);
      const s = await openStream(base, posted.id ?? '');
      const problem = problemOf(s);
      if (problem) throw new Error(`warm-up turn ${posted.id}: ${problem}`);
    }

    // Serve idle: its CPU rate and memory.
    await sleep(500);
    const idle0 = { cpu: cpuSeconds(servePid), at: performance.now() };
    await sleep(IDLE_MS);
    const idleCpuPerSecond = (cpuSeconds(servePid) - idle0.cpu) / ((performance.now() - idle0.at) / 1000);
    const memBefore = memOf(servePid);

    // 1. The run: 91 turns at once, then 100 SSE clients at once.
    const turns = SOLO + 1;
    const clients = SOLO + SHARED;
    progress(`1. ${turns} turns at once, then ${clients} SSE clients at once…`);
    await sleep(METRICS_FLUSH_MS);
    const counters0 = await frontendRequests(metricsPort);
    const server0 = cpuSeconds(serverPid);
    const worker0 = cpuSeconds(workerPid);
    const sampler = rssSampler(servePid);
    const cpu0 = cpuSeconds(servePid);
    const t0 = performance.now();
    const posts = await Promise.all(Array.from({ length: turns }, (_, i) => postTurn(base, `serve bench ${i} ${Date.now()}`)));
    const tPosted = performance.now();
    const cpuPosted = cpuSeconds(servePid);
    const ids = posts.map((p) => p.id).filter((id): id is string => id !== undefined);
    if (ids.length !== turns) failures.push(`${turns - ids.length} of ${turns} POST /v1/turns did not answer an id`);
    const sharedId = ids[ids.length - 1] ?? '';
    const soloIds = ids.slice(0, SOLO);
    const streams = await Promise.all([
      ...soloIds.map((id) => openStream(base, id)),
      ...Array.from({ length: SHARED }, () => openStream(base, sharedId)),
    ]);
    const tEnd = performance.now();
    const cpuEnd = cpuSeconds(servePid);
    const peakRss = sampler.stop();
    const hwmAfterRun = memOf(servePid).hwm;
    const runLoad = loadAverages();
    const serverCpu = cpuSeconds(serverPid) - server0;
    const workerCpu = cpuSeconds(workerPid) - worker0;
    // After: serve should be idle again (every feed stopped with its last subscriber).
    const settle0 = { cpu: cpuSeconds(servePid), at: performance.now() };
    await sleep(SETTLE_MS);
    const settleCpuPerSecond = (cpuSeconds(servePid) - settle0.cpu) / ((performance.now() - settle0.at) / 1000);
    const memAfter = memOf(servePid);
    const counters = await frontendRequests(metricsPort);
    const requestsOf = (op: string): number => (counters.get(op) ?? 0) - (counters0.get(op) ?? 0);

    // The checks.
    const problems = streams.map((s) => [s, problemOf(s)] as const).filter(([, p]) => p !== undefined);
    for (const [s, p] of problems.slice(0, 10)) failures.push(`stream of ${s.turnId}: ${p}`);
    if (problems.length > 10) failures.push(`… and ${problems.length - 10} more streams`);
    const shared = streams.slice(SOLO);
    const sharedSame = shared.filter((s) => s.data.join('\n') === shared[0]!.data.join('\n')).length;
    if (sharedSame !== SHARED) failures.push(`the ${SHARED} clients of ${sharedId} received different events (${sharedSame} like the first)`);
    const soloDistinct = new Set(streams.slice(0, SOLO).map((s) => s.turnId)).size;
    if (soloDistinct !== SOLO) failures.push(`${soloDistinct} distinct turns among the ${SOLO} single clients`);
    const dense = streams.filter((s) => problemOf(s) === undefined).length;

    const events = sum(streams.map((s) => s.ids.length));
    const runCpu = cpuEnd - cpu0;
    const streamCpu = cpuEnd - cpuPosted;
    const postCpu = cpuPosted - cpu0;
    const runMs = tEnd - t0;
    const streamMs = tEnd - tPosted;
    const firstEvent = streams.map((s) => (s.firstEventAt ?? NaN) - s.sentAt);
    const firstText = streams.map((s) => (s.firstTextAt ?? NaN) - s.sentAt);
    const eventsPerTurn = [...new Map(streams.map((s) => [s.turnId, s.ids.length])).values()];

    // 2. The ratio: 10 clients on one turn against 10 clients on 10 turns, interleaved rounds.
    const phase = async (label: string, turnsOf: number): Promise<Phase> => {
      progress(`2. ${label}…`);
      const c0 = cpuSeconds(servePid);
      const p0 = performance.now();
      const started = await Promise.all(Array.from({ length: turnsOf }, (_, i) => postTurn(base, `${label} ${i} ${Date.now()}`)));
      const p1 = performance.now();
      const c1 = cpuSeconds(servePid);
      const turnIds = started.map((p) => p.id ?? '');
      const got = await Promise.all(Array.from({ length: SHARED }, (_, i) => openStream(base, turnIds[i % turnIds.length]!)));
      const c2 = cpuSeconds(servePid);
      const p2 = performance.now();
      for (const s of got) {
        const p = problemOf(s);
        if (p) failures.push(`${label}: stream of ${s.turnId}: ${p}`);
      }
      await sleep(500);
      return { postCpu: c1 - c0, streamCpu: c2 - c1, postMs: p1 - p0, streamMs: p2 - p1, streams: got, events: sum(got.map((s) => s.ids.length)) };
    };
    const oneTurn: Phase[] = [];
    const tenTurns: Phase[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        oneTurn.push(await phase(`${SHARED} clients on 1 turn (round ${round + 1})`, 1));
        tenTurns.push(await phase(`${SHARED} clients on ${SHARED} turns (round ${round + 1})`, SHARED));
      } else {
        tenTurns.push(await phase(`${SHARED} clients on ${SHARED} turns (round ${round + 1})`, SHARED));
        oneTurn.push(await phase(`${SHARED} clients on 1 turn (round ${round + 1})`, 1));
      }
    }
    const ratioLoad = loadAverages();
    const memEnd = memOf(servePid);

    // ---------------------------------------------------------------------------------------------
    // The report.
    const out = (line = ''): void => console.log(line);
    const refused429 = tally.statuses.get(429) ?? 0;
    const refused5xx = sum([...tally.statuses].filter(([s]) => s >= 500).map(([, n]) => n));
    const otherBad = sum([...tally.statuses].filter(([s]) => s >= 400 && s !== 429 && s < 500).map(([, n]) => n));
    if (refused429) failures.push(`${refused429} requests refused by the rate limit (429)`);
    if (refused5xx) failures.push(`${refused5xx} requests answered 5xx`);
    if (otherBad) failures.push(`${otherBad} requests answered another 4xx`);
    if (tally.connectionErrors.length) failures.push(`${tally.connectionErrors.length} connection errors: ${tally.connectionErrors.slice(0, 3).join('; ')}`);
    const statusLine = [...tally.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s} ×${n}`).join(', ');
    const postMs = posts.map((p) => p.ms);

    out(`\nServe bench: ${cores} cores (${os.cpus()[0]?.model ?? '?'}); load 1/5/15 at start ${loadAtStart}`);
    out(
      `  serve: \`mcp-turns serve --address\` (pid ${servePid}), alone in its process; worker: \`mcp-turns worker\` (pid ${workerPid}, ` +
        `maxConcurrentCalls ${MAX_CONCURRENT_CALLS}, server-everything); dev server pid ${serverPid}; stub model and SSE clients ` +
        'in the bench process (node:http, one keep-alive agent, 256 sockets)',
    );
    out(
      `  scenario: step 1: 5 words + an echo call; step 2: a ${WORDS}-word reply at ${PACE} ms a word; ` +
        `formatter answer (${ANSWER_WORDS} words) at ${PACE} ms per JSON chunk; streamed, format on`,
    );
    out(
      `  serve idle (after warm-up): ${(idleCpuPerSecond * 1000).toFixed(1)} ms CPU/s; RSS ${mb(memBefore.rss)} ` +
        `(VmHWM since start ${mb(memBefore.hwm)})`,
    );

    out(`\n1. ${turns} turns started at once (POST /v1/turns), then ${clients} SSE clients at once: ${SOLO} on ${SOLO} turns, ${SHARED} on one; load ${runLoad}`);
    out(
      `   requests: ${statusLine || 'none'} (warm-up and part 2 included); refused: 429 ×${refused429}, 5xx ×${refused5xx}, ` +
        `other 4xx ×${otherBad}, connection errors ${tally.connectionErrors.length}; serve's own log lines: ${serveLines.length}`,
    );
    out(
      `   checks: status 200 ${streams.filter((s) => s.status === 200).length}/${clients}; dense and ending with finish completed ` +
        `${dense}/${clients}; shared turn identical ${sharedSame}/${SHARED} (${shared[0]?.ids.length ?? 0} events each)`,
    );
    out(
      `   wall: ${(runMs / 1000).toFixed(2)} s in all; the ${turns} POSTs ${ms(tPosted - t0)} (per request p50 ${ms(pct(postMs, 50))}, ` +
        `p95 ${ms(pct(postMs, 95))}); the streams ${(streamMs / 1000).toFixed(2)} s from the first GET to the last end`,
    );
    out(
      `   events delivered: ${events} (${(events / clients).toFixed(1)} per client; per turn min ${Math.min(...eventsPerTurn)}, ` +
        `max ${Math.max(...eventsPerTurn)}), ${(events / (streamMs / 1000)).toFixed(0)} events/s over the streams' wall time`,
    );
    out(
      `   time to first event per client (GET sent → first event): p50 ${ms(pct(firstEvent, 50))}, p95 ${ms(pct(firstEvent, 95))}, ` +
        `max ${ms(Math.max(...firstEvent))}; to first text-delta: p50 ${ms(pct(firstText, 50))}, p95 ${ms(pct(firstText, 95))}`,
    );
    const netRun = runCpu - (idleCpuPerSecond * runMs) / 1000;
    out(
      `   serve CPU: ${runCpu.toFixed(2)} s during the run = ${((runCpu / (runMs / 1000)) * 100).toFixed(1)}% of one core ` +
        `(POSTs ${postCpu.toFixed(2)} s = ${ms((postCpu / turns) * 1000)} per POST; streams ${streamCpu.toFixed(2)} s = ` +
        `${((streamCpu / (streamMs / 1000)) * 100).toFixed(1)}% of one core)`,
    );
    out(
      `   serve CPU per turn: ${ms((runCpu / turns) * 1000)} (net of idle ${ms((netRun / turns) * 1000)}); per client ` +
        `${ms((runCpu / clients) * 1000)}; per delivered event ${((streamCpu / events) * 1e6).toFixed(0)} µs (streams only)`,
    );
    out(
      `   serve RSS: before ${mb(memBefore.rss)} → peak ${mb(peakRss)} (sampled every ${SAMPLE_MS} ms; VmHWM ${mb(hwmAfterRun)}) → ` +
        `after ${mb(memAfter.rss)} (${SETTLE_MS / 1000} s later); CPU in those ${SETTLE_MS / 1000} s ${(settleCpuPerSecond * 1000).toFixed(1)} ms/s ` +
        `(idle before: ${(idleCpuPerSecond * 1000).toFixed(1)} ms/s)`,
    );
    out(
      `   dev server during the run: CPU ${serverCpu.toFixed(2)} s (${((serverCpu / (runMs / 1000)) * 100).toFixed(0)}% of a core); ` +
        `frontend requests per turn: describes ${(requestsOf('DescribeWorkflowExecution') / turns).toFixed(1)}, ` +
        `history reads ${((requestsOf('GetWorkflowExecutionHistory') + requestsOf('PollWorkflowExecutionHistory')) / turns).toFixed(1)}, ` +
        `starts ${(requestsOf('StartWorkflowExecution') / turns).toFixed(1)}; worker CPU ${workerCpu.toFixed(2)} s; stub peak concurrent calls ${stub.maxConcurrent}`,
    );

    const agg = (ps: Phase[]): { cpu: number; events: number; wall: number; post: number; firstEvent: number[] } => ({
      firstEvent: ps.flatMap((p) => p.streams.map((st) => (st.firstEventAt ?? NaN) - st.sentAt)),
      cpu: sum(ps.map((p) => p.streamCpu)),
      events: sum(ps.map((p) => p.events)),
      wall: sum(ps.map((p) => p.streamMs)),
      post: sum(ps.map((p) => p.postCpu)),
    });
    const one = agg(oneTurn);
    const ten = agg(tenTurns);
    const netOf = (a: { cpu: number; wall: number }): number => a.cpu - (idleCpuPerSecond * a.wall) / 1000;
    out(`\n2. Ratio: ${SHARED} clients on 1 turn vs ${SHARED} clients on ${SHARED} turns, ${ROUNDS} interleaved rounds; load ${ratioLoad}`);
    out(
      '   mode                 | streams wall | serve CPU (streams) | net of idle | events delivered | CPU per event | first event p50/p95 | POSTs CPU',
    );
    const rowOf = (name: string, a: ReturnType<typeof agg>, n: number): void =>
      out(
        `   ${name.padEnd(20)} | ${ms(a.wall / ROUNDS).padStart(12)} | ${ms((a.cpu / ROUNDS) * 1000).padStart(19)} | ` +
          `${ms((netOf(a) / ROUNDS) * 1000).padStart(11)} | ${(a.events / ROUNDS).toFixed(0).padStart(16)} | ` +
          `${`${((a.cpu / a.events) * 1e6).toFixed(0)} µs`.padStart(13)} | ` +
          `${`${ms(pct(a.firstEvent, 50))} / ${ms(pct(a.firstEvent, 95))}`.padStart(19)} | ${ms((a.post / ROUNDS / n) * 1000)} per POST`,
      );
    rowOf(`${SHARED} on 1 turn`, one, 1);
    rowOf(`${SHARED} on ${SHARED} turns`, ten, SHARED);
    out(
      `   serve CPU per delivered event, ${SHARED} turns / 1 turn: ${(ten.cpu / ten.events / (one.cpu / one.events)).toFixed(2)}× ` +
        `(net of idle ${(netOf(ten) / ten.events / (netOf(one) / one.events)).toFixed(2)}×): what sharing one reader per turn saves`,
    );
    out(`   serve RSS at the end of part 2: ${mb(memEnd.rss)} (VmHWM ${mb(memEnd.hwm)})`);

    out(`\nWhole bench ${((performance.now() - began) / 1000).toFixed(0)} s; load at the end ${loadAverages()}`);
    if (failures.length) {
      out(`\nFAILED (${failures.length}):`);
      for (const f of failures) out(`  - ${f}`);
      process.exitCode = 1;
    } else out('\nAll checks passed: every client 200, every stream dense and completed, the shared turn identical, nothing refused.');
  } finally {
    agent.destroy();
    await stopChild(serve);
    await stopChild(worker);
    await stub.close();
    await server.stop();
    fs.rmSync(path.dirname(config), { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
