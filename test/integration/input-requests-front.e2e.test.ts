/**
 * A server's questions end to end through the front doors: a real dev server, the modern MCP
 * fixture (2026-07-28 only: its `book_table` answers `input_required` with a form {guests: integer
 * 1..20, time: string} and a requestState, and books with the answer it is sent again with; its
 * `echo` waits for approval in the worker's config), the stub Claude behind the real Anthropic SDK,
 * the real `mcp-turns` CLI and `serve`'s app. A call waiting for input is listed (client API and
 * `mcp-turns approvals`, with its message, fields and the respond commands); a bad answer is
 * refused with one line naming the field and nothing is sent; `mcp-turns respond --data` answers
 * and the turn completes with the booking, the retried call carrying the answer and the server's
 * own requestState; `--decline` sends decline, which the server says it got; `serve` lists the wait
 * with its questions, refuses a bad answer with a 400 and applies a good one, for its owner only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { FastifyInstance } from 'fastify';
import { InvalidAnswerError, answerToolCall, listPendingApprovals, type PendingApproval } from '../../src/client/approvals';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { resolveServeSettings } from '../../src/config/serve-settings';
import type { ChatTurnResult } from '../../src/core/turn-result';
import type { Scenario } from '../../src/stub';
import { runCli } from '../support/cli';
import { modernStdio } from '../support/mcp-servers';
import { startServeApp } from '../support/serve-app';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { until } from '../support/until';

jest.setTimeout(120_000);

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-input-front-')));
const countFile = path.join(dir, 'count.jsonl');
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const RUN = `${process.pid}-${Date.now().toString(36)}`;
const common = ['--address', address];
const TOKENS = { alice: `alice-input-token-${RUN}-0123456789`, bob: `bob-input-token-${RUN}-0123456789` };

/** The form book_table asks with (test/support/modern-mcp-server.js). */
const BOOKING_SCHEMA = {
  type: 'object',
  properties: { guests: { type: 'integer', minimum: 1, maximum: 20 }, time: { type: 'string' } },
  required: ['guests', 'time'],
};

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (id: string, name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name, input });

/** Claude books a table at `restaurant` (call `toolu_<name>`), then answers with the tool's result. */
function bookScenario(name: string, restaurant: string): Scenario {
  return {
    perTurn: true,
    steps: [{ content: [text(`Booking ${restaurant}.`), use(`toolu_${name}`, 'modern__book_table', { restaurant })] }, { content: [text('Outcome: {{toolResults}}')] }],
  };
}

const scenarios: Record<string, Scenario> = {
  book: bookScenario('book', 'Chez Anna'),
  decline: bookScenario('decline', 'Le Refus'),
  served: bookScenario('served', 'Servi'),
  // echo waits for approval, not for input.
  echo: { perTurn: true, steps: [{ content: [text('Echoing.'), use('toolu_echo', 'modern__echo', { message: 'hello' })] }, { content: [text('Echoed: {{toolResults}}')] }] },
};

let h: TurnHarness;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  h = await startTurnHarness({ scenarios, servers: { modern: modernStdio(countFile, { approval: { always: ['echo'] } }) } });
  const settings = resolveServeSettings({ tokens: [{ name: 'alice', token: TOKENS.alice }, { name: 'bob', token: TOKENS.bob }] }, { host: '127.0.0.1', port: 0 }, {});
  ({ app, base } = await startServeApp(h, settings));
});
afterAll(async () => {
  await app?.close();
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function start(model: string): Promise<WorkflowHandle> {
  // Not in a batch: a batch's turn runs a tool its worker has not seen yet as a local activity, whose
  // marker does not keep what it was sent; here every call is an activity the history shows whole.
  return startChatTurn(h.client, { question: `${model} please`, model, format: false }, { taskQueue: h.taskQueue, workflowId: `input-front-${model}-${RUN}` });
}

/** The turn's waiting call once visibility lists it. */
async function listed(turnId: string): Promise<PendingApproval> {
  let found: PendingApproval | undefined;
  await until(async () => (found = (await listPendingApprovals(h.client)).find((p) => p.turnId === turnId)) !== undefined, `${turnId} listed as waiting`, 30_000);
  return found!;
}

/** What the fixture recorded of book_table's calls at `restaurant`, in order. */
function bookings(restaurant: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(countFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { tool: string; args: Record<string, unknown> })
    .filter((l) => l.tool === 'book_table' && l.args.restaurant === restaurant)
    .map((l) => l.args);
}

/**
 * The turn's tool calls as its history has them, in order: what each activity was sent (absent for a
 * local one: its marker keeps only its result) and what it answered. The payloads are plain JSON here.
 */
function toolExchanges(history: temporal.api.history.v1.IHistory): Array<{ input?: Record<string, unknown>; result?: Record<string, unknown> }> {
  const events = history.events ?? [];
  const json = (p: temporal.api.common.v1.IPayload | null | undefined): Record<string, unknown> | undefined =>
    p?.data ? (JSON.parse(Buffer.from(p.data).toString()) as Record<string, unknown>) : undefined;
  return events.flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = json(marker.details?.data?.payloads?.[0]) as { activity_type?: string } | undefined;
      if (!data?.activity_type?.includes('book_table')) return [];
      const result = json(marker.details?.result?.payloads?.[0]);
      return [result ? { result } : {}];
    }
    if (e.activityTaskScheduledEventAttributes?.activityType?.name !== 'callTool') return [];
    const done = events.find((c) => Number(c.activityTaskCompletedEventAttributes?.scheduledEventId) === Number(e.eventId));
    const input = json(e.activityTaskScheduledEventAttributes.input?.payloads?.[0]);
    const result = json(done?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]);
    return [{ ...(input ? { input } : {}), ...(result ? { result } : {}) }];
  });
}

