/**
 * Approvals end to end: a real dev server, the real server-filesystem (its write_file needs approval
 * in the worker's config), the counting server with an injected secret, the real Anthropic SDK to
 * the scripted stub, and the real `mcp-turns` CLI. A waiting write is listed with its arguments as
 * Claude gave them (read from the turn when too large for its memo), approved with the CLI (and at
 * a terminal by `run`), denied with a reason Claude receives with who denied (and `show` prints the
 * decision), or times out; a second decision and
 * an unknown call id are refused; a free call of the same step runs while the other waits; a
 * waiting turn survives a SIGKILLed worker and a restarted dev server, and the decision made after
 * is applied once; cancelling a waiting turn ends it cancelled; no history holds a secret.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { CancelledFailure, Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { ApprovalDecisionError, approveToolCall, denyToolCall, listPendingApprovals, type PendingApproval } from '../../src/client/approvals';
import { cancelTurn, getTurnProgress, startChatTurn } from '../../src/client/chat-turn-client';
import { MEMO_INPUT_BYTES } from '../../src/core/approvals';
import { SA_STATUS } from '../../src/core/search-attributes';
import { oneLine } from '../../src/core/text';
import type { PreparedTurn } from '../../src/core/contracts';
import type { ChatTurnResult } from '../../src/core/turn-result';
import type { Scenario } from '../../src/stub';
import type { ChatTurnInput } from '../../src/schemas/turn-input';
import { BIN, runCli, startCli } from '../support/cli';
import { countingStdio } from '../support/mcp-servers';
import { freePort } from '../support/ports';
import { uniqueQueue } from '../support/temporal';
import { startTurnHarness, TEST_API_KEY, type TurnHarness } from '../support/turn-harness';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(60_000);

const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const INJECTED = 'injected-approval-token-3e9f0c-never-in-history';
const ENV_SECRET = 'approval-env-secret-71b2d4-never-in-history';

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-approvals-')));
const files = path.join(dir, 'files');
fs.mkdirSync(files);
const countFile = path.join(dir, 'count.jsonl');
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
/** Every turn of this file is started in this batch, so listing by batch sees only them. */
const batch = `approvals-e2e-${process.pid}-${Date.now().toString(36)}`;

/** The worker's servers: write_file and edit_file wait for approval; count waits too, with a secret injected. */
const servers = {
  files: { type: 'stdio', command: process.execPath, args: [FILESYSTEM, files], approval: { always: ['write_file', 'edit_*'] } },
  counting: countingStdio(countFile, {
    env: { COUNT_FILE: countFile, SECRET_FOR_SERVER: '${APPROVAL_SECRET}' },
    inject: { access_token: INJECTED },
    approval: { always: ['count'] },
  }),
};

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (id: string, name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name, input });
const target = (name: string) => path.join(files, `${name}.txt`);

/** What `<name>.txt` is written with. */
const contentOf = (name: string) => (name === 'approve' ? `content of ${name} `.repeat(200) : `content of ${name}`);

/** Claude writes `<name>.txt` (call id `toolu_<name>`), then answers with the tool's result. */
function writeScenario(name: string, lastStepLatencyMs = 0): Scenario {
  return {
    steps: [
      { content: [text(`I will write ${name}.txt.`), use(`toolu_${name}`, 'files__write_file', { path: target(name), content: contentOf(name) })] },
      { content: [text('Outcome: {{toolResults}}')], latencyMs: lastStepLatencyMs },
    ],
  };
}

