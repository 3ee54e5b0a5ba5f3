/**
 * A server's questions to the person during a tool call, in real turns (dev server, real MCP
 * servers of both eras, the stub playing Claude):
 *   - modern era (2026-07-28 `input_required`): the turn waits like an approval, listed with the
 *     server's message and schema; answered, the same call is sent again once with the answer and
 *     the server's requestState exactly as it sent it; declined or timed out, the server is sent a
 *     decline. (Surviving a worker SIGKILL while waiting: input-requests-durability.e2e.test.ts.)
 *   - legacy era (`elicitation/create` inside a live call): asked while the call's activity waits,
 *     answered through the same `decide`, and declined when nobody answers before the call's time
 *     runs out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { Scenario } from '../../src/stub';
import type { ApprovalRecord } from '../../src/core/approvals';
import { startChatTurn } from '../../src/client/chat-turn-client';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { decideUpdate, pendingApprovalsQuery } from '../../src/core/workflow-handlers';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { legacyElicitStdio, modernStdio } from '../support/mcp-servers';

jest.setTimeout(120_000);

const use = (name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, name, input });
const oneCall = (name: string, input: Record<string, unknown>): Scenario => ({
  steps: [{ content: [use(name, input)] }, { content: [{ type: 'text', text: 'done: {{toolResults}}' }] }],
  formatter: { conversation: [{ type: 'text', content: '{{toolResults}}' }] },
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-input-'));
const counts = { bookings: path.join(dir, 'bookings.jsonl'), quick: path.join(dir, 'quick.jsonl'), orders: path.join(dir, 'orders.jsonl') };
const lines = (file: string): Array<Record<string, unknown>> =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

let h: TurnHarness;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: {
      book: oneCall('bookings__book_table', { restaurant: 'Chez Ana' }),
      'book-quick': oneCall('quick__book_table', { restaurant: 'Le Rapide' }),
      confirm: oneCall('orders__confirm_order', { orderId: 'A-17' }),
      calendar: oneCall('bookings__connect_calendar', { account: 'ana@example.com' }),
    },
    servers: {
      bookings: modernStdio(counts.bookings),
      quick: modernStdio(counts.quick, { input_timeout_ms: 1500 }),
      orders: legacyElicitStdio(counts.orders, { timeout_ms: 6000 }),
    },
  });
});
afterAll(async () => {
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(question: string, model: string, servers: string[]): Promise<WorkflowHandle> {
  return startChatTurn(h.client, { question, model, servers }, { taskQueue: h.taskQueue, workflowId: `input-${model}-${Date.now()}` });
}

/** The turn's waiting record of kind `input`, once it waits. */
async function waitingInput(handle: WorkflowHandle): Promise<ApprovalRecord> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const waiting = (await handle.query(pendingApprovalsQuery)).find((r) => r.kind === 'input');
    if (waiting) return waiting;
  }
  throw new Error('the turn never waited for input');
}

const decide = (handle: WorkflowHandle, decision: { approve: boolean; callId: string; input?: Record<string, unknown> }) =>
  handle.executeUpdate(decideUpdate, { args: [{ ...decision, identity: 'alice@test' }] });

