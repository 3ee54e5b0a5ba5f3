/**
 * What a turn costs on Temporal Cloud, counted from the finished workflows' histories: events,
 * workflow tasks, activity attempts, local-activity markers, history bytes, and billable Actions
 * (bench/billable-actions.ts: the rules and what history cannot show), for four kinds of turn:
 *
 *  1. a 2-round turn (Claude asks for a tool twice, then answers; `format: false`),
 *  2. a 5-round turn (the same, five rounds),
 *  3. a streamed 2-round turn (a short text before each tool call, a 30-word reply, 20 ms a delta)
 *     with one subscriber (`subscribeTurn`) reading the stream while the turn runs,
 *  4. a 10-message conversation (one message after the other, each a 1-round turn, the conversation
 *     closing itself after a short idle time): the conversation's history and every workflow it
 *     started, divided by 10 for "per message".
 *
 * One dev server of its own (with its /metrics), the scripted stub model and server-everything
 * through the worker's MCP pool, and the turn workers in this process. Beside history, the server's
 * request counters (/metrics) say what history cannot: the activity heartbeats that reached the
 * server (billable) and the reads a subscriber makes (queries and updates are billable, describes
 * and history reads are not).
 *
 *   npm run bench:actions     (BENCH_ACTION_TURNS=3)
 */
import { everythingPool } from './everything-config';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { startStubModel, type Scenario } from '../src/stub';
import { createClaudeClient } from '../src/claude/client';
import { resolveClaudeConfig } from '../src/claude/config';
import { createTurnWorkers } from '../src/worker/turn-worker';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { startChatTurn } from '../src/client/chat-turn-client';
import { newConversationId, sendMessage } from '../src/client/conversation-client';
import { subscribeTurn } from '../src/client/subscribe';
import { STREAM_PUBLISH_INTERVAL_MS } from '../src/core/stream-record';
import type { ChatTurnResult } from '../src/core/turn-result';
import { runChain } from '../test/support/history-payloads';
import { metricsText } from './dev-server-metrics';
import { ACTION_KINDS, billableActionsOfAll, historyFigures, type HistoryLike } from './billable-actions';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testDataConverter } from '../test/support/settings';

const TURNS = Number(process.env.BENCH_ACTION_TURNS ?? 3);
const MESSAGES = 10;
const TASK_QUEUE = 'bench-actions';
/** The conversation closes itself once idle this long (its idle timer is one it starts anyway). */
const CONVERSATION_IDLE_MS = 2000;
/** Temporal Cloud's list price: $50 per million Actions. */
const USD_PER_ACTION = 50 / 1_000_000;
/** The server's metrics are flushed about once a second: counters read after that long include every request made before. */
const METRICS_FLUSH_MS = 1200;
/** The Claude activity's heartbeat timeout (workflows/turn-activities.ts): its periodic beat is every 2 s. */
const PERIODIC_BEAT_MS = 2000;

// ---------------------------------------------------------------------------------------------
// Scenarios.

function rounds(n: number): Scenario {
  return {
    steps: [
      ...Array.from({ length: n }, (_, i) => ({
        content: [{ type: 'tool_use' as const, name: 'everything__echo', input: { message: `round ${i}` } }],
      })),
      { content: [{ type: 'text' as const, text: 'done: {{lastToolResult}}' }] },
    ],
  };
}

