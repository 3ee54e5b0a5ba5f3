/**
 * mcp-turns on a real cluster (the one TEMPORAL_ADDRESS names: several history shards, SQL
 * visibility): three `mcp-turns worker` processes share one batch; one is SIGKILLed while the batch
 * runs; every turn must complete exactly once with its own answer, and the search attributes must
 * filter the turns in visibility, by batch, status, stop reason, model and tool-call count.
 *
 * Each query has a scenario of its own (model `<batch>-qN`), whose tool call carries the query's
 * label to the counting MCP server, so an answer, a tool execution and a worker can be matched to
 * their query. Figures (durations, turns, kills, re-executions) are printed and written to
 * test-artifacts/cluster-figures.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import type { Scenario } from '../../src/stub';
import { runBatch, type BatchItemOutcome } from '../../src/client/batch-client';
import { connectClient } from '../../src/client/connect-client';
import { testSettings } from '../support/settings';
import type { BatchItem } from '../../src/core/batch';
import { countingStdio } from '../support/mcp-servers';
import { startWorkerProcess } from '../support/worker-process';
import { uniqueQueue } from '../support/temporal';

const TURNS = Number(process.env.MCP_TURNS_CLUSTER_TURNS ?? 150);
const CONCURRENCY = Number(process.env.MCP_TURNS_CLUSTER_CONCURRENCY ?? 30);
// Ten minutes, and more for a large batch (10,000 turns: 50 min).
jest.setTimeout(Math.max(600_000, TURNS * 300));
const WORKERS = 3;
/** The worker is killed once this share of the turns has completed. */
const KILL_AFTER = Math.round(TURNS / 3);
/** Each Claude call of the stub takes this long. */
const CLAUDE_LATENCY_MS = Number(process.env.MCP_TURNS_CLUSTER_LATENCY_MS ?? 150);

const batch = `cluster-${Date.now().toString(36)}`;
const taskQueue = uniqueQueue('cluster');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-cluster-'));
const countFile = path.join(dir, 'count.jsonl');
const labels = Array.from({ length: TURNS }, (_, i) => `q${i + 1}`);
const FAILING = 'refused';

let stub: StubModel;
let client: Client;
const workers: ChildProcess[] = [];

/** A query's scenario: one tool call with its label, then the answer naming the tool's result. */
function scenarioFor(label: string): Scenario {
  return {
    latencyMs: CLAUDE_LATENCY_MS,
    steps: [
      { content: [{ type: 'tool_use', name: 'counting__count', input: { label } }] },
      { content: [{ type: 'text', text: `answer for ${label}: {{toolResults}}` }] },
    ],
    formatter: { conversation: [{ type: 'text', content: `answer for ${label}: {{toolResults}}` }] },
  };
}

interface Execution {
  tool: string;
  args: { label: string };
  /** The counting server's pid: one server per worker. */
  pid: number;
}

function executions(): Execution[] {
  if (!fs.existsSync(countFile)) return [];
  return fs
    .readFileSync(countFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Execution);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Visibility is eventually consistent: polls `query` until its count is `expected` (or 30 s pass). */
async function countWhen(query: string, expected: number): Promise<number> {
  let count = -1;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(500)) {
    count = (await client.workflow.count(query)).count;
    if (count === expected) break;
  }
  return count;
}

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      ...Object.fromEntries(labels.map((label) => [`${batch}-${label}`, scenarioFor(label)])),
      // Claude refuses this one's every call (400): the turn fails, and is filtered as failed.
      [`${batch}-${FAILING}`]: { steps: [{ content: [{ type: 'text', text: 'never sent' }] }], faults: [{ step: 0, status: 400, times: -1, message: 'refused on purpose' }] },
    },
  });
  const config = { mcp_servers: { counting: countingStdio(countFile, { heartbeat_timeout_ms: 2000 }) } };
  const env = { TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default' };
  workers.push(...(await Promise.all(Array.from({ length: WORKERS }, () => startWorkerProcess({ config, taskQueue, stubUrl: stub.url, env })))));
  client = await connectClient({}, testSettings());
});

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await client?.connection.close();
  await stub?.close();
});

