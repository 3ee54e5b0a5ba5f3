/**
 * `mcp-turns ls` and `mcp-turns cancel`, run as a user runs them, against worker processes and the
 * stub model; and the failing-call lines of a turn whose worker cannot reach Claude. Visibility is a
 * moment behind the workflows, so what `ls` must show is polled for.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { submitMessage } from '../../src/client/conversation-client';
import { startBatch } from '../../src/client/batch-client';
import { batchChildId } from '../../src/core/batch';
import { conversationTurnId } from '../../src/core/conversation';
import { FailingCalls } from '../../src/client/failing-calls';
import { listWorkflows, type ListedWorkflow, type WorkflowListFilter } from '../../src/client/workflow-list';
import { runCli } from '../support/cli';
import { REFUSING_PORT } from '../support/ports';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(60_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const server = ['--address', address];
const taskQueue = uniqueQueue('cli-commands');
/** Served by a worker whose Claude is a port nobody listens on. */
const unreachableQueue = uniqueQueue('cli-unreachable');
const tag = Date.now().toString(36);
let stub: StubModel;
let workers: ChildProcess[] = [];
let client: Client;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      quick: {
        steps: [{ content: [{ type: 'text', text: 'quick' }] }],
        formatter: { conversation: [{ type: 'text', content: 'quick answer' }] },
      },
      // Streamed a word every 100 ms for a minute: running when it is cancelled, a few seconds after
      // its start (and the stub stops writing when the call is cancelled).
      slow: { streamDelayMs: 100, steps: [{ content: [{ type: 'text', text: 'slowly '.repeat(600) }] }] },
    },
  });
  const closedPort = REFUSING_PORT;
  workers = await Promise.all([
    startWorkerProcess({ config: { mcp_servers: {} }, taskQueue, stubUrl: stub.url }),
    // Its failing attempts are what the test is about: not logged as warnings.
    startWorkerProcess({
      config: { mcp_servers: {} },
      taskQueue: unreachableQueue,
      stubUrl: `http://127.0.0.1:${closedPort}`,
      extraArgs: ['--log-level', 'ERROR'],
    }),
  ]);
  client = await testClient();
});