const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i + 1}`).join(' ');

function streamedRounds(n: number): Scenario {
  return {
    streamDelayMs: 20,
    steps: [
      ...Array.from({ length: n }, (_, i) => ({
        content: [
          { type: 'text' as const, text: `Let me echo round ${i}.` },
          { type: 'tool_use' as const, name: 'everything__echo', input: { message: `round ${i}` } },
        ],
      })),
      { content: [{ type: 'text' as const, text: words(30) }] },
    ],
  };
}

const conversationTurn: Scenario = {
  perTurn: true,
  steps: [
    { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
    { content: [{ type: 'text', text: 'answer to {{question}}' }] },
  ],
};

const SCENARIOS: Record<string, Scenario> = {
  'rounds-2': rounds(2),
  'rounds-5': rounds(5),
  'streamed-2': streamedRounds(2),
  conversation: conversationTurn,
};

// ---------------------------------------------------------------------------------------------
// Histories: a run, the runs it continued as, the children it started, theirs.

interface Measured {
  workflowId: string;
  runId: string;
  history: HistoryLike & { events?: unknown[] | null };
}

async function collect(client: Client, workflowId: string, runId: string, out: Measured[]): Promise<void> {
  if (out.some((m) => m.runId === runId)) return;
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  out.push({ workflowId, runId, history });
  for (const e of history.events ?? []) {
    const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
    if (child?.workflowId && child.runId) await collect(client, child.workflowId, child.runId, out);
    const next = e.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (next) await collect(client, workflowId, next, out);
  }
}

/** Every run of `workflowId` from its first (the runs it continued as follow), and every child of each. */
async function collectFromFirstRun(client: Client, workflowId: string): Promise<Measured[]> {
  const out: Measured[] = [];
  const [first] = await runChain(client, workflowId);
  if (first) await collect(client, workflowId, first, out);
  return out;
}

/** One group of histories per workflow id. */
async function collectEach(client: Client, workflowIds: string[]): Promise<Measured[][]> {
  const groups: Measured[][] = [];
  for (const id of workflowIds) groups.push(await collectFromFirstRun(client, id));
  return groups;
}

// ---------------------------------------------------------------------------------------------
// The server's request counters.

/** `service_requests` of the frontend, summed by operation (e.g. "RecordActivityTaskHeartbeat"). */
async function frontendRequests(metricsPort: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const line of (await metricsText(metricsPort)).split('\n')) {
    const m = /^service_requests\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || !/service_name="frontend"/.test(m[1]!)) continue;
    const operation = /operation="([^"]*)"/.exec(m[1]!)?.[1] ?? '?';
    counts.set(operation, (counts.get(operation) ?? 0) + Number(m[2]));
  }
  return counts;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function requestsDuring(metricsPort: number, work: () => Promise<void>): Promise<Map<string, number>> {
  await sleep(METRICS_FLUSH_MS);
  const before = await frontendRequests(metricsPort);
  await work();
  await sleep(METRICS_FLUSH_MS);
  const after = await frontendRequests(metricsPort);
  const delta = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) delta.set(k, v - (before.get(k) ?? 0));
  return delta;
}

// ---------------------------------------------------------------------------------------------

interface KindRun {
  label: string;
  /** What one unit is: a turn, or a message of the conversation. */
  unit: 'turn' | 'message';
  units: number;
  /** Per unit of work: the workflows measured together (one turn; one whole conversation). */
  groups: Measured[][];
  requests: Map<string, number>;
  note?: string;
}

function checkTurn(result: ChatTurnResult, rounds: number, what: string): void {
  if (result.steps !== rounds + 1 || result.toolCalls.length !== rounds) {
    throw new Error(`${what}: expected ${rounds + 1} Claude calls and ${rounds} tool calls, got ${result.steps} and ${result.toolCalls.length} (${result.stopReason})`);
  }
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const metricsPort = await freePort();
  const server = await startDevServer({ cliPath: testTemporalCli().path, port: await freePort(), uiPort: await freePort(), extraArgs: ['--metrics-port', String(metricsPort)] });
  const stub = await startStubModel({ scenarios: SCENARIOS });
  const pool = everythingPool();
  const connection = await NativeConnection.connect({ address: server.address });
  // The workers and the client share one converter.
  const dataConverter = testDataConverter();
  const workers = await createTurnWorkers({
    connection,
    taskQueue: TASK_QUEUE,
    pool,
    claudeClient: createClaudeClient({ apiKey: 'bench', baseURL: stub.url }),
    claudeConfig: resolveClaudeConfig({}),
    dataConverter,
  });
  const running = workers.run();
  const client = new Client({ connection: await Connection.connect({ address: server.address }), ...clientStorageOptions(dataConverter) });
  const progress = (line: string): void => void process.stderr.write(`${line}\n`);
  try {
    // Each returns the turn's workflow id: histories are read after the server's counters are (the reads would count).
    const plainTurn = async (model: string, question: string, roundsExpected: number): Promise<string> => {
      const handle = await startChatTurn(client, { question, model, format: false, maxSteps: 20 }, { taskQueue: TASK_QUEUE });
      checkTurn(await handle.result(), roundsExpected, question);
      return handle.workflowId;
    };
    const subscriberSeen = { events: 0, liveTextDeltas: 0, finished: 0 };
    const streamedTurn = async (question: string): Promise<string> => {
      const handle = await startChatTurn(client, { question, model: 'streamed-2', format: false, maxSteps: 20, stream: true }, { taskQueue: TASK_QUEUE });
      let ended = false;
      const subscriber = (async () => {
        for await (const e of subscribeTurn(client, handle.workflowId)) {
          subscriberSeen.events++;
          if (e.type === 'text-delta' && !ended) subscriberSeen.liveTextDeltas++;
          if (e.type === 'finish') subscriberSeen.finished++;
        }
      })();
      // Both awaited at once: a failing subscriber fails the bench at once.
      const [result] = await Promise.all([
        handle.result().then((r) => {
          ended = true;
          return r;
        }),
        subscriber,
      ]);
      checkTurn(result, 2, question);
      return handle.workflowId;
    };

    // Warm up: pool connection, workflow cache, the subscriber's code.
    progress('warming up…');
    await plainTurn('rounds-2', 'warm-up', 2);
    await streamedTurn('warm-up streamed');
    subscriberSeen.events = subscriberSeen.liveTextDeltas = subscriberSeen.finished = 0;

    const runs: KindRun[] = [];
    for (const [label, model, n] of [
      ['2-round turn', 'rounds-2', 2],
      ['5-round turn', 'rounds-5', 5],
    ] as const) {
      progress(`${label}: ${TURNS} turns…`);
      const ids: string[] = [];
      const requests = await requestsDuring(metricsPort, async () => {
        for (let i = 0; i < TURNS; i++) ids.push(await plainTurn(model, `${label} ${i}`, n));
      });
      runs.push({ label, unit: 'turn', units: TURNS, groups: await collectEach(client, ids), requests });
    }

    progress(`streamed 2-round turn, 1 subscriber: ${TURNS} turns…`);
    const streamedIds: string[] = [];
    const streamedRequests = await requestsDuring(metricsPort, async () => {
      for (let i = 0; i < TURNS; i++) streamedIds.push(await streamedTurn(`streamed ${i}`));
    });
    runs.push({
      label: 'streamed 2-round, 1 sub',
      unit: 'turn',
      units: TURNS,
      groups: await collectEach(client, streamedIds),
      requests: streamedRequests,
      note:
        `the subscriber read ${(subscriberSeen.events / TURNS).toFixed(0)} events a turn, ${(subscriberSeen.liveTextDeltas / TURNS).toFixed(0)} text deltas of them before the turn's result; ` +
        `${subscriberSeen.finished} of ${TURNS} streams ended with their finish`,
    });
    if (subscriberSeen.liveTextDeltas === 0) throw new Error('the subscriber read no text delta while its turns ran');

    progress(`${MESSAGES}-message conversation…`);
    const conversationId = newConversationId();
    const conversationRequests = await requestsDuring(metricsPort, async () => {
      for (let i = 1; i <= MESSAGES; i++) {
        const text = `message ${i} of ${conversationId}`;
        const outcome = await sendMessage(client, conversationId, text, {
          options: { model: 'conversation', format: false },
          conversation: { taskQueue: TASK_QUEUE, idleTimeoutMs: CONVERSATION_IDLE_MS },
        });
        if (outcome.error || !outcome.result) throw new Error(`message ${i} was not answered: ${outcome.error}`);
        checkTurn(outcome.result, 1, text);
      }
      await client.workflow.getHandle(conversationId).result(); // closed by its idle timer
    });
    const conversationGroup = await collectFromFirstRun(client, conversationId);
    runs.push({
      label: `${MESSAGES}-message conversation`,
      unit: 'message',
      units: MESSAGES,
      groups: [conversationGroup],
      requests: conversationRequests,
      note: `${conversationGroup.length} workflow runs measured (the conversation's runs and its turns); it closed itself after ${CONVERSATION_IDLE_MS / 1000} s idle`,
    });

    report(runs, workers.workflowCode);
  } finally {
    workers.shutdown();
    await running;
    await pool.close();
    await stub.close();
    await client.connection.close();
    await connection.close();
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The report.

function report(runs: KindRun[], workflowCode: string): void {
  const out = (line = ''): void => console.log(line);
  const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(1));
  const rows = runs.map((run) => {
    const all = run.groups.flat();
    const figures = all.map((m) => historyFigures(m.history));
    const perGroup = run.groups.map((g) => billableActionsOfAll(g));
    const sum = (f: (x: ReturnType<typeof historyFigures>) => number): number => figures.reduce((n, x) => n + f(x), 0) / run.units;
    const attempts: Record<string, number> = {};
    for (const f of figures) for (const [type, n] of Object.entries(f.activityAttempts)) attempts[type] = (attempts[type] ?? 0) + n / run.units;
    const byKind: Record<string, number> = {};
    for (const a of perGroup) for (const [k, v] of Object.entries(a.byKind)) byKind[k] = (byKind[k] ?? 0) + v / run.units;
    const totals = perGroup.map((a) => a.total);
    const actions = totals.reduce((n, t) => n + t, 0) / run.units;
    // A group is one turn, or the whole conversation: its per-unit spread.
    const perUnit = run.groups.length === run.units ? totals : totals.map((t) => t / run.units);
    const heartbeats = (run.requests.get('RecordActivityTaskHeartbeat') ?? 0) / run.units;
    return {
      run,
      events: sum((f) => f.events),
      wfts: sum((f) => f.workflowTasks),
      attempts,
      markers: sum((f) => f.localActivityMarkers),
      bytes: sum((f) => f.bytes),
      byKind,
      actions,
      spread: [Math.min(...perUnit), Math.max(...perUnit)] as const,
      heartbeats,
    };
  });

  out(`\nTemporal Cloud Actions per turn, from the finished workflows' histories (${TURNS} turns of each kind, mean; the conversation: its whole cost / ${MESSAGES})`);
  out(`  workflow code: ${workflowCode}`);
  const header = ['kind', 'events', 'WFTs', 'activity attempts', 'LA markers', 'actions', 'history KiB', '+ heartbeats*', '= actions'];
  const table = rows.map((r) => [
    `${r.run.label}${r.run.unit === 'message' ? ' (per message)' : ''}`,
    fmt(r.events),
    fmt(r.wfts),
    `${fmt(Object.values(r.attempts).reduce((n, v) => n + v, 0))} (${Object.entries(r.attempts).map(([t, n]) => `${t} ${fmt(n)}`).join(', ') || 'none'})`,
    fmt(r.markers),
    `${fmt(r.actions)}${r.spread[0] !== r.spread[1] ? ` (${fmt(r.spread[0])}–${fmt(r.spread[1])})` : ''}`,
    (r.bytes / 1024).toFixed(1),
    fmt(r.heartbeats),
    fmt(r.actions + r.heartbeats),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')}`;
  out(line(header));
  out(`  ${widths.map((w) => '-'.repeat(w)).join('-|-')}`);
  for (const row of table) out(line(row));

  out('\nActions by rule (per turn / per message)');
  const kinds = ACTION_KINDS.filter((k) => rows.some((r) => (r.byKind[k] ?? 0) > 0));
  const kindWidth = Math.max(...rows.map((r) => r.run.label.length));
  out(`  ${'kind'.padEnd(kindWidth)} | ${kinds.join(' | ')}`);
  for (const r of rows) out(`  ${r.run.label.padEnd(kindWidth)} | ${kinds.map((k) => fmt(r.byKind[k] ?? 0).padStart(k.length)).join(' | ')}`);

  out('\nWhat history does not show: the frontend requests per turn / per message during each kind (the dev server\'s /metrics)');
  const ops: Array<[string, string[]]> = [
    ['heartbeats', ['RecordActivityTaskHeartbeat']],
    ['queries', ['QueryWorkflow']],
    ['updates sent', ['UpdateWorkflowExecution', 'ExecuteMultiOperation']],
    ['update polls', ['PollWorkflowExecutionUpdate']],
    ['signals sent', ['SignalWorkflowExecution', 'SignalWithStartWorkflowExecution']],
    ['describes', ['DescribeWorkflowExecution']],
    ['history reads', ['GetWorkflowExecutionHistory', 'PollWorkflowExecutionHistory']],
  ];
  out(`  ${'kind'.padEnd(kindWidth)} | ${ops.map(([name]) => name).join(' | ')}`);
  for (const r of rows) {
    const count = (names: string[]): number => names.reduce((n, op) => n + (r.run.requests.get(op) ?? 0), 0) / r.run.units;
    out(`  ${r.run.label.padEnd(kindWidth)} | ${ops.map(([name, names]) => fmt(count(names)).padStart(name.length)).join(' | ')}`);
  }
  for (const r of rows) if (r.run.note) out(`  ${r.run.label}: ${r.run.note}`);

  out('\nCost at Temporal Cloud list price ($50 per million actions)');
  for (const r of rows) {
    const per1000 = (a: number): string => `$${(a * 1000 * USD_PER_ACTION).toFixed(3)}`;
    out(
      `  ${r.run.label.padEnd(kindWidth)}: ${per1000(r.actions)} per 1,000 ${r.run.unit === 'message' ? 'messages (turns)' : 'turns'} from history; ` +
        `${per1000(r.actions + r.heartbeats)} with the heartbeats the server received`,
    );
  }

  out('\nNotes');
  out(
    `  * heartbeats are billable (1 Action each that reaches the server) but are not in history: counted from the server's RecordActivityTaskHeartbeat requests. ` +
      `The Claude worker's heartbeat throttle is ${STREAM_PUBLISH_INTERVAL_MS} ms (maxHeartbeatThrottleInterval: a streamed call publishes its deltas as heartbeat details) ` +
      `and a streamed call publishes its first delta at once, which the SDK sends at once: a streamed call costs 1 + about its duration / ${STREAM_PUBLISH_INTERVAL_MS} ms (rounded down) in heartbeats, ` +
      `however short; an unstreamed call (on the turn's queue, whose worker sends beats every 2 s at most) beats every ${PERIODIC_BEAT_MS / 1000} s only, ` +
      `so calls shorter than that (the stub answers at once) cost none.`,
  );
  out(
    '  * a subscriber (subscribeTurn) reads by long-polling the history and describing the workflow for the running calls\' heartbeat details: ' +
      'neither is an Action; it sends no query and no update, so reading a stream adds no Action; what streaming costs is the heartbeats the calls publish.',
  );
  out(
    '  * not in history, so not counted above: queries (1 Action each, when a worker answers), rejected updates (1 each), heartbeats (above). ' +
      'A child workflow start counts 2 in its parent (StartChildWorkflowExecutionInitiated) and 0 in the child; a signal between two measured workflows counts once, where it is received.',
  );
  out(
    '  * the conversation\'s message is an update (update-with-start for the first): 1 Action each, from WorkflowExecutionUpdateAccepted; the client waits for its outcome by polling the update (free).',
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
