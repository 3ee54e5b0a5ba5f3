/**
 * Fairness among owners on one worker. User A starts 200 turns, then user B starts 5 right after;
 * one worker runs them with its Claude calls capped at 10 at a time (`claude.maxConcurrentCalls`),
 * the stub answering every Claude call after 200 ms, each turn one tool round (a tool written in
 * code) and its answer: two Claude calls. Turns start from a client of their own (no eager start),
 * as `serve` starts them for a separate worker. Each run on fresh task queues and a fresh worker with
 * the `worker:` section's defaults, the same in all else: without owners (no fairness key), then with
 * A's turns started for owner A and B's for owner B (the owner's key is the turn's fairness key,
 * src/client/owner.ts); that pair once with the worker taking its default 100 workflow tasks at a
 * time, once with 10 (`worker.maxConcurrentWorkflowTaskExecutions`).
 *
 * Prints per run B's time to answer alone (before A's turns: no backlog), then B's with A's backlog
 * (start → result: median and max) and A's total (first start → last result); B's median
 * without / with keys; and where B's turns waited, from their histories: workflow tasks waiting to
 * be picked up and running (a task's run includes its wait for the worker's workflow thread), Claude
 * calls waiting in Temporal's matching, and a Claude call's run beyond the stub's latency (the
 * worker's own line of calls, src/claude/call-limiter.ts); the most activities and workflow tasks
 * each worker held at once; the machine's load beside the absolute figures.
 *
 * How to read it: A's total is the same work either way (400 calls, 10 at a time: 8 s at the least);
 * fairness changes who waits, and only where the backlog waits in matching. A backlog held inside
 * the worker (calls in its line, workflow tasks it has taken) is served first come, first served.
 *
 *   npm run bench:fairness     (BENCH_A_TURNS=200, BENCH_B_TURNS=5, BENCH_LATENCY_MS=200, BENCH_MAX_CALLS=10,
 *                               BENCH_ROUNDS=1, BENCH_FEW_TASKS=10 by default; BENCH_WORKER='{…}' sets the
 *                               worker: section as in bench:batch; BENCH_TIMELINE=1 prints one B turn's events)
 */
import os from 'node:os';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { startStubModel, type Scenario } from '../src/stub';
import { McpPool } from '../src/mcp';
import { CodeTools } from '../src/tools/code-tools';
import { defineTool } from '../src/tools/define-tool';
import { createClaudeClient } from '../src/claude/client';
import { resolveClaudeConfig } from '../src/claude/config';
import { resolveWorkerTuning } from '../src/config/worker-tuning';
import { createTurnWorkers } from '../src/worker/turn-worker';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { startChatTurn } from '../src/client/chat-turn-client';
import { ownerOf, type Owner } from '../src/client/owner';
import { isClaudeCall } from '../src/core/activity-types';
import { loadAverages } from './machine-figures';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testDataConverter } from '../test/support/settings';

