/**
 * Batch schedules end to end: a separate worker process, the stub Claude, the real CLI and the client
 * API. Schedules run every hour, so none fires by itself during the test: each run is a trigger.
 * Visibility (runs, the schedule list) is polled until it has caught up.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { runCli, type CliRun } from '../support/cli';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';
import { until } from '../support/until';
import {
  createBatchSchedule,
  deleteBatchSchedule,
  describeBatchSchedule,
  listBatchSchedules,
  pauseBatchSchedule,
  triggerBatchSchedule,
} from '../../src/client/batch-schedules';
import { listBatchScheduleRuns, type BatchScheduleRun } from '../../src/client/batch-schedule-runs';
import { BatchScheduleExistsError, BatchScheduleNotFoundError } from '../../src/client/batch-schedule-errors';
import { ownerOf } from '../../src/client/owner';
import { batchChildId } from '../../src/core/batch';
import { SA_OWNER } from '../../src/core/search-attributes';
import type { ChatTurnResult } from '../../src/core/turn-result';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildServeApp } from '../../src/serve/serve-app';
import { resolveServeSettings, type ServeSettings } from '../../src/config/serve-settings';
import { uiBaseUrl } from '../../src/client/ui-link';

jest.setTimeout(120_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-schedules-'));
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const taskQueue = uniqueQueue('schedules');
const tag = Date.now().toString(36);
let stub: StubModel;
let worker: ChildProcess;
let client: Client;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      quick: {
        steps: [{ content: [{ type: 'text', text: 'quick' }] }],
        formatter: { conversation: [{ type: 'text', content: 'quick answer: {{question}}' }] },
      },
      // Two Claude calls of 2.5 s: a run of one query lasts ~5 s, long enough to look at it and trigger another meanwhile.
      slow: {
        latencyMs: 2500,
        steps: [{ content: [{ type: 'text', text: 'slow' }] }],
        formatter: { conversation: [{ type: 'text', content: 'slow answer: {{question}}' }] },
      },
    },
  });
  worker = await startWorkerProcess({ config: {}, taskQueue, stubUrl: stub.url });
  client = await testClient();
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await stub?.close();
  await client?.connection.close();
});

/** `mcp-turns schedule …` against the test server. */
const schedule = (...args: string[]): Promise<CliRun> => runCli(['schedule', ...args, '--address', address]);

function queriesFile(name: string, questions: string[], model = 'quick'): string {
  const file = path.join(dir, `${name}.jsonl`);
  fs.writeFileSync(file, questions.map((q, i) => JSON.stringify({ id: `q${i + 1}`, question: q, model })).join('\n') + '\n');
  return file;
}

/** One line on stderr: the CLI's one-line error. */
function oneErrorLine(run: CliRun): string {
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

it('a triggered run answers every query; `schedule runs` lists it with its batch and counts', async () => {
  const name = `nightly-${tag}`;
  const file = queriesFile(name, ['first question', 'second question']);
  const added = await schedule('add', name, file, '--every', '1h', '--concurrency', '2', '--task-queue', taskQueue);
  expect(added.stderr).toBe('');
  expect(added.code).toBe(0);
  expect(added.stdout).toContain(`schedule ${name}: 2 queries, concurrency 2, every 1h`);
  expect(added.stdout).toContain('overlap skip, catch-up window 1h');

  const triggered = await schedule('trigger', name);
  expect(triggered.code).toBe(0);
  expect(triggered.stdout).toContain(`triggered schedule ${name} (overlap skip)`);

  let runs: BatchScheduleRun[] = [];
  await until(async () => {
    runs = await listBatchScheduleRuns(client, name);
    return runs[0]?.status === 'completed';
  }, 'the triggered run to complete and show in visibility');
  expect(runs).toHaveLength(1);
  const [run] = runs;
  expect(run!.batch).toMatch(new RegExp(`^${name}-\\d{8}T\\d{6}Z$`));
  expect(run!.counts).toEqual({ total: 2, completed: 2, failed: 0, skipped: 0 });

  const listed = await schedule('runs', name, '--json');
  expect(listed.code).toBe(0);
  expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ batch: run!.batch, status: 'completed', counts: run!.counts })]);
  const table = await schedule('runs', name);
  expect(table.stdout).toContain(`${run!.batch}  completed`);
  expect(table.stdout).toContain('2 completed, 0 failed, 0 skipped of 2');

  // The run's turns are the batch's children, with the ids `batch` gives them.
  for (const [id, question] of [['q1', 'first question'], ['q2', 'second question']] as const) {
    const result = (await client.workflow.getHandle(batchChildId(run!.batch, id)).result()) as ChatTurnResult;
    expect(result.response.conversation).toBe(`quick answer: ${question}`);
  }
  // `batch results` writes the run's answers, no file of the schedule's needed.
  const out = path.join(dir, `${name}.results.jsonl`);
  const results = await runCli(['batch', 'results', run!.batch, '--out', out, '--address', address]);
  expect(results.code).toBe(0);
  const lines = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; status: string; answer: string });
  expect(lines.map((l) => [l.id, l.status, l.answer]).sort()).toEqual([
    ['q1', 'completed', 'quick answer: first question'],
    ['q2', 'completed', 'quick answer: second question'],
  ]);
  await deleteBatchSchedule(client, name);
});