afterAll(async () => {
  for (const w of workers) w.kill('SIGTERM');
  await client?.connection.close();
  await stub?.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Resolves once visibility lists what `filter` selects and `ready` accepts (the CLI is asked after). */
const listed = (
  what: string,
  filter: WorkflowListFilter,
  ready: (rows: ListedWorkflow[]) => boolean,
): Promise<ListedWorkflow[]> =>
  until(what, async () => {
    const rows = await listWorkflows(client, filter);
    return ready(rows) ? rows : undefined;
  });

async function ls(...args: string[]): Promise<ListedWorkflow[]> {
  const run = await runCli(['ls', '--json', ...args, ...server]);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as ListedWorkflow[];
}

const status = async (id: string): Promise<string> =>
  (await client.workflow.getHandle(id).describe()).status.name;

/** Resolves once workflow `id` runs `n` child turns. */
const runsChildren = (id: string, n: number): Promise<true> =>
  until(`${id} to run ${n} turns`, async () =>
    ((await client.workflow.getHandle(id).describe()).raw.pendingChildren ?? []).length >= n
      ? true
      : undefined,
  );

it('ls lists a finished turn, filtered by batch, status and type, as JSON and as a table', async () => {
  const batch = `ls-${tag}`;
  const turn = await startChatTurn(
    client,
    { question: 'list me please', model: 'quick' },
    { taskQueue, batch, workflowId: `ls-turn-${tag}` },
  );
  await turn.result();

  await listed('the turn listed completed', { batch }, (rows) => rows[0]?.status === 'completed');

  const [completed, running, table, bad] = await Promise.all([
    ls('--batch', batch, '--status', 'completed'),
    ls('--batch', batch, '--status', 'running'),
    runCli(['ls', '--batch', batch, ...server]),
    runCli(['ls', '--status', 'done', ...server]),
  ]);
  expect(completed).toEqual([
    {
      id: turn.workflowId,
      type: 'turn',
      status: 'completed',
      startTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      closeTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      batch,
      summary: 'list me please',
    },
  ]);
  expect(running).toEqual([]);

  expect(table.code).toBe(0);
  const [header, line, ...rest] = table.stdout.trimEnd().split('\n');
  expect(header).toMatch(/^ID +TYPE +STATUS +STARTED \(UTC\) +DURATION +SUMMARY$/);
  expect(line).toMatch(
    new RegExp(
      `^${turn.workflowId} +turn +completed +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +\\d+ s +list me please$`,
    ),
  );
  expect(rest).toEqual([]);

  expect(bad.code).toBe(2);
  expect(bad.stderr.trim()).toBe(
    'mcp-turns: --status must be one of running, waiting_approval, completed, failed, cancelled, terminated, timed_out, got "done"',
  );
});

it('says which Claude call fails and why while it is retried; cancel ends the turn', async () => {
  const turn = await startChatTurn(
    client,
    { question: 'anyone there?' },
    { taskQueue: unreachableQueue, workflowId: `unreachable-${tag}` },
  );
  const calls = new FailingCalls(client);
  const line = await until('a failing-call line', async () => (await calls.lines(turn.workflowId))[0]);
  expect(line).toMatch(
    /^Claude unreachable: connection refused \(http:\/\/127\.0\.0\.1:\d+\/v1\/messages\), attempt \d+, next in \d+ s$/,
  );

  const cancel = await runCli(['cancel', turn.workflowId, ...server]);
  expect(cancel.code).toBe(0);
  expect(cancel.stdout).toMatch(
    new RegExp(`^cancelled turn ${turn.workflowId} \\(was running for \\d+ s\\)\\n$`),
  );
  expect(await status(turn.workflowId)).toBe('CANCELLED');

  const again = await runCli(['cancel', turn.workflowId, ...server]);
  expect(again.code).toBe(0);
  expect(again.stdout).toBe(`turn ${turn.workflowId} had already ended (cancelled): nothing to cancel\n`);
});

it('cancels a conversation and the turn it runs', async () => {
  const id = `conv-cancel-${tag}`;
  await submitMessage(client, id, 'take your time', {
    options: { model: 'slow', stream: true },
    conversation: { taskQueue },
  });
  await runsChildren(id, 1);

  const cancel = await runCli(['cancel', id, ...server]);
  expect(cancel.code).toBe(0);
  const turnId = conversationTurnId(id, 0);
  expect(cancel.stdout.trimEnd().split('\n')).toEqual([
    expect.stringMatching(new RegExp(`^cancelled conversation ${id} \\(was running for \\d+ s\\)$`)),
    expect.stringMatching(new RegExp(`^cancelled turn ${turnId} \\(was running for \\d+ s\\)$`)),
  ]);
  expect([await status(id), await status(turnId)]).toEqual(['CANCELLED', 'CANCELLED']);
});

it('cancels a batch by its name: every shard and the turns they run', async () => {
  const name = `cancel-${tag}`;
  const items = ['a', 'b'].map((id) => ({
    id,
    input: { question: `item ${id}`, model: 'slow', stream: true },
  }));
  // A window over 25 splits the batch in two shards (src/client/batch-client.ts), one turn each.
  const shards = await startBatch(client, { name, items, concurrency: 30, taskQueue });
  expect(shards).toHaveLength(2);
  await Promise.all(shards.map((s) => runsChildren(s.handle.workflowId, 1)));

  const cancel = await runCli(['cancel', name, ...server]);
  expect(cancel.code).toBe(0);
  const [s1, s2] = shards.map((s) => s.handle.workflowId) as [string, string];
  const [a, b] = items.map((i) => batchChildId(name, i.id)) as [string, string];
  expect(cancel.stdout.trimEnd().split('\n')).toEqual([
    expect.stringMatching(new RegExp(`^cancelled batch ${s1} \\(was running for \\d+ s\\)$`)),
    expect.stringMatching(new RegExp(`^cancelled turn ${a} \\(was running for \\d+ s\\)$`)),
    expect.stringMatching(new RegExp(`^cancelled batch ${s2} \\(was running for \\d+ s\\)$`)),
    expect.stringMatching(new RegExp(`^cancelled turn ${b} \\(was running for \\d+ s\\)$`)),
  ]);
  expect(await Promise.all([s1, s2, a, b].map(status))).toEqual([
    'CANCELLED',
    'CANCELLED',
    'CANCELLED',
    'CANCELLED',
  ]);

  await listed(
    'the batch listed cancelled',
    { batch: name },
    (rows) => rows.length === 4 && rows.every((r) => r.status === 'cancelled'),
  );
  // Visibility has them all cancelled now: --type keeps the batch's own workflows, not its turns.
  const shardRow = (id: string) => ({
    id,
    type: 'batch',
    status: 'cancelled',
    startTime: expect.any(String),
    closeTime: expect.any(String),
    batch: name,
    summary: expect.stringMatching(new RegExp(`^batch ${name} \\(shard \\d of 2\\): 1 queries`)),
  });
  const batches = await ls('--batch', name, '--type', 'batch');
  expect(batches.sort((x, y) => x.id.localeCompare(y.id))).toEqual([shardRow(s1), shardRow(s2)]);
});

it('an id or name that names nothing is one line and one exit code (2) in every command', async () => {
  const id = `nothing-${tag}`;
  const runs = await Promise.all([
    runCli(['cancel', id, ...server]),
    runCli(['show', id, ...server]),
    runCli(['watch', id, ...server]),
    runCli(['approve', id, ...server]),
    runCli(['deny', id, 'call-1', ...server]),
  ]);
  expect(runs.map((r) => [r.code, r.stdout, r.stderr])).toEqual([
    [2, '', `mcp-turns: no turn, conversation or batch named ${id} in namespace default\n`],
    [2, '', `mcp-turns: no workflow ${id} in namespace default\n`],
    [2, '', `mcp-turns: no turn, conversation or batch named ${id} in namespace default (no workflow ${id}, batch-${id} or batch-${id}-sI-of-N)\n`],
    [2, '', `mcp-turns: cannot approve: no turn ${id}\n`],
    [2, '', `mcp-turns: cannot deny: no turn ${id}\n`],
  ]);
});