const A_TURNS = Number(process.env.BENCH_A_TURNS ?? 200);
const B_TURNS = Number(process.env.BENCH_B_TURNS ?? 5);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 200);
const MAX_CALLS = Number(process.env.BENCH_MAX_CALLS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
/** The worker's `worker:` section, as `mcp-turns worker` runs with it: its defaults, or BENCH_WORKER='{"workflowThreadPoolSize":2}'. */
const TUNING = resolveWorkerTuning(process.env.BENCH_WORKER ? JSON.parse(process.env.BENCH_WORKER) : {}).tuning!;
/** The second pair of runs: the same worker taking this many workflow tasks at a time (`worker.maxConcurrentWorkflowTaskExecutions`). */
const FEW_TASKS = Number(process.env.BENCH_FEW_TASKS ?? 10);

const ECHO = defineTool({
  name: 'echo',
  description: 'Echoes back the input',
  inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  execute: ({ message }) => `Echo: ${String(message)}`,
});

const SCENARIO: Scenario = {
  latencyMs: LATENCY,
  steps: [
    ...Array.from({ length: ROUNDS }, (_, i) => ({ content: [{ type: 'tool_use' as const, name: 'code__echo', input: { message: `round ${i}` } }] })),
    { content: [{ type: 'text' as const, text: 'done: {{lastToolResult}}' }] },
  ],
  formatter: { conversation: [{ type: 'text', content: 'done' }] },
};

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type Event = NonNullable<History['events']>[number];

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const at = (e: Event): number => Number(e.eventTime!.seconds ?? 0) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;

/** Where one turn's time went, in ms, from its history's timestamps (a turn's hops run one after another). */
interface Hops {
  /** From asking for the start to the turn's first event (the start request). */
  start: number;
  /** Workflow tasks: scheduled → picked up by the worker (Temporal's matching, or the worker's sticky queue). */
  workflowTaskWait: number;
  /** Workflow tasks: picked up → completed (the worker's work, its local activities included). */
  workflowTaskRun: number;
  /** Claude calls: scheduled → picked up (Temporal's matching; ~0 when dispatched eagerly). */
  claudeWait: number;
  /** Claude calls: picked up → completed, beyond the stub's latency (the worker's own line of calls, src/claude/call-limiter.ts, and its CPU). */
  claudeInWorker: number;
  /** The rest: the stub's latency, tool activities, the result reaching the client. */
  rest: number;
  /** The queues the turn's Claude calls were scheduled on. */
  claudeQueues: Set<string>;
}

function hopsOf(history: History, wall0: number, answeredMs: number): Hops {
  const events = history.events ?? [];
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const h: Hops = { start: at(events[0]!) - wall0, workflowTaskWait: 0, workflowTaskRun: 0, claudeWait: 0, claudeInWorker: 0, rest: 0, claudeQueues: new Set() };
  for (const e of events) {
    const wt = e.workflowTaskCompletedEventAttributes;
    if (wt) {
      const started = at(byId.get(Number(wt.startedEventId))!);
      h.workflowTaskWait += started - at(byId.get(Number(wt.scheduledEventId))!);
      h.workflowTaskRun += at(e) - started;
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const scheduled = byId.get(Number(done.scheduledEventId))!;
      const attrs = scheduled.activityTaskScheduledEventAttributes!;
      if (!isClaudeCall(attrs.activityType!.name!)) continue;
      const started = byId.get(Number(done.startedEventId))!;
      h.claudeQueues.add(attrs.taskQueue!.name!);
      h.claudeWait += at(started) - at(scheduled);
      h.claudeInWorker += at(e) - at(started) - LATENCY;
    }
  }
  h.rest = answeredMs - h.start - h.workflowTaskWait - h.workflowTaskRun - h.claudeWait - h.claudeInWorker;
  return h;
}

interface RunFigures {
  /** B's turns run alone on the same worker before A's: what B's answer costs without a backlog. */
  bAlone: number;
  bMedian: number;
  bMax: number;
  aTotal: number;
  aMedian: number;
  bHops: Hops[];
  /** The most activities the turn worker / the Claude-queue worker held at once, and workflow activations in flight. */
  peaks: { turnActivities: number; claudeActivities: number; activations: number };
  stubPeak: number;
  load: string;
}

async function main(): Promise<void> {
  // The Claude-queue worker has no workflows to poll for: the SDK says so once per worker, which is no news here.
  Runtime.install({ logger: new DefaultLogger('WARN', (entry) => entry.message.startsWith('No workflows registered') || console.error(`[${entry.level}] ${entry.message}`, entry.meta ?? '')) });
  const loadBefore = loadAverages();
  const server = await startDevServer({ cliPath: testTemporalCli().path, port: await freePort(), uiPort: await freePort() });
  const stub = await startStubModel({ scenarios: { fair: SCENARIO } });
  const claudeClient = createClaudeClient({ apiKey: 'bench', baseURL: stub.url });
  const claudeConfig = resolveClaudeConfig({ maxConcurrentCalls: MAX_CALLS });
  const dataConverter = testDataConverter();
  const connection = await NativeConnection.connect({ address: server.address });
  // Turns start from a client of their own, as `serve` starts them for a separate worker (no eager start).
  const client = new Client({ connection: await Connection.connect({ address: server.address }), ...clientStorageOptions(dataConverter) });
  const owners = { a: ownerOf('token:bench-user-a', 'bench-user-a'), b: ownerOf('token:bench-user-b', 'bench-user-b') };
  const stamp = Date.now().toString(36);

  async function run(name: string, fair: boolean, workflowTasks: number): Promise<RunFigures> {
    const taskQueue = `bench-fair-${name}-${stamp}`;
    const workers = await createTurnWorkers({
      connection,
      taskQueue,
      pool: new McpPool([]),
      codeTools: new CodeTools([], { code: [ECHO] }),
      claudeClient,
      claudeConfig,
      dataConverter,
      turnWorkerOptions: { ...TUNING, maxConcurrentWorkflowTaskExecutions: workflowTasks },
    });
    const running = workers.run();

    const start = async (who: 'a' | 'b', i: number): Promise<{ t0: number; wall0: number; id: string; done: Promise<number> }> => {
      const owner: Owner | undefined = fair ? owners[who] : undefined;
      const t0 = performance.now();
      const wall0 = Date.now();
      const handle = await startChatTurn(client, { question: `${who} ${i}`, model: 'fair', format: false }, { taskQueue, ...(owner ? { owner } : {}) });
      return { t0, wall0, id: handle.workflowId, done: handle.result().then(() => performance.now()) };
    };
    // One turn loads the worker's workflow code and polls its queues; then B's turns alone: the time to answer with no backlog.
    await (await start('b', 99)).done;
    const alone = await Promise.all(Array.from({ length: B_TURNS }, (_, i) => start('b', 100 + i)));
    const bAlone = median(await Promise.all(alone.map(async (t) => (await t.done) - t.t0)));
    stub.maxConcurrent = 0;

    const peaks = { turnActivities: 0, claudeActivities: 0, activations: 0 };
    const sampler = setInterval(() => {
      const turn = workers.turnWorker.getStatus();
      peaks.turnActivities = Math.max(peaks.turnActivities, turn.numInFlightNonLocalActivities);
      peaks.claudeActivities = Math.max(peaks.claudeActivities, workers.claudeWorker.getStatus().numInFlightNonLocalActivities);
      peaks.activations = Math.max(peaks.activations, turn.numInFlightWorkflowActivations);
    }, 20);
    const t0 = performance.now();
    const aTurns = await Promise.all(Array.from({ length: A_TURNS }, (_, i) => start('a', i)));
    const bTurns = await Promise.all(Array.from({ length: B_TURNS }, (_, i) => start('b', i)));
    const bTimes = await Promise.all(bTurns.map(async (t) => (await t.done) - t.t0));
    const aEnds = await Promise.all(aTurns.map((t) => t.done));
    clearInterval(sampler);
    const aTimes = aEnds.map((end, i) => end - aTurns[i]!.t0);
    const aTotal = Math.max(...aEnds) - t0;
    const load = loadAverages();
    const stubPeak = stub.maxConcurrent;

    // B's histories: where their time went.
    const bHops = await Promise.all(bTurns.map(async (t, i) => hopsOf(await client.workflow.getHandle(t.id).fetchHistory(), t.wall0, bTimes[i]!)));
    if (process.env.BENCH_TIMELINE) {
      // BENCH_TIMELINE=1: one B turn's events, ms after its start was asked for (this process's clock and the server's are the same machine's).
      const b = bTurns[0]!;
      const history = await client.workflow.getHandle(b.id).fetchHistory();
      console.log(`\n${name}: B turn ${b.id}, answered after ${bTimes[0]!.toFixed(0)} ms`);
      for (const e of history.events ?? []) {
        const kind = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]) ?? '?';
        const queue = e.activityTaskScheduledEventAttributes?.taskQueue?.name ?? e.workflowTaskScheduledEventAttributes?.taskQueue?.name ?? '';
        console.log(`  ${(at(e) - b.wall0).toFixed(0).padStart(6)} ms  ${kind.replace('EventAttributes', '')} ${queue}`);
      }
    }
    workers.shutdown();
    await running;
    return { bAlone, bMedian: median(bTimes), bMax: Math.max(...bTimes), aTotal, aMedian: median(aTimes), bHops, peaks, stubPeak, load };
  }

  // Each pair on the same worker tuning, one after the other: the machine's state moves between pairs more than within one.
  const pairs = [TUNING.maxConcurrentWorkflowTaskExecutions, FEW_TASKS].map((tasks) => ({ tasks, runs: [] as Array<[string, RunFigures]> }));
  for (const pair of pairs) {
    for (const fair of [false, true]) {
      const label = `${fair ? 'with' : 'without'} keys, ${pair.tasks} wf tasks`;
      pair.runs.push([label, await run(`${fair ? 'on' : 'off'}-${pair.tasks}`, fair, pair.tasks)]);
    }
  }
  const runs = pairs.flatMap((p) => p.runs);

  const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  const W = 28;
  console.log(
    `\nUser A starts ${A_TURNS} turns, then user B ${B_TURNS}; one worker, Claude calls capped at ${MAX_CALLS} at a time, ` +
      `stub latency ${LATENCY} ms, ${ROUNDS + 1} Claude calls per turn; the worker taking ${pairs.map((p) => p.tasks).join(' (its default), then ')} ` +
      `workflow tasks at a time (${os.availableParallelism()} cores, load average ${loadBefore} before)`,
  );
  console.log(`  ${'run'.padEnd(W)} ${'B alone'.padStart(8)} ${'B median'.padStart(9)} ${'B max'.padStart(8)} ${'A total'.padStart(8)} ${'A median'.padStart(9)}  load average after the run`);
  for (const [label, f] of runs) {
    console.log(`  ${label.padEnd(W)} ${s(f.bAlone).padStart(8)} ${s(f.bMedian).padStart(9)} ${s(f.bMax).padStart(8)} ${s(f.aTotal).padStart(8)} ${s(f.aMedian).padStart(9)}  ${f.load}`);
  }
  for (const { tasks, runs: [[, without], [, withKeys]] } of pairs as Array<{ tasks: number; runs: [[string, RunFigures], [string, RunFigures]] }>) {
    console.log(
      `  ${tasks} wf tasks: B's median without / with fairness keys ${(without.bMedian / withKeys.bMedian).toFixed(1)}×; ` +
        `A's total with / without ${(withKeys.aTotal / without.aTotal).toFixed(2)}×`,
    );
  }
  console.log(`  (A's total is at least ${s((A_TURNS * (ROUNDS + 1) * LATENCY) / MAX_CALLS)}: ${A_TURNS * (ROUNDS + 1)} calls of ${LATENCY} ms, ${MAX_CALLS} at a time)`);
  console.log(`\nWhere B's turns waited: ms per turn, median over B's ${B_TURNS} (each summed over the turn's tasks and calls)`);
  const cols = ['start', 'wf task wait', 'wf task run', 'Claude wait', 'Claude in worker', 'rest'];
  const width = (c: string): number => Math.max(7, c.length);
  console.log(`  ${''.padEnd(W)} ${cols.map((c) => c.padStart(width(c))).join(' ')}  Claude calls on`);
  for (const [label, f] of runs) {
    const m = (k: keyof Omit<Hops, 'claudeQueues'>): number => median(f.bHops.map((h) => h[k]));
    const values = [m('start'), m('workflowTaskWait'), m('workflowTaskRun'), m('claudeWait'), m('claudeInWorker'), m('rest')];
    const queues = [...new Set(f.bHops.flatMap((h) => [...h.claudeQueues]))].map((q) => (q.endsWith('-claude') ? 'the Claude queue' : "the turn's queue"));
    console.log(`  ${label.padEnd(W)} ${values.map((v, i) => v.toFixed(0).padStart(width(cols[i]!))).join(' ')}  ${queues.join(', ')}`);
  }
  console.log(
    `  ("wf task run": picked up → completed, including the wait for the worker's workflow thread; "Claude wait": scheduled → ` +
      `picked up, in Temporal's matching; "Claude in worker": its run beyond the stub's ${LATENCY} ms, mostly the worker's own line ` +
      `of calls; "rest": the stub's latency, tool calls, the result reaching the client)`,
  );
  for (const [label, f] of runs) {
    console.log(
      `  ${label}: at most ${f.peaks.turnActivities} activities held by the turn worker at once, ${f.peaks.claudeActivities} by the Claude-queue worker, ` +
        `${f.peaks.activations} workflow tasks in flight; ${f.stubPeak} Claude calls at the stub at once`,
    );
  }

  await stub.close();
  await client.connection.close();
  await connection.close();
  await server.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