it("a trigger while a run still runs is skipped by the schedule's overlap policy", async () => {
  const name = `overlap-${tag}`;
  await createBatchSchedule(client, { name, items: [{ id: 'only', input: { question: 'take your time', model: 'slow' } }], every: '1h', taskQueue });
  await triggerBatchSchedule(client, name);
  await until(async () => (await describeBatchSchedule(client, name)).runningRuns.length === 1, 'the first run to be running');
  // While it runs, its counts come from its shard's progress.
  let running: BatchScheduleRun | undefined;
  await until(async () => {
    [running] = await listBatchScheduleRuns(client, name);
    return running?.status === 'running' && running.counts?.running === 1;
  }, 'the running run to be listed with its counts');
  expect(running!.counts).toEqual({ total: 1, completed: 0, failed: 0, skipped: 0, running: 1 });

  // The CLI's trigger passes the schedule's own policy (skip); Temporal's default for a trigger would allow both.
  const second = await schedule('trigger', name);
  expect(second.code).toBe(0);
  await until(async () => (await describeBatchSchedule(client, name)).skippedOverlap === 1, 'the second trigger to be skipped');
  const view = await describeBatchSchedule(client, name);
  expect(view.recentRuns).toHaveLength(1);
  expect(view.runsStarted).toBe(1);

  let runs: BatchScheduleRun[] = [];
  await until(async () => {
    runs = await listBatchScheduleRuns(client, name);
    return runs[0]?.status === 'completed';
  }, 'the run to complete');
  expect(runs).toHaveLength(1);
  expect(runs[0]!.counts).toEqual({ total: 1, completed: 1, failed: 0, skipped: 0 });
  await deleteBatchSchedule(client, name);
});

it('refuses bad flags, a bad cron expression, a taken name and an unknown schedule with one line, exit code 2', async () => {
  const name = `errors-${tag}`;
  const file = queriesFile(name, ['q']);
  const both = await schedule('add', name, file, '--every', '1h', '--cron', '0 2 * * *');
  expect(both.code).toBe(2);
  expect(oneErrorLine(both)).toBe('mcp-turns: give exactly one of --every <duration> and --cron "<expr>", not both');
  const neither = await schedule('add', name, file);
  expect(neither.code).toBe(2);
  expect(oneErrorLine(neither)).toBe('mcp-turns: give exactly one of --every <duration> and --cron "<expr>"');
  const badEvery = await schedule('add', name, file, '--every', 'soon');
  expect(badEvery.code).toBe(2);
  expect(oneErrorLine(badEvery)).toContain('--every must be a duration such as 90s, 30m, 2h or 24h');
  const badCron = await schedule('add', name, file, '--cron', 'at two', '--task-queue', taskQueue);
  expect(badCron.code).toBe(2);
  expect(oneErrorLine(badCron)).toMatch(/^mcp-turns: --cron "at two" is not a cron expression Temporal reads \(.+\): give 5 fields/);
  const unknown = await schedule('trigger', `nothing-${tag}`);
  expect(unknown.code).toBe(2);
  expect(oneErrorLine(unknown)).toBe(`mcp-turns: no batch schedule named nothing-${tag} (\`mcp-turns schedule ls\` lists them)`);

  expect((await schedule('add', name, file, '--cron', '0 2 * * *', '--task-queue', taskQueue)).code).toBe(0);
  const again = await schedule('add', name, file, '--every', '1h');
  expect(again.code).toBe(2);
  expect(oneErrorLine(again)).toBe(`mcp-turns: schedule ${name} exists already: \`mcp-turns schedule rm ${name}\`, then add it again, replaces it; or give this one another name`);
  await deleteBatchSchedule(client, name);
});

