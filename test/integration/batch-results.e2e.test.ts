/**
 * A batch's answers and progress read back from Temporal by someone other than the run that
 * started it: the real CLI (`batch results`, `watch <batch>`) and `serve` (`/v1/batches/…`) against
 * batches started with the client API on the harness's workers (the real SDK to the stub Claude, a
 * real MCP server whose get-sum waits for approval). The lines read back are the very lines the run
 * reported (resultLine of each outcome); a running batch gives those ended so far; alice's batch
 * is hers alone over HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import { runBatch, startBatch } from '../../src/client/batch-client';
import { approveToolCall } from '../../src/client/approvals';
import { getBatchStatus } from '../../src/client/batch-status';
import { resultLine, type ResultLine } from '../../src/client/result-line';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { batchChildId, batchShardWorkflowId } from '../../src/core/batch';
import { SA_BATCH } from '../../src/core/search-attributes';
import { tokenCaller } from '../../src/serve/caller';
import { BIN, runCli } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { startServeApp } from '../support/serve-app';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { until } from '../support/until';

jest.setTimeout(120_000);

const RUN = Date.now().toString(36);
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const TOKENS = { alice: `alice-token-${RUN}-0123456789`, bob: `bob-token-${RUN}-0123456789` };

let h: TurnHarness;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: {
      quick: { steps: [{ content: [{ type: 'text', text: 'Quick.' }] }], formatter: { conversation: [{ type: 'text', content: 'A: {{question}}' }] } },
      // Every first Claude call of its turns is refused (400): the turn fails.
      refused: { steps: [{ content: [{ type: 'text', text: 'never' }] }], faults: [{ step: 0, status: 400, times: -1, message: 'refused upstream' }] },
      approve: {
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__get-sum', input: { a: 20, b: 22 } }] },
          { content: [{ type: 'text', text: 'The sum is {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'Sum: {{toolResults}}' }] },
      },
    },
    servers: { everything: everythingStdio({ approval: { always: ['get-sum'] } }) },
  });
});

afterAll(async () => {
  await h?.close();
});

const item = (id: string, model: string) => ({ id, input: { question: `question ${id}`, model } });
const byId = (lines: ResultLine[]): ResultLine[] => [...lines].sort((a, b) => a.id.localeCompare(b.id));
/** A line as it reads back from JSON. */
const asJson = (line: ResultLine): unknown => JSON.parse(JSON.stringify(line));
const parseLines = (text: string): ResultLine[] => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ResultLine);

/** Runs batch `name` to its end with the client API; the lines its run reports. */
async function runToEnd(
  name: string,
  items: Array<ReturnType<typeof item>>,
  opts: { owner?: ReturnType<typeof tokenCaller>['owner']; concurrency?: number } = {},
): Promise<ResultLine[]> {
  const lines: ResultLine[] = [];
  await runBatch(h.client, { name, items, taskQueue: h.taskQueue, ...opts, pollIntervalMs: 100, onResult: (o) => void lines.push(resultLine(o)) });
  return lines;
}

describe('mcp-turns batch results', () => {
  const name = `results-${RUN}`;
  const items = [...['q1', 'q2', 'q3', 'q4', 'q5'].map((id) => item(id, 'quick')), item('q6', 'refused')];

  it('writes the very lines the run reported, on stdout or into --out, with its counts and exit code', async () => {
    // Concurrency 60: three batch workflows of two queries each.
    const reported = await runToEnd(name, items, { concurrency: 60 });
    expect(reported.filter((l) => l.status === 'failed').map((l) => l.id)).toEqual(['q6']);

    // The CLI waits for visibility to list all six itself.
    const cli = await runCli(['batch', 'results', name, '--address', address]);
    expect(cli.stderr).toContain(`batch ${name}: 6 results on stdout: 5 answered, 1 failed`);
    expect(cli.code).toBe(1);
    expect(byId(parseLines(cli.stdout))).toEqual(byId(reported).map(asJson));

    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-results-')), 'out.jsonl');
    const toFile = await runCli(['batch', 'results', name, '--out', out, '--address', address]);
    expect(toFile.stdout).toBe('');
    expect(toFile.stderr.trim()).toBe(`batch ${name}: 6 results in ${out}: 5 answered, 1 failed`);
    expect(byId(parseLines(fs.readFileSync(out, 'utf8')))).toEqual(byId(reported).map(asJson));
  });

  it('reads a batch run again with another concurrency as its latest run: the failed query run again, the rest skipped', async () => {
    // Concurrency 30: two batch workflows beside the three of the first run.
    const reported = await runToEnd(name, items, { concurrency: 30 });
    const status = await getBatchStatus(h.client, name);
    expect(status.shards.map((s) => s.id)).toEqual([batchShardWorkflowId(name, 1, 2), batchShardWorkflowId(name, 2, 2)]);
    expect(status).toMatchObject({ ended: true, progress: { total: 6, completed: 0, failed: 1, skipped: 5 } });
    const cli = await runCli(['batch', 'results', name, '--address', address]);
    expect(cli.code).toBe(1);
    expect(byId(parseLines(cli.stdout))).toEqual(byId(reported).map(asJson));
  });

  it('names a batch that does not exist in one line, exit 2', async () => {
    const cli = await runCli(['batch', 'results', `nothing-${RUN}`, '--address', address]);
    expect(cli.code).toBe(2);
    expect(cli.stderr.trim()).toBe(`mcp-turns: no batch nothing-${RUN}: no workflow batch-nothing-${RUN} (nor batch-nothing-${RUN}-sI-of-N) exists`);
  });
});