/** The tool_result Claude received in the turn's second request. */
function toolResultOf(question: string): { content: unknown; is_error?: boolean } {
  const request = h.stub.requests.find((r) => r.kind === 'step' && r.step === 1 && JSON.stringify(r.body.messages?.[0]).includes(question))!;
  return request.body.messages[2].content[0];
}

it('lists the wait, refuses a bad answer in one line sending nothing, and `respond --data` books with the answer and the same requestState', async () => {
  const handle = await start('book');
  const turnId = handle.workflowId;
  const pending = await listed(turnId);
  expect(pending).toMatchObject({
    kind: 'input',
    round: 1,
    callId: 'toolu_book',
    name: 'modern__book_table',
    server: 'modern',
    tool: 'book_table',
    input: { restaurant: 'Chez Anna' },
    requests: [{ key: 'details', mode: 'form', message: 'How many guests, and when, at Chez Anna?', requestedSchema: BOOKING_SCHEMA }],
  });
  expect(pending).not.toHaveProperty('outcome');
  expect(bookings('Chez Anna')).toEqual([{ restaurant: 'Chez Anna', asked: true, requestState: expect.stringMatching(/^booking:Chez Anna:/) }]);

  // `mcp-turns approvals`: the row, then what the server asks and how to answer.
  const table = await runCli(['approvals', ...common]);
  expect(table.code).toBe(0);
  const lines = table.stdout.split('\n');
  const row = lines.findIndex((l) => l.startsWith(turnId));
  expect(lines[row]).toMatch(/ toolu_book +modern__book_table +\{"restaurant":"Chez Anna"\} +\d{4}-.*\(\d+s ago, declined after 600s\)$/);
  expect(lines.slice(row + 1, row + 7)).toEqual([
    '  kind: input',
    '    How many guests, and when, at Chez Anna?',
    '      guests  integer  required  1..20',
    '      time    string   required',
    `  answer:  mcp-turns respond ${turnId} toolu_book --address ${address} --data '{"guests": …, "time": …}'`,
    `  decline: mcp-turns respond ${turnId} toolu_book --address ${address} --decline`,
  ]);
  const listedJson = JSON.parse((await runCli(['approvals', '--json', ...common])).stdout) as PendingApproval[];
  expect(listedJson.find((p) => p.turnId === turnId)).toMatchObject({ kind: 'input', requests: pending.requests });

  // Bad answers: one line naming the field, from the client API and the CLI; nothing is sent.
  const bad = await answerToolCall(h.client, turnId, 'toolu_book', { guests: 0, time: '19:30' }, { identity: 'alice@test' }).catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(InvalidAnswerError);
  expect((bad as Error).message).toBe('input.guests: must be >= 1');
  const refused = await runCli(['respond', turnId, 'toolu_book', '--data', '{"guests": 25}', '--as', 'alice@test', ...common]);
  expect([refused.code, refused.stdout, refused.stderr]).toEqual([2, '', 'mcp-turns: cannot answer: input.time: is required; input.guests: must be <= 20\n']);
  const notJson = await runCli(['respond', turnId, 'toolu_book', '--data', '{guests: 4}', ...common]);
  expect([notJson.code, notJson.stderr.split('\n').length]).toEqual([2, 2]);
  expect(notJson.stderr).toMatch(/^mcp-turns: --data "\{guests: 4\}": not JSON \(/);
  const done = await runCli(['respond', turnId, 'toolu_book', '--done', ...common]);
  expect([done.code, done.stderr]).toEqual([2, 'mcp-turns: cannot answer: tool call toolu_book (modern__book_table) asks for input: give it, or decline\n']);
  const approved = await runCli(['approve', turnId, ...common]);
  expect([approved.code, approved.stderr]).toEqual([
    1,
    'mcp-turns: cannot approve: tool call toolu_book (modern__book_table) waits for input, not for approval: answer or decline it by its call id first\n',
  ]);
  const history = await handle.fetchHistory();
  expect(history.events!.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toBe(false);
  expect(bookings('Chez Anna')).toHaveLength(1);

  const answered = await runCli(['respond', turnId, 'toolu_book', '--data', '{"guests": 4, "time": "19:30"}', '--as', 'alice@test', ...common]);
  expect([answered.code, answered.stderr, answered.stdout.trim()]).toEqual([0, '', `answered modern__book_table (call toolu_book) of turn ${turnId} as alice@test`]);
  const result = (await handle.result()) as ChatTurnResult;
  expect(result.stopReason).toBe('completed');
  expect(result.response.conversation).toBe('Outcome: booked Chez Anna for 4 at 19:30');
  expect(toolResultOf('book please')).toMatchObject({ tool_use_id: 'toolu_book' });
  expect(JSON.stringify(toolResultOf('book please').content)).toContain('booked Chez Anna for 4 at 19:30');
  expect(result.toolCalls).toEqual([expect.objectContaining({ id: 'toolu_book', isError: false })]);
  expect(result.approvals).toEqual([
    expect.objectContaining({ kind: 'input', round: 1, callId: 'toolu_book', outcome: 'approved', answer: { guests: 4, time: '19:30' }, decidedBy: 'alice@test', decidedAt: expect.any(String) }),
  ]);

  // The retried call carried the answer and the requestState the server gave with its questions.
  const [asked, retried] = toolExchanges(await handle.fetchHistory());
  const requestState = (asked!.result!.inputRequired as { requestState: string }).requestState;
  expect(requestState).toMatch(/^booking:Chez Anna:[a-z0-9]+$/);
  expect(retried!.input).toMatchObject({ tool: 'book_table', requestState, inputResponses: { details: { action: 'accept', content: { guests: 4, time: '19:30' } } } });
  expect(bookings('Chez Anna')).toEqual([
    { restaurant: 'Chez Anna', asked: true, requestState: expect.stringMatching(/^booking:Chez Anna:/) },
    { restaurant: 'Chez Anna', action: 'accept', content: { guests: 4, time: '19:30' }, requestState },
  ]);

  // `show` prints who answered.
  const shown = await runCli(['show', turnId, ...common]);
  expect(shown.stdout).toMatch(/ {2}step 1 · modern__book_table · input · answered by alice@test at \S+ \(waited [\d.]+ (s|min)\)/);
});

it('`respond --decline` sends the server decline, which it says it got; the decline is recorded with who declined', async () => {
  const handle = await start('decline');
  const turnId = handle.workflowId;
  expect(await listed(turnId)).toMatchObject({ kind: 'input', callId: 'toolu_decline' });
  const declined = await runCli(['respond', turnId, 'toolu_decline', '--decline', '--as', 'bob@test', ...common]);
  expect([declined.code, declined.stderr, declined.stdout.trim()]).toEqual([0, '', `declined modern__book_table (call toolu_decline) of turn ${turnId} as bob@test`]);
  const result = (await handle.result()) as ChatTurnResult;
  expect(result.response.conversation).toBe('Outcome: no booking at Le Refus: the person said decline');
  expect(result.approvals).toEqual([expect.objectContaining({ kind: 'input', callId: 'toolu_decline', outcome: 'denied', decidedBy: 'bob@test' })]);
  expect(result.approvals[0]).not.toHaveProperty('answer');
  const [asked, retried] = toolExchanges(await handle.fetchHistory());
  const requestState = (asked!.result!.inputRequired as { requestState: string }).requestState;
  expect(retried!.input).toMatchObject({ requestState, inputResponses: { details: { action: 'decline' } } });
  expect(bookings('Le Refus')).toEqual([
    { restaurant: 'Le Refus', asked: true, requestState: expect.stringMatching(/^booking:Le Refus:/) },
    { restaurant: 'Le Refus', action: 'decline', requestState },
  ]);
});

it('refuses `respond` to a call that waits for approval, in one line with exit code 2', async () => {
  const handle = await start('echo');
  const turnId = handle.workflowId;
  expect(await listed(turnId)).toMatchObject({ callId: 'toolu_echo', name: 'modern__echo' });
  const data = await runCli(['respond', turnId, 'toolu_echo', '--data', '{}', ...common]);
  expect([data.code, data.stderr]).toEqual([2, 'mcp-turns: cannot answer: tool call toolu_echo (modern__echo) waits for approval, not for input: approve or deny it\n']);
  const done = await runCli(['respond', turnId, 'toolu_echo', '--done', ...common]);
  expect(done.code).toBe(2);
  const approved = await runCli(['approve', turnId, 'toolu_echo', '--as', 'carol@test', ...common]);
  expect(approved.stdout.trim()).toBe(`approved modern__echo (call toolu_echo) of turn ${turnId} as carol@test`);
  expect(((await handle.result()) as ChatTurnResult).response.conversation).toBe('Echoed: hello');
});

describe('serve', () => {
  const auth = (who: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[who]}` });
  async function call(who: keyof typeof TOKENS, method: string, route: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { ...auth(who), accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it("lists alice's wait with its questions, refuses a bad answer with a 400 naming the field, applies hers; bob gets 404", async () => {
    const started = await call('alice', 'POST', '/v1/turns', { question: 'served please', model: 'served', format: false, stream: false });
    expect(started.status).toBe(202);
    const turnId = started.body.id as string;
    const route = `/v1/approvals/${turnId}/toolu_served`;

    let row: Record<string, unknown> | undefined;
    await until(
      async () => (row = ((await call('alice', 'GET', '/v1/approvals')).body.approvals as Array<Record<string, unknown>>).find((a) => a.turnId === turnId)) !== undefined,
      "alice's wait listed",
      30_000,
    );
    expect(row).toMatchObject({
      kind: 'input',
      callId: 'toolu_served',
      requests: [{ key: 'details', mode: 'form', message: 'How many guests, and when, at Servi?', requestedSchema: BOOKING_SCHEMA }],
    });
    expect(((await call('bob', 'GET', '/v1/approvals')).body.approvals as Array<{ turnId: string }>).map((a) => a.turnId)).not.toContain(turnId);

    // Ownership first, as for approvals: bob's answer, good or bad, is a 404.
    expect(await call('bob', 'POST', route, { input: { guests: 2, time: '20:00' } })).toEqual({ status: 404, body: { error: `no turn ${turnId}` } });
    expect(await call('bob', 'POST', route, { input: { guests: 0 } })).toEqual({ status: 404, body: { error: `no turn ${turnId}` } });
    // Bad answers: 400, one line.
    expect(await call('alice', 'POST', route, { input: { guests: 25, time: '20:00' } })).toEqual({ status: 400, body: { error: 'input.guests: must be <= 20' } });
    expect(await call('alice', 'POST', route, { approved: true })).toEqual({
      status: 400,
      body: { error: 'tool call toolu_served (modern__book_table) asks for input: give it, or decline' },
    });
    expect(await call('alice', 'POST', route, { approved: false, input: { guests: 2 } })).toEqual({
      status: 400,
      body: { error: 'body: a decline takes no input (send { "approved": false } alone)' },
    });
    expect((await call('alice', 'POST', route, {})).status).toBe(400);
    expect(bookings('Servi')).toHaveLength(1);

    const decided = await call('alice', 'POST', route, { input: { guests: 2, time: '20:00' } });
    expect(decided.status).toBe(200);
    expect(decided.body.decisions).toEqual([
      expect.objectContaining({ kind: 'input', callId: 'toolu_served', outcome: 'approved', answer: { guests: 2, time: '20:00' }, decidedBy: 'alice' }),
    ]);
    const result = (await h.client.workflow.getHandle(turnId).result()) as ChatTurnResult;
    expect(result.response.conversation).toBe('Outcome: booked Servi for 2 at 20:00');
    expect(await call('alice', 'POST', route, { input: { guests: 2, time: '20:00' } })).toMatchObject({ status: 409 });
  });
});