const scenarios: Record<string, Scenario> = {
  // Its arguments (about 4 KB) are too large for the turn's memo: the listing reads them from the turn.
  approve: writeScenario('approve'),
  deny: writeScenario('deny'),
  timeout: writeScenario('timeout'),
  // The turn's last Claude call takes 3 s: the turn is still running when the second decision comes.
  twice: writeScenario('twice', 3000),
  cancel: writeScenario('cancel'),
  prompt: writeScenario('prompt'),
  hint: writeScenario('hint'),
  durable: writeScenario('durable'),
  parallel: {
    steps: [
      {
        content: [
          text('Writing and counting at once.'),
          use('toolu_par_write', 'files__write_file', { path: target('parallel'), content: 'parallel' }),
          use('toolu_par_free', 'counting__slow', { label: 'free', ms: 1 }),
        ],
      },
      { content: [text('Both: {{toolResults}}')] },
    ],
  },
  // Two calls of one step wait at once.
  pair: {
    steps: [
      {
        content: [
          text('Writing two files.'),
          use('toolu_pair_a', 'files__write_file', { path: target('pair-a'), content: 'a' }),
          use('toolu_pair_b', 'files__write_file', { path: target('pair-b'), content: 'b' }),
        ],
      },
      { content: [text('Both: {{toolResults}}')] },
    ],
  },
  secret: {
    steps: [{ content: [text('Counting.'), use('toolu_secret', 'counting__count', { label: 'needs-approval' })] }, { content: [text('Counted: {{toolResults}}')] }],
  },
};

let h: TurnHarness;
/** Every turn this file starts, on the shared dev server: their histories are scanned for secrets. */
const turnIds: string[] = [];

beforeAll(async () => {
  h = await startTurnHarness({ scenarios, servers, env: { APPROVAL_SECRET: ENV_SECRET } });
});
afterAll(async () => {
  await h?.close();
});

/** Starts a turn of scenario `model` on the in-process worker (no formatter: Claude's last text is the answer). */
async function start(model: string, extra: Partial<ChatTurnInput> = {}, client: Client = h.client, taskQueue = h.taskQueue): Promise<WorkflowHandle> {
  const workflowId = `approval-${model}-${Date.now().toString(36)}`;
  turnIds.push(workflowId);
  // server-filesystem lists 14 tools: room for the counting server's too.
  return startChatTurn(client, { question: `${model} please`, model, format: false, maxToolsPerRequest: 32, ...extra }, { taskQueue, workflowId, batch });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The turn's waiting call once visibility lists it (no worker asked); by default among this file's batch. */
function listed(turnId: string, client: Client = h.client, filter: { batch?: string } = { batch }): Promise<PendingApproval> {
  return until(`${turnId} to be listed as waiting`, async () => (await listPendingApprovals(client, filter)).find((p) => p.turnId === turnId));
}

/** The Claude request that carried the step's tool results (the second step of the turn). */
function resultsRequest(question: string) {
  return h.stub.requests.find((r) => r.kind === 'step' && r.step === 1 && JSON.stringify(r.body.messages?.[0]).includes(question));
}

/**
 * The tool calls a history ran, with their attempts: `callTool` activities, and local ones (a batch's
 * turn runs a tool its worker has not seen yet locally), whose marker names the call as `server · tool`.
 */
function toolActivities(history: temporal.api.history.v1.IHistory): Array<{ tool: string; attempts: number }> {
  const events = history.events ?? [];
  return events.flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = JSON.parse(Buffer.from(marker.details!.data!.payloads![0]!.data!).toString()) as { activity_type: string; attempt: number };
      const [, tool] = data.activity_type.split(' · ');
      return tool ? [{ tool, attempts: data.attempt }] : [];
    }
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name !== 'callTool') return [];
    const input = JSON.parse(Buffer.from(a.input!.payloads![0]!.data!).toString()) as { tool: string };
    const attempts = events.filter((s) => s.activityTaskStartedEventAttributes && Number(s.activityTaskStartedEventAttributes.scheduledEventId) === Number(e.eventId)).map((s) => s.activityTaskStartedEventAttributes!.attempt!);
    return [{ tool: input.tool, attempts: Math.max(0, ...attempts) }];
  });
}