describe('a batch still running: one query waits for approval', () => {
  const name = `running-${RUN}`;

  beforeAll(async () => {
    await startBatch(h.client, { name, items: [item('q1', 'quick'), item('q2', 'quick'), item('q3', 'approve')], taskQueue: h.taskQueue });
    // Visibility trails the workflows: wait until it lists the two quick turns as closed.
    const query = `WorkflowType = "chatTurn" AND ${SA_BATCH.name} = "${name}" AND ExecutionStatus != "Running"`;
    await until(async () => (await h.client.workflow.count(query)).count === 2, 'the two quick turns closed in visibility', 30_000);
  });

  it('batch results writes the turns ended so far and says the batch still runs', async () => {
    const cli = await runCli(['batch', 'results', name, '--address', address]);
    expect(cli.code).toBe(0);
    expect(parseLines(cli.stdout).map((l) => [l.id, l.status, l.answer]).sort()).toEqual([
      ['q1', 'completed', 'A: question q1'],
      ['q2', 'completed', 'A: question q2'],
    ]);
    expect(cli.stderr.trim()).toBe(
      `batch ${name}: 2 results on stdout: 2 answered, 0 failed; the batch still runs: 1 of 3 queries not finished (mcp-turns watch ${name} follows it)`,
    );
  });

  /** `watch <batch>` running, once it has said that q3 waits for approval. */
  async function watching(): Promise<{ child: ChildProcess; stderr: () => string; exited: Promise<number | null> }> {
    const child = spawn(process.execPath, [BIN, 'watch', name, '--address', address], { env: process.env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await until(() => stderr.includes(`batch ${name}: 1 turn(s) waiting for approval (q3)`), `watch's approval line; stderr so far:\n${stderr}`, 30_000);
    return { child, stderr: () => stderr, exited };
  }

  it('watch leaves on Ctrl-C, exit 130', async () => {
    const { child, exited } = await watching();
    child.kill('SIGINT');
    expect(await exited).toBe(130);
  });

  it('watch follows it: its progress, the turn waiting for approval, then its counts once approved, exit 0', async () => {
    const { child, stderr: output, exited } = await watching();
    try {
      await approveToolCall(h.client, batchChildId(name, 'q3'), undefined, { identity: 'tester' });
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const stderr = output();
    const lines = stderr.trim().split('\n');
    // Its last progress line counts every query, then its counts from the answers read back.
    expect(lines.filter((l) => l.startsWith(`batch ${name}: 3/3 done · 0 failed · 0 running · `))).toHaveLength(1);
    expect(lines.at(-1)).toBe(`batch ${name} ended: 3 results: 3 answered, 0 failed`);
  });

  it('watch of an id that names nothing says what it looked for, exit 2', async () => {
    const cli = await runCli(['watch', `nothing-${RUN}`, '--address', address]);
    expect(cli.code).toBe(2);
    expect(cli.stderr.trim()).toBe(
      `mcp-turns: no turn, conversation or batch named nothing-${RUN} in namespace default (no workflow nothing-${RUN}, batch-nothing-${RUN} or batch-nothing-${RUN}-sI-of-N)`,
    );
  });
});

describe('serve: /v1/batches/{name}', () => {
  const name = `owned-${RUN}`;
  let app: FastifyInstance;
  let base: string;
  let reported: ResultLine[];

  beforeAll(async () => {
    const settings = resolveServeSettings({ tokens: [{ name: 'alice', token: TOKENS.alice }, { name: 'bob', token: TOKENS.bob }] }, { host: '127.0.0.1', port: 0 }, {});
    ({ app, base } = await startServeApp(h, settings));
    reported = await runToEnd(name, ['q1', 'q2', 'q3'].map((id) => item(id, 'quick')), { owner: tokenCaller('alice', false).owner });
  });

  afterAll(async () => {
    await app?.close();
  });

  const get = (path: string, who?: keyof typeof TOKENS) => fetch(`${base}${path}`, { headers: who ? { authorization: `Bearer ${TOKENS[who]}` } : {} });

  it("streams alice's batch's lines to her as NDJSON: the very lines the run reported", async () => {
    const res = await get(`/v1/batches/${name}/results`, 'alice');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(byId(parseLines(await res.text()))).toEqual(byId(reported).map(asJson));
  });

  it('answers her its progress and that it has ended', async () => {
    const res = await get(`/v1/batches/${name}`, 'alice');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name, ended: true, progress: { total: 3, completed: 3, failed: 0, skipped: 0 }, shards: [{ id: `batch-${name}`, status: 'completed' }] });
  });

  it('is 404 to bob, as a name that names nothing; 401 without a token; 400 for a name no batch can have', async () => {
    for (const path of [`/v1/batches/${name}`, `/v1/batches/${name}/results`]) {
      const res = await get(path, 'bob');
      expect([res.status, await res.json()]).toEqual([404, { error: `no batch ${name}` }]);
      expect((await get(path)).status).toBe(401);
    }
    const nothing = await get(`/v1/batches/nothing-${RUN}/results`, 'bob');
    expect([nothing.status, await nothing.json()]).toEqual([404, { error: `no batch nothing-${RUN}` }]);
    const bad = await get(`/v1/batches/${encodeURIComponent('a b')}`, 'alice');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^params\.name: a batch name/);
  });
});