describe('modern era: input_required', () => {
  it('waits for the answer, then sends the same call once more with it and the exact requestState', async () => {
    const handle = await start('book a table', 'book', ['bookings']);
    const waiting = await waitingInput(handle);
    expect(waiting).toMatchObject({
      kind: 'input',
      name: 'bookings__book_table',
      round: 1,
      requests: [{ key: 'details', mode: 'form', message: 'How many guests, and when, at Chez Ana?', requestedSchema: { required: ['guests', 'time'] } }],
    });
    expect(waiting.live).toBeUndefined();
    const [answered] = await decide(handle, { approve: true, callId: waiting.callId, input: { guests: 4, time: '19:30' } });
    expect(answered).toMatchObject({ outcome: 'approved', decidedBy: 'alice@test', answer: { guests: 4, time: '19:30' } });

    const result: ChatTurnResult = await handle.result();
    expect(result.stopReason).toBe('completed');
    expect(result.toolCalls.map((c) => [c.tool, c.isError])).toEqual([['book_table', false]]);
    expect(JSON.stringify(result.messages)).toContain('booked Chez Ana for 4 at 19:30');
    const calls = lines(counts.bookings);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ tool: 'book_table', args: { restaurant: 'Chez Ana', asked: true } });
    expect(calls[1]).toMatchObject({ args: { action: 'accept', content: { guests: 4, time: '19:30' }, requestState: (calls[0]!.args as { requestState: string }).requestState } });
    expect(result.approvals).toEqual([expect.objectContaining({ kind: 'input', outcome: 'approved', decidedBy: 'alice@test' })]);
  });

  it('sends a decline when the person declines', async () => {
    fs.rmSync(counts.bookings, { force: true });
    const handle = await start('book a table, then decline', 'book', ['bookings']);
    const waiting = await waitingInput(handle);
    await decide(handle, { approve: false, callId: waiting.callId });
    const result: ChatTurnResult = await handle.result();
    expect(JSON.stringify(result.messages)).toContain('no booking at Chez Ana: the person said decline');
    expect(lines(counts.bookings).map((l) => (l.args as { action?: string }).action)).toEqual([undefined, 'decline']);
  });

  it('declines when nobody answers within the server\'s input_timeout_ms', async () => {
    const handle = await start('book a table, nobody answers', 'book-quick', ['quick']);
    const result: ChatTurnResult = await handle.result();
    expect(JSON.stringify(result.messages)).toContain('no booking at Le Rapide: the person said decline');
    expect(result.approvals).toEqual([expect.objectContaining({ kind: 'input', outcome: 'timed_out' })]);
    expect(lines(counts.quick).map((l) => (l.args as { action?: string }).action)).toEqual([undefined, 'decline']);
  });
});

describe('modern era: a URL to visit', () => {
  it('shows the URL, waits for the person to say done, then sends the call again with accept', async () => {
    fs.rmSync(counts.bookings, { force: true });
    const handle = await start('connect my calendar', 'calendar', ['bookings']);
    const waiting = await waitingInput(handle);
    expect(waiting.requests).toEqual([
      { key: 'authorize', mode: 'url', message: 'Authorize the calendar of ana@example.com', url: 'https://calendar.example.com/authorize?account=ana%40example.com' },
    ]);
    // Done is an approval without values.
    await decide(handle, { approve: true, callId: waiting.callId });
    const result: ChatTurnResult = await handle.result();
    expect(JSON.stringify(result.messages)).toContain('calendar of ana@example.com connected');
    expect(lines(counts.bookings).map((l) => l.args)).toEqual([
      { account: 'ana@example.com', asked: true },
      { account: 'ana@example.com', action: 'accept', requestState: 'calendar:ana@example.com' },
    ]);
  });
});

describe('legacy era: elicitation/create inside a live call', () => {
  it('asks the person while the call waits and gives the server the answer', async () => {
    const handle = await start('confirm the order', 'confirm', ['orders']);
    const waiting = await waitingInput(handle);
    expect(waiting).toMatchObject({ kind: 'input', name: 'orders__confirm_order', live: { askId: expect.any(String) } });
    expect(waiting.requests).toEqual([
      expect.objectContaining({ mode: 'form', message: 'Confirm order A-17?', requestedSchema: expect.objectContaining({ required: ['confirm'] }) }),
    ]);
    await decide(handle, { approve: true, callId: waiting.callId, input: { confirm: true, note: 'leave at door' } });
    const result: ChatTurnResult = await handle.result();
    expect(JSON.stringify(result.messages)).toContain('order A-17: confirmed (leave at door)');
    expect(lines(counts.orders)).toEqual([{ tool: 'confirm_order', orderId: 'A-17', action: 'accept', content: { confirm: true, note: 'leave at door' } }]);
  });

  it('declines when nobody answers before the call would time out', async () => {
    fs.rmSync(counts.orders, { force: true });
    const handle = await start('confirm the order, nobody answers', 'confirm', ['orders']);
    const result: ChatTurnResult = await handle.result();
    expect(JSON.stringify(result.messages)).toContain('order A-17: the person said decline');
    expect(result.approvals).toEqual([expect.objectContaining({ kind: 'input', outcome: 'timed_out' })]);
    expect(lines(counts.orders)).toEqual([{ tool: 'confirm_order', orderId: 'A-17', action: 'decline' }]);
  });
});