it(`runs a ${TURNS}-turn batch on ${WORKERS} workers, one SIGKILLed mid-batch: every turn completes exactly once, filtered by its search attributes`, async () => {
  const items: BatchItem[] = [
    ...labels.map((label) => ({ id: label, input: { question: `query ${label}`, model: `${batch}-${label}` } })),
    { id: FAILING, input: { question: 'refused query', model: `${batch}-${FAILING}` } },
  ];
  const outcomes: BatchItemOutcome[] = [];
  const started = Date.now();
  let killed: { pid: number; atMs: number; completedBefore: number } | undefined;
  const victim = workers[0]!;

  const done = runBatch(client, {
    name: batch,
    items,
    concurrency: CONCURRENCY,
    taskQueue,
    onResult: (outcome) => {
      outcomes.push(outcome);
      if (!killed && outcomes.length >= KILL_AFTER) {
        killed = { pid: victim.pid!, atMs: Date.now() - started, completedBefore: outcomes.length };
        victim.kill('SIGKILL');
      }
    },
  });
  // Right after the kill, visibility shows the batch's turns still in flight as running.
  while (!killed) await sleep(200);
  const runningSeen = (await client.workflow.count(`McpTurnsBatch = '${batch}' AND WorkflowType = 'chatTurn' AND McpTurnsStatus = 'running'`)).count;
  const progress = await done;
  const wallMs = Date.now() - started;

  // The victim died by SIGKILL; the other workers ran on to the end.
  expect(victim.signalCode).toBe('SIGKILL');
  expect(workers.slice(1).every((w) => w.exitCode === null && w.signalCode === null)).toBe(true);

  // Every query reported once: each completed with its own answer, the refused one failed.
  expect(outcomes.map((o) => o.id).sort()).toEqual(items.map((i) => i.id).sort());
  expect(progress.completed).toBe(TURNS);
  expect(progress.failed).toBe(1);
  for (const o of outcomes.filter((x) => x.id !== FAILING)) {
    expect([o.id, o.status]).toEqual([o.id, 'completed']);
    expect(JSON.stringify(o.result!.response)).toContain(`answer for ${o.id}: counted ${o.id}`);
    expect(o.result!.toolCalls).toHaveLength(1);
  }
  expect(outcomes.find((o) => o.id === FAILING)!.error).toContain('refused on purpose');

  // Exactly once: one run per turn's workflow id, every one closed Completed.
  const runs = new Map<string, string[]>();
  for await (const wf of client.workflow.list({ query: `McpTurnsBatch = '${batch}' AND WorkflowType = 'chatTurn'` })) {
    runs.set(wf.workflowId, [...(runs.get(wf.workflowId) ?? []), wf.status.name]);
  }
  expect(runs.size).toBe(TURNS + 1);
  const statuses = [...runs.values()];
  expect(statuses.filter((s) => s.length !== 1)).toEqual([]);
  expect(statuses.flat().filter((s) => s === 'COMPLETED')).toHaveLength(TURNS);
  expect(statuses.flat().filter((s) => s === 'FAILED')).toHaveLength(1);

  // Tool executions: every query's tool ran; only calls cut off by the kill ran again.
  const ran = executions();
  const perLabel = new Map<string, number>();
  for (const e of ran) perLabel.set(e.args.label, (perLabel.get(e.args.label) ?? 0) + 1);
  expect([...perLabel.keys()].sort()).toEqual([...labels].sort());
  const repeated = [...perLabel.entries()].filter(([, n]) => n > 1);
  const victimServerRan = ran.filter((e) => e.pid !== undefined && !workersAlivePids().includes(e.pid));
  // All three workers' MCP servers did work; the repeats are calls the victim's server had run.
  expect(new Set(ran.map((e) => e.pid)).size).toBeGreaterThanOrEqual(WORKERS);
  for (const [label] of repeated) expect(ran.some((e) => e.args.label === label && victimServerRan.includes(e))).toBe(true);

  // Search attributes in visibility.
  const q = (filter: string): string => `McpTurnsBatch = '${batch}' AND WorkflowType = 'chatTurn' AND ${filter}`;
  expect(await countWhen(q(`McpTurnsStatus = 'completed'`), TURNS)).toBe(TURNS);
  expect(await countWhen(q(`McpTurnsStatus = 'failed'`), 1)).toBe(1);
  expect(await countWhen(q(`McpTurnsStatus = 'running'`), 0)).toBe(0);
  expect(await countWhen(q(`McpTurnsStopReason = 'completed' AND McpTurnsToolCalls = 1`), TURNS)).toBe(TURNS);
  expect(await countWhen(q(`McpTurnsModel = '${batch}-q7'`), 1)).toBe(1);
  expect(await countWhen(q(`McpTurnsOutputTokens > 0 AND McpTurnsInputTokens > 0`), TURNS)).toBe(TURNS);
  expect(runningSeen).toBeGreaterThan(0);

  const durations = outcomes.flatMap((o) => (o.durationMs !== undefined && o.status === 'completed' ? [o.durationMs] : [])).sort((a, b) => a - b);
  const pct = (p: number): number => durations[Math.min(durations.length - 1, Math.floor((p / 100) * durations.length))]!;
  const figures = {
    address: process.env.TEMPORAL_ADDRESS,
    turns: TURNS + 1,
    completed: progress.completed,
    failed: progress.failed,
    workers: WORKERS,
    concurrency: CONCURRENCY,
    claudeLatencyMs: CLAUDE_LATENCY_MS,
    killed: { signal: 'SIGKILL', ...killed, turnsRunningRightAfter: runningSeen },
    wallSeconds: wallMs / 1000,
    turnsPerSecond: Number(((TURNS + 1) / (wallMs / 1000)).toFixed(2)),
    turnMs: { p50: pct(50), p95: pct(95), max: durations[durations.length - 1] },
    toolExecutions: ran.length,
    toolReExecutions: repeated.length,
    claudeRequests: stub.requests.length,
    toolExecutionsPerWorkerServer: Object.fromEntries([...new Set(ran.map((e) => e.pid))].map((pid) => [pid, ran.filter((e) => e.pid === pid).length])),
  };
  console.log(`cluster figures: ${JSON.stringify(figures, null, 2)}`);
  const artifacts = path.resolve(__dirname, '..', '..', 'test-artifacts');
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(artifacts, 'cluster-figures.json'), `${JSON.stringify(figures, null, 2)}\n`);
});

/** The pids of the counting servers of the workers still alive (their direct children). */
function workersAlivePids(): number[] {
  const alive = workers.filter((w) => w.exitCode === null && w.signalCode === null).map((w) => w.pid!);
  const children: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (alive.includes(ppid)) children.push(Number(entry));
    } catch {
      // the process ended while we read
    }
  }
  return children;
}