/** The tool descriptors the turn's start recorded (its local activity's marker). */
/** The approvals the turn's start recorded (prepareTurn's marker): Claude tool name → approval. */
function recordedApprovals(history: temporal.api.history.v1.IHistory): PreparedTurn['approvals'] | undefined {
  for (const e of history.events ?? []) {
    for (const payloads of Object.values(e.markerRecordedEventAttributes?.details ?? {})) {
      for (const p of payloads.payloads ?? []) {
        try {
          const data = JSON.parse(Buffer.from(p.data!).toString()) as Partial<PreparedTurn> | null;
          if (data?.approvals && data.catalog) return data.approvals;
        } catch {
          // not JSON: not the turn's start
        }
      }
    }
  }
  return undefined;
}

const common = ['--address', address];

it('lists a waiting write_file with its arguments as given, runs it once `mcp-turns approve` approves it, and records who decided', async () => {
  const handle = await start('approve');
  const pending = await listed(handle.workflowId);
  expect(pending).toMatchObject({ callId: 'toolu_approve', name: 'files__write_file', server: 'files', tool: 'write_file', step: 1, text: 'I will write approve.txt.' });
  const input = { path: target('approve'), content: contentOf('approve') };
  expect(JSON.stringify(input).length).toBeGreaterThan(MEMO_INPUT_BYTES);
  expect(pending.input).toEqual(input);
  expect(pending).not.toHaveProperty('inputTruncated');
  // The memo keeps arguments that large shortened; the listing read them from the turn.
  expect((await handle.describe()).memo?.pendingApprovals).toEqual([expect.objectContaining({ inputTruncated: true, inputPreview: expect.stringMatching(/^\{"path":/) })]);
  const json = await runCli(['approvals', '--json', '--batch', batch, ...common]);
  expect(json.code).toBe(0);
  expect((JSON.parse(json.stdout) as PendingApproval[]).find((p) => p.turnId === handle.workflowId)).toMatchObject({ callId: 'toolu_approve', input });
  expect((await getTurnProgress(handle)).toolCalls.map((c) => c.status)).toEqual(['waiting_approval']);
  expect((await handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('waiting_approval');
  expect(fs.existsSync(target('approve'))).toBe(false);

  const table = await runCli(['approvals', '--batch', batch, ...common]);
  expect(table.code).toBe(0);
  expect(table.stdout.split('\n')[0]).toMatch(/^TURN +CALL +TOOL +ARGUMENTS +WAITING SINCE$/);
  const row = table.stdout.split('\n').find((l) => l.startsWith(handle.workflowId))!;
  expect(row).toMatch(/toolu_approve +files__write_file +\{"path":.*approve\.txt.*\d{4}-\d\d-\d\dT.*\(\d+s ago\)$/);

  const approved = await runCli(['approve', handle.workflowId, 'toolu_approve', '--as', 'alice@test', ...common]);
  expect(approved.stderr).toBe('');
  expect(approved.stdout.trim()).toBe(`approved files__write_file (call toolu_approve) of turn ${handle.workflowId} as alice@test`);
  const result = (await handle.result()) as ChatTurnResult;
  expect(fs.readFileSync(target('approve'), 'utf8')).toBe(contentOf('approve'));
  expect(result.response.conversation).toMatch(/Outcome: Successfully wrote to .*approve\.txt/);
  expect(result.approvals).toEqual([
    expect.objectContaining({ callId: 'toolu_approve', outcome: 'approved', decidedBy: 'alice@test', decidedAt: expect.any(String), requestedAt: expect.any(String) }),
  ]);
  expect(result.toolCalls.map((c) => [c.tool, c.isError])).toEqual([['write_file', false]]);
  // The write is timed from the decision: the time the CLI runs above took is the approval's wait.
  const [approval] = result.approvals;
  expect(result.toolCalls[0]!.durationMs).toBeLessThan(Date.parse(approval!.decidedAt!) - Date.parse(approval!.requestedAt));
  // Written once: one callTool activity, one attempt. The turn's start recorded each tool's approval.
  const history = await handle.fetchHistory();
  expect(toolActivities(history)).toEqual([{ tool: 'write_file', attempts: 1 }]);
  const approvals = recordedApprovals(history);
  expect(approvals?.files__write_file).toEqual({});
  expect(approvals).not.toHaveProperty('files__read_text_file');
  expect(approvals?.counting__count).toEqual({});
  expect((await handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('completed');
});

it('denies with a reason that Claude receives as an is_error result naming who denied; nothing is written; `show` prints the decision', async () => {
  const handle = await start('deny');
  // Small arguments: listed from the memo as the object Claude gave.
  expect((await listed(handle.workflowId)).input).toEqual({ path: target('deny'), content: 'content of deny' });
  const denied = await runCli(['deny', handle.workflowId, 'toolu_deny', '--reason', 'not on a Friday', '--as', 'bob@test', ...common]);
  expect(denied.stdout.trim()).toBe(`denied files__write_file (call toolu_deny) of turn ${handle.workflowId} as bob@test`);
  const result = (await handle.result()) as ChatTurnResult;
  expect(fs.existsSync(target('deny'))).toBe(false);
  const request = resultsRequest('deny please')!;
  const toolResult = request.body.messages[2].content[0];
  expect(toolResult).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_deny', is_error: true });
  expect(JSON.stringify(toolResult.content)).toContain('Not run: bob@test denied the call to files__write_file. Reason: not on a Friday');
  expect(result.approvals[0]).toMatchObject({ outcome: 'denied', reason: 'not on a Friday', decidedBy: 'bob@test' });
  expect(result.toolCalls[0]).toMatchObject({ isError: true, error: expect.stringContaining('not on a Friday'), durationMs: 0 });
  expect(toolActivities(await handle.fetchHistory())).toEqual([]);

  const shown = await runCli(['show', handle.workflowId, ...common]);
  expect(shown.code).toBe(0);
  const { requestedAt, decidedAt } = result.approvals[0]!;
  const waited = (Date.parse(decidedAt!) - Date.parse(requestedAt)) / 1000;
  expect(shown.stdout.split('\n')).toContain('Approvals (1):');
  expect(shown.stdout.split('\n')).toContain(
    `  step 1 · files__write_file · denied by bob@test at ${decidedAt} (waited ${Number(waited.toFixed(1))} s) · reason "not on a Friday"`,
  );
});

it('denies a call no one decides within the turn\'s 5 s timeout', async () => {
  const started = Date.now();
  const handle = await start('timeout', { approval: { tools: ['files__write_file'], timeoutMs: 5000 } });
  const result = (await handle.result()) as ChatTurnResult;
  expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
  expect(result.approvals[0]).toMatchObject({ callId: 'toolu_timeout', outcome: 'timed_out', timeoutMs: 5000 });
  expect(result.approvals[0]!.decidedBy).toBeUndefined();
  expect(fs.existsSync(target('timeout'))).toBe(false);
  const toolResult = resultsRequest('timeout please')!.body.messages[2].content[0];
  expect(toolResult).toMatchObject({ is_error: true });
  expect(JSON.stringify(toolResult.content)).toMatch(/needed a person's approval and none came within 5 s/);
});

it('refuses a decision for an unknown call id and a second decision, each with a clear message', async () => {
  const handle = await start('twice');
  await listed(handle.workflowId);
  const unknown = await approveToolCall(h.client, handle.workflowId, 'toolu_nope', { identity: 'carol@test' }).catch((e: unknown) => e);
  expect(unknown).toBeInstanceOf(ApprovalDecisionError);
  expect((unknown as Error).message).toBe('no tool call toolu_nope waits for approval in this turn (waiting: toolu_twice)');

  await approveToolCall(h.client, handle.workflowId, 'toolu_twice', { identity: 'carol@test' });
  // The turn is still running (its next Claude call takes 3 s): the turn itself refuses the second one.
  const again = await denyToolCall(h.client, handle.workflowId, 'toolu_twice', { identity: 'dave@test' }).catch((e: unknown) => e);
  expect(again).toBeInstanceOf(ApprovalDecisionError);
  expect((again as Error).message).toMatch(/^tool call toolu_twice \(files__write_file\) was already decided: approved by carol@test at \d{4}-\d\d-\d\dT[\d:.]+Z$/);
  const result = (await handle.result()) as ChatTurnResult;
  expect(result.approvals).toEqual([expect.objectContaining({ outcome: 'approved', decidedBy: 'carol@test' })]);
  expect(fs.readFileSync(target('twice'), 'utf8')).toBe('content of twice');
  // Once the turn has ended, a decision says so.
  const late = await runCli(['approve', handle.workflowId, ...common]);
  expect(late.stderr.trim()).toBe(`mcp-turns: cannot approve: turn ${handle.workflowId} has ended (completed): nothing waits for approval`);
});

it('runs the free call of a parallel step while the other waits; both results reach Claude in tool_use order, in one message', async () => {
  const handle = await start('parallel');
  await listed(handle.workflowId);
  // The free call has finished while the write still waits for its decision.
  const progress = await until('the free call to finish', async () => {
    const p = await getTurnProgress(handle);
    return p.toolCalls.find((c) => c.id === 'toolu_par_free')?.status === 'ok' ? p : undefined;
  });
  expect(progress.toolCalls.find((c) => c.id === 'toolu_par_write')?.status).toBe('waiting_approval');
  expect(resultsRequest('parallel please')).toBeUndefined(); // Claude has not been answered yet
  await approveToolCall(h.client, handle.workflowId, undefined, { identity: 'erin@test' });
  await handle.result();
  const history = await handle.fetchHistory();
  const events = history.events!;
  const time = (e: temporal.api.history.v1.IHistoryEvent) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
  const freeDone = events.find((e) => e.activityTaskCompletedEventAttributes)!;
  const accepted = events.find((e) => e.workflowExecutionUpdateAcceptedEventAttributes)!;
  expect(Number(freeDone.eventId)).toBeLessThan(Number(accepted.eventId));
  expect(time(freeDone)).toBeLessThanOrEqual(time(accepted));
  const request = resultsRequest('parallel please')!;
  const [assistant, results] = [request.body.messages[1].content, request.body.messages[2].content];
  expect(results.map((b: { type: string; tool_use_id: string }) => [b.type, b.tool_use_id])).toEqual([
    ['tool_result', 'toolu_par_write'],
    ['tool_result', 'toolu_par_free'],
  ]);
  expect(results.map((b: { tool_use_id: string }) => b.tool_use_id)).toEqual(assistant.filter((b: { type: string }) => b.type === 'tool_use').map((b: { id: string }) => b.id));
  expect(JSON.stringify(results)).toMatch(/Successfully wrote to .*parallel\.txt.*slow free done/);
});

it('ends a turn cancelled while it waits, and writes nothing', async () => {
  const handle = await start('cancel');
  await listed(handle.workflowId);
  await cancelTurn(handle);
  const err = await handle.result().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  const described = await handle.describe();
  expect(described.status.name).toBe('CANCELLED');
  expect(described.typedSearchAttributes.get(SA_STATUS)).toBe('cancelled');
  expect(fs.existsSync(target('cancel'))).toBe(false);
  expect((await listPendingApprovals(h.client, { batch })).some((p) => p.turnId === handle.workflowId)).toBe(false);
});

it('`mcp-turns run` asks on a terminal and sends the answer; without one it prints the commands and keeps waiting', async () => {
  // A terminal: `script` gives the CLI a pseudo-terminal; the test types the answer.
  const id = `approval-prompt-${Date.now().toString(36)}`;
  turnIds.push(id);
  const cmd = [process.execPath, BIN, 'run', 'prompt please', '--model', 'prompt', '--no-format', '--id', id, '--as', 'frank@tty', '--task-queue', h.taskQueue, ...common]
    .map((a) => `'${a}'`)
    .join(' ');
  const tty = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  tty.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => tty.once('exit', r));
  await until('the question', async () => (/\? \[y\/N\] /.test(out) ? true : undefined));
  // The arguments as one line of JSON, shortened to 80 characters.
  expect(out).toContain(`run files__write_file ${oneLine(JSON.stringify({ path: target('prompt'), content: 'content of prompt' }), 80)}? [y/N] `);
  tty.stdin.write('y\n');
  expect(await exited).toBe(0);
  tty.stdin.end();
  expect(out).toMatch(/approved files__write_file \(call toolu_prompt\)/);
  expect(out).toMatch(/Outcome: Successfully wrote to/);
  expect(fs.readFileSync(target('prompt'), 'utf8')).toBe('content of prompt');

  // No terminal: the commands to run are printed, the turn keeps waiting, and running the printed
  // approve command ends it.
  const hintId = `approval-hint-${Date.now().toString(36)}`;
  turnIds.push(hintId);
  const run = spawn(process.execPath, [BIN, 'run', 'hint please', '--model', 'hint', '--no-format', '--id', hintId, '--json', '--task-queue', h.taskQueue, ...common], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  run.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  run.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const runExited = new Promise<number | null>((r) => run.once('exit', r));
  const approveLine = await until('the printed commands', async () => /^ {2}approve: mcp-turns (.*)$/m.exec(stderr)?.[1]);
  expect(stderr).toContain(`waiting for approval: files__write_file {"path":"${target('hint')}`);
  expect(approveLine).toBe(`approve ${hintId} toolu_hint --address ${address}`);
  expect(stderr).toContain(`  deny:    mcp-turns deny ${hintId} toolu_hint --address ${address} --reason '…'`);
  // Listed without a batch filter too: the run started it outside any batch.
  expect((await listed(hintId, h.client, {})).callId).toBe('toolu_hint');
  const approved = await runCli([...approveLine.split(' '), '--as', 'grace@test']);
  expect(approved.code).toBe(0);
  expect(await runExited).toBe(0);
  expect(JSON.parse(stdout).approvals[0]).toMatchObject({ outcome: 'approved', decidedBy: 'grace@test' });
  expect(fs.readFileSync(target('hint'), 'utf8')).toBe('content of hint');
});

it('`mcp-turns run` on a terminal asks about a waiting call after the lines that announce it, and prints nothing over an open question', async () => {
  const id = `approval-pair-${Date.now().toString(36)}`;
  turnIds.push(id);
  const cmd = [process.execPath, BIN, 'run', 'pair please', '--model', 'pair', '--no-format', '--id', id, '--as', 'ida@tty', '--task-queue', h.taskQueue, ...common]
    .map((a) => `'${a}'`)
    .join(' ');
  const tty = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let raw = '';
  tty.stdout.on('data', (d: Buffer) => (raw += d.toString()));
  const exited = new Promise<number | null>((r) => tty.once('exit', r));
  // The terminal's text: no cursor moves, one \n a line.
  const cursorMoves = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');
  const screen = () => raw.replace(cursorMoves, '').replace(/\r+\n/g, '\n');
  const question = (name: string) => `run files__write_file ${oneLine(JSON.stringify({ path: target(name), content: name.slice(-1) }), 80)}? [y/N] `;
  const settle = () => new Promise((r) => setTimeout(r, 1500));

  await until('the first question', async () => (screen().includes(question('pair-a')) ? true : undefined));
  await settle();
  // Both calls are announced and said to wait before the first question; nothing is written after it.
  const [before, after] = screen().split(question('pair-a'));
  expect(before!.match(/^→ files · write_file .*$/gm)).toHaveLength(2);
  expect(before!.match(/^⏸ files · write_file waits for approval$/gm)).toHaveLength(2);
  expect(after).toBe('');
  tty.stdin.write('y\n');

  await until('the second question', async () => (screen().includes(question('pair-b')) ? true : undefined));
  await settle();
  expect(screen().endsWith(question('pair-b'))).toBe(true);
  tty.stdin.write('y\n');
  expect(await exited).toBe(0);
  tty.stdin.end();
  // Each question is followed by its answer only; the lines read while it was open come after it.
  const end = screen();
  for (const name of ['pair-a', 'pair-b']) expect(end).toContain(`${question(name)}y\n`);
  expect(end.split(question('pair-b'))[1]).toMatch(/^y\n/);
  expect(end.match(/^▶ files · write_file approved by ida@tty$/gm)).toHaveLength(2);
  expect(end.match(/^✓ files · write_file · \d+ ms$/gm)).toHaveLength(2);
  expect(fs.readFileSync(target('pair-a'), 'utf8')).toBe('a');
  expect(fs.readFileSync(target('pair-b'), 'utf8')).toBe('b');
});

it('applies a decision made after the worker was SIGKILLed and restarted and the dev server restarted while the turn waited, once', async () => {
  // A dev server of this test's own, with a database file, so it can be restarted.
  const port = await freePort();
  const serverArgs = ['server', '--port', String(port), '--ui-port', String(await freePort()), '--db', path.join(dir, 'temporal.db')];
  let server = await startCli(serverArgs, /Temporal Web UI:/);
  const own = `127.0.0.1:${port}`;
  const taskQueue = uniqueQueue('approvals-durable');
  const workerOptions = { config: { mcp_servers: { files: servers.files } }, taskQueue, stubUrl: h.stub.url, env: { TEMPORAL_ADDRESS: own } };
  let worker: ChildProcess = await startWorkerProcess(workerOptions);
  let connection = await Connection.connect({ address: own });
  try {
    const handle = await start('durable', {}, new Client({ connection }), taskQueue);
    turnIds.splice(turnIds.indexOf(handle.workflowId), 1); // its history lives on this test's own dev server
    await listed(handle.workflowId, new Client({ connection }));

    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    worker = await startWorkerProcess(workerOptions);
    await connection.close();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    server = await startCli(serverArgs, /Temporal Web UI:/);
    connection = await Connection.connect({ address: own });
    const client = new Client({ connection });
    // Still listed: the status and the memo are persisted with the turn.
    expect((await listed(handle.workflowId, client)).callId).toBe('toolu_durable');
    expect(fs.existsSync(target('durable'))).toBe(false);

    await approveToolCall(client, handle.workflowId, undefined, { identity: 'heidi@test' });
    const after = client.workflow.getHandle(handle.workflowId);
    const result = (await after.result()) as ChatTurnResult;
    expect(result.approvals).toEqual([expect.objectContaining({ callId: 'toolu_durable', outcome: 'approved', decidedBy: 'heidi@test' })]);
    expect(fs.readFileSync(target('durable'), 'utf8')).toBe('content of durable');
    expect(toolActivities(await after.fetchHistory())).toEqual([{ tool: 'write_file', attempts: 1 }]);
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => (worker.exitCode !== null ? r(null) : worker.once('exit', r)));
    await connection.close();
    server.child.kill('SIGTERM');
    await server.exited;
  }
});

/** Every payload of a history decoded, next to the history itself. */
function decodeAll(history: temporal.api.history.v1.IHistory): string {
  const text = JSON.stringify(history);
  const payloads = [...text.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'));
  return [text, ...payloads].join('\n');
}

it('records approval requests without the injected value or any secret (history scan)', async () => {
  const handle = await start('secret');
  await listed(handle.workflowId);
  await approveToolCall(h.client, handle.workflowId, 'toolu_secret', { identity: 'judy@test' });
  const result = (await handle.result()) as ChatTurnResult;
  expect(result.response.conversation).toContain('counted needs-approval');
  // The call ran with the injected value (the worker merged it in)...
  const ran = fs.readFileSync(countFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { tool: string; args: { label: string } });
  expect(ran.filter((r) => r.tool === 'count').map((r) => r.args.label)).toEqual(['needs-approval']);
  // ...and no history of this file holds it, the server's env secret or the API key.
  for (const id of turnIds) {
    const all = decodeAll(await h.client.workflow.getHandle(id).fetchHistory());
    expect(all).toContain('pendingApprovals'); // the scan sees the approval records
    for (const secret of [INJECTED, ENV_SECRET, TEST_API_KEY]) expect(all).not.toContain(secret);
  }
  const secretHistory = decodeAll(await handle.fetchHistory());
  expect(secretHistory).toContain('"label":"needs-approval"');
  expect(secretHistory).toContain('pendingApprovals');
});