it('pause, resume, ls and rm', async () => {
  const name = `admin-${tag}`;
  const file = queriesFile(name, ['q']);
  expect((await schedule('add', name, file, '--cron', '0 2 * * *', '--task-queue', taskQueue)).code).toBe(0);

  const paused = await schedule('pause', name, '--note', 'holiday');
  expect(paused.code).toBe(0);
  expect(await describeBatchSchedule(client, name)).toMatchObject({ paused: true, note: 'holiday', nextRunTimes: [] });
  await until(async () => (await listBatchSchedules(client)).some((s) => s.name === name && s.paused), 'the list to show it paused');
  const ls = await schedule('ls', '--json');
  expect(ls.code).toBe(0);
  expect(JSON.parse(ls.stdout)).toContainEqual(expect.objectContaining({ name, spec: { cron: '0 2 * * *' }, queries: 1, paused: true, note: 'holiday' }));
  const table = await schedule('ls');
  expect(table.stdout).toMatch(new RegExp(`${name} +cron 0 2 \\* \\* \\* +1 +paused`));

  const resumed = await schedule('resume', name);
  expect(resumed.code).toBe(0);
  expect(resumed.stdout).toMatch(new RegExp(`resumed schedule ${name}: next run \\d{4}-\\d\\d-\\d\\d 02:00:00 UTC`));
  expect((await describeBatchSchedule(client, name)).paused).toBe(false);

  const rm = await schedule('rm', name);
  expect(rm.code).toBe(0);
  await expect(describeBatchSchedule(client, name)).rejects.toThrow(BatchScheduleNotFoundError);
  expect((await schedule('runs', name)).code).toBe(2);
});

it("an owner sees and touches only its own schedules; the runs carry the owner's key", async () => {
  const alice = ownerOf('token:alice', 'alice');
  const bob = ownerOf('token:bob', 'bob');
  const name = `owned-${tag}`;
  await createBatchSchedule(client, { name, items: [{ id: 'a', input: { question: 'mine', model: 'quick' } }], every: '1h', taskQueue, owner: alice });
  await expect(createBatchSchedule(client, { name, items: [{ id: 'b', input: { question: 'yours', model: 'quick' } }], every: '1h', taskQueue, owner: bob })).rejects.toThrow(
    BatchScheduleExistsError,
  );

  for (const call of [
    () => describeBatchSchedule(client, name, { owner: bob }),
    () => triggerBatchSchedule(client, name, { owner: bob }),
    () => pauseBatchSchedule(client, name, { owner: bob }),
    () => listBatchScheduleRuns(client, name, { owner: bob }),
    () => deleteBatchSchedule(client, name, { owner: bob }),
  ]) {
    await expect(call()).rejects.toThrow(BatchScheduleNotFoundError);
  }
  expect((await describeBatchSchedule(client, name, { owner: alice })).owner).toBe('alice');
  await until(async () => (await listBatchSchedules(client, { owner: alice })).some((s) => s.name === name), "alice's list to show it");
  expect((await listBatchSchedules(client, { owner: bob })).map((s) => s.name)).not.toContain(name);

  await triggerBatchSchedule(client, name, { owner: alice });
  let runs: BatchScheduleRun[] = [];
  await until(async () => {
    runs = await listBatchScheduleRuns(client, name, { owner: alice });
    return runs[0]?.status === 'completed';
  }, "alice's run to complete");
  const turn = await client.workflow.getHandle(batchChildId(runs[0]!.batch, 'a')).describe();
  expect(turn.typedSearchAttributes.get(SA_OWNER)).toBe(alice.key);
  expect(turn.memo).toEqual(expect.objectContaining({ owner: 'alice' }));
  await deleteBatchSchedule(client, name, { owner: alice });
});

describe('serve: /v1/schedules', () => {
  const TOKENS = { alice: `alice-schedules-${tag}-0123456789`, bob: `bob-schedules-${tag}-01234567890`, carol: `carol-schedules-${tag}-012345678` };
  let base: string;
  let limitedBase: string;
  const apps: FastifyInstance[] = [];

  async function serveWith(settings: ServeSettings): Promise<string> {
    const app = await buildServeApp({ client, address, namespace: 'default', taskQueue, uiUrl: uiBaseUrl(address), settings, version: 'test', log: () => {} });
    await app.listen({ host: '127.0.0.1', port: 0 });
    apps.push(app);
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    const tokens = [
      { name: 'alice', token: TOKENS.alice },
      { name: 'bob', token: TOKENS.bob },
    ];
    base = await serveWith(resolveServeSettings({ tokens }, { host: '127.0.0.1', port: 0 }, {}));
    limitedBase = await serveWith(resolveServeSettings({ tokens: [{ name: 'carol', token: TOKENS.carol }], limits: { turnsInFlight: 5 } }, { host: '127.0.0.1', port: 0 }, {}));
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  const call = (method: string, path: string, who?: keyof typeof TOKENS, body?: unknown, at = base): Promise<Response> =>
    fetch(`${at}${path}`, {
      method,
      headers: { ...(who ? { authorization: `Bearer ${TOKENS[who]}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  it("alice creates, triggers and reads her schedule and its run's results; bob sees none of it", async () => {
    const name = `served-${tag}`;
    const created = await call('POST', '/v1/schedules', 'alice', { name, queries: [{ id: 'a', question: 'served question' }], defaults: { model: 'quick' }, every: '1h' });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ name, queries: 1, overlap: 'skip', catchupWindowMs: 3_600_000, owner: 'alice', links: { self: `/v1/schedules/${name}` } });

    expect((await call('GET', `/v1/schedules/${name}`, 'bob')).status).toBe(404);
    expect((await call('POST', `/v1/schedules/${name}/trigger`, 'bob')).status).toBe(404);
    expect((await call('DELETE', `/v1/schedules/${name}`, 'bob')).status).toBe(404);
    expect((await call('GET', `/v1/schedules/${name}`)).status).toBe(401);

    expect((await call('POST', `/v1/schedules/${name}/trigger`, 'alice')).status).toBe(202);
    let runs: Array<{ batch: string; status: string; counts?: unknown; links: { results: string } }> = [];
    await until(async () => {
      runs = ((await (await call('GET', `/v1/schedules/${name}/runs`, 'alice')).json()) as { runs: typeof runs }).runs;
      return runs[0]?.status === 'completed';
    }, "the served schedule's run to complete");
    expect(runs[0]!.counts).toEqual({ total: 1, completed: 1, failed: 0, skipped: 0 });
    const results = await call('GET', runs[0]!.links.results, 'alice');
    expect(results.status).toBe(200);
    const lines = (await results.text()).trim().split('\n').map((l) => JSON.parse(l) as { id: string; answer: string });
    expect(lines.map((l) => [l.id, l.answer])).toEqual([['a', 'quick answer: served question']]);
    expect((await call('GET', runs[0]!.links.results, 'bob')).status).toBe(404);

    const listed = (await (await call('GET', '/v1/schedules', 'bob')).json()) as { schedules: Array<{ name: string }> };
    expect(listed.schedules.map((s) => s.name)).not.toContain(name);
    expect((await call('DELETE', `/v1/schedules/${name}`, 'alice')).status).toBe(200);
    expect((await call('GET', `/v1/schedules/${name}`, 'alice')).status).toBe(404);
  });

  it('refuses a bad schedule with one line naming the field, and a caller with limits (403)', async () => {
    const both = await call('POST', '/v1/schedules', 'alice', { name: `bad-${tag}`, queries: [{ question: 'q', model: 'quick' }], every: '1h', cron: '0 2 * * *' });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { error: string }).error).toMatch(/^body\.(every|cron)/);
    const noQuestion = await call('POST', '/v1/schedules', 'alice', { name: `bad-${tag}`, queries: [{ model: 'quick' }], every: '1h' });
    expect(noQuestion.status).toBe(400);
    expect(((await noQuestion.json()) as { error: string }).error).toMatch(/^body\.queries\[0\]: question/);
    const badCron = await call('POST', '/v1/schedules', 'alice', { name: `bad-${tag}`, queries: [{ question: 'q', model: 'quick' }], cron: 'every day' });
    expect(badCron.status).toBe(400);
    expect(((await badCron.json()) as { error: string }).error).toMatch(/^body\.cron: "every day" is not a cron expression Temporal reads/);
    const limited = await call('POST', '/v1/schedules', 'carol', { name: `limited-${tag}`, queries: [{ question: 'q', model: 'quick' }], every: '1h' }, limitedBase);
    expect(limited.status).toBe(403);
    expect(((await limited.json()) as { error: string }).error).toContain('per-caller limits');
  });
});
