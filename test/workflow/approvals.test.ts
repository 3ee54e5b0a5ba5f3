/**
 * The approval rules of a turn (workflows/approvals.ts and the approval path of
 * workflows/tool-round.ts), one test each, against the real workflow on the shared dev server with
 * scripted activities. End to end, with a real MCP server and the CLI: test/integration/approvals.e2e.test.ts.
 */
import { CancelledFailure, WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { denialText, type ApprovalDecision } from '../../src/core/approvals';
import { batchChildId, batchWorkflowId } from '../../src/core/batch';
import type { ContentBlockParam, MessageParam } from '../../src/core/contracts';
import { SA_STATUS } from '../../src/core/search-attributes';
import { batchProgressQuery, decideUpdate, pendingApprovalsQuery, turnProgressQuery } from '../../src/core/workflow-handlers';
import { startBatch } from '../../src/client/batch-client';
import { reply, startScriptedTurns, text, toolUse, type ScriptedTool, type ScriptedTurns, type TurnScript } from '../support/scripted-activities';

jest.setTimeout(30_000);

const write: ScriptedTool = { server: 'fs', name: 'write_file', result: (a) => `wrote ${String(a.path)}`, approval: {} };
const read: ScriptedTool = { server: 'fs', name: 'read_file', result: (a) => `contents of ${String(a.path)}` };
const tools = [write, read];

let turns: ScriptedTurns;
beforeAll(async () => {
  turns = await startScriptedTurns();
});
afterAll(async () => {
  await turns?.close();
});

/** A turn that asks to write once, then answers with the tool results. */
function writeScript(more: Partial<TurnScript> = {}): TurnScript {
  return {
    tools,
    claude: [reply([text('I will write the file.'), toolUse('fs__write_file', { path: '/tmp/a.txt' }, 'call-w')]), reply([text('done')])],
    ...more,
  };
}

async function until<T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const v = await get().catch(() => undefined); // e.g. a batch child not started yet
    if (v !== undefined && ok(v)) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const pending = (h: WorkflowHandle) => until(() => h.query(pendingApprovalsQuery), (p) => p.length > 0, 'a pending approval');
const decide = (h: WorkflowHandle, d: ApprovalDecision) => h.executeUpdate(decideUpdate, { args: [d] });

type ToolResultBlock = Extract<ContentBlockParam, { type: 'tool_result' }>;
function toolResults(message: MessageParam | undefined): ToolResultBlock[] {
  if (!message || typeof message.content === 'string') throw new Error('not a tool-result message');
  return message.content.filter((b): b is ToolResultBlock => b.type === 'tool_result') as ToolResultBlock[];
}
const resultText = (b: ToolResultBlock | undefined) =>
  (Array.isArray(b?.content) ? b.content : []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

it('a call the worker marks for approval waits, listed with what Claude wrote; approved, it runs once, timed from the decision', async () => {
  const t = await turns.start({ question: 'write it' }, writeScript());
  const [waiting] = await pending(t.handle);
  expect(waiting).toMatchObject({ callId: 'call-w', name: 'fs__write_file', server: 'fs', tool: 'write_file', input: { path: '/tmp/a.txt' }, step: 1, text: 'I will write the file.' });
  expect(t.toolCalls).toHaveLength(0);
  expect((await t.handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('waiting_approval');
  // The memo keeps small arguments as the object Claude gave.
  expect((await t.handle.describe()).memo?.pendingApprovals).toEqual([expect.objectContaining({ callId: 'call-w', input: { path: '/tmp/a.txt' } })]);
  const progress = await t.handle.query(turnProgressQuery);
  expect(progress.toolCalls).toEqual([expect.objectContaining({ id: 'call-w', status: 'waiting_approval' })]);

  const thinking = 600; // the person takes their time
  await new Promise((r) => setTimeout(r, thinking));
  const decided = await decide(t.handle, { approve: true, callId: 'call-w', identity: 'alice@test' });
  expect(decided).toEqual([expect.objectContaining({ callId: 'call-w', outcome: 'approved', decidedBy: 'alice@test' })]);
  const result = await t.result();
  expect(t.toolCalls.map((c) => c.tool)).toEqual(['write_file']);
  expect(result.approvals).toEqual([expect.objectContaining({ callId: 'call-w', outcome: 'approved', decidedBy: 'alice@test', decidedAt: expect.any(String) })]);
  expect(result.toolCalls[0]).toMatchObject({ id: 'call-w', isError: false, attempts: 1 });
  // The wait is the approval's (requestedAt to decidedAt); the call's duration counts from the decision.
  const [approval] = result.approvals;
  expect(Date.parse(approval!.decidedAt!) - Date.parse(approval!.requestedAt)).toBeGreaterThanOrEqual(thinking);
  expect(result.toolCalls[0]!.durationMs).toBeLessThan(thinking);
  expect(resultText(toolResults(t.claude[1]!.messages.at(-1))[0])).toBe('wrote /tmp/a.txt');
  expect((await t.handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('completed');
});

it('denied with a reason: not run, and Claude receives an is_error result naming who denied, with the reason', async () => {
  const t = await turns.start({ question: 'write it' }, writeScript());
  await pending(t.handle);
  await decide(t.handle, { approve: false, callId: 'call-w', reason: 'not on Fridays', identity: 'bob' });
  const result = await t.result();
  expect(t.toolCalls).toHaveLength(0);
  const [denied] = toolResults(t.claude[1]!.messages.at(-1));
  expect(denied).toMatchObject({ tool_use_id: 'call-w', is_error: true });
  expect(resultText(denied)).toBe('Not run: bob denied the call to fs__write_file. Reason: not on Fridays');
  expect(result.approvals[0]).toMatchObject({ outcome: 'denied', reason: 'not on Fridays', decidedBy: 'bob' });
  // Nothing ran: no attempts and no duration (the wait is the approval record's).
  expect(result.toolCalls[0]).toMatchObject({ id: 'call-w', isError: true, attempts: 0, durationMs: 0 });
  // A decision that came without an identity was a person's, not necessarily the user's.
  expect(denialText({ name: 'fs__write_file', outcome: 'denied' })).toBe('Not run: a person denied the call to fs__write_file.');
});

it('no decision within the timeout is a denial', async () => {
  const t = await turns.run({ question: 'write it' }, writeScript({ tools: [{ ...write, approval: { timeoutMs: 1000 } }, read] }));
  expect(t.toolCalls).toHaveLength(0);
  expect(t.result.approvals[0]).toMatchObject({ outcome: 'timed_out', timeoutMs: 1000 });
  expect(t.result.approvals[0]).not.toHaveProperty('decidedBy');
  expect(resultText(toolResults(t.claude[1]!.messages.at(-1))[0])).toMatch(/needed a person's approval and none came within 1 s/);
});

it("a turn's input adds requirements for tools the worker lets run, with its own timeout", async () => {
  const t = await turns.run(
    { question: 'read it', approval: { tools: ['fs__read_file'], timeoutMs: 500 } },
    { tools, claude: [reply([toolUse('fs__read_file', { path: '/etc/x' }, 'call-r')]), reply([text('ok')])] },
  );
  expect(t.toolCalls).toHaveLength(0);
  expect(t.result.approvals).toEqual([expect.objectContaining({ callId: 'call-r', outcome: 'timed_out', timeoutMs: 500 })]);
});

it('the free calls of a step run while another waits; the results reach Claude in tool_use order, in one message', async () => {
  const t = await turns.start(
    { question: 'write and read' },
    { tools, claude: [reply([toolUse('fs__write_file', { path: '/tmp/b' }, 'w1'), toolUse('fs__read_file', { path: '/tmp/c' }, 'r1')]), reply([text('both')])] },
  );
  await pending(t.handle);
  await until(async () => t.toolCalls.filter((c) => c.outcome === 'ok').length, (n) => n === 1, 'the free call');
  expect(t.toolCalls.map((c) => c.tool)).toEqual(['read_file']);
  expect(t.claude).toHaveLength(1); // Claude waits for the whole step
  await decide(t.handle, { approve: true, callId: 'w1' });
  await t.result();
  const results = toolResults(t.claude[1]!.messages.at(-1));
  expect(results.map((r) => r.tool_use_id)).toEqual(['w1', 'r1']);
  expect(results.map(resultText)).toEqual(['wrote /tmp/b', 'contents of /tmp/c']);
});

it('refuses a second decision for a call and a decision for an unknown call, with a clear message', async () => {
  const t = await turns.start({ question: 'write it' }, writeScript({ tools: [{ ...write, approval: {} }, read] }));
  await pending(t.handle);
  const unknown = await decide(t.handle, { approve: true, callId: 'nope' }).catch((e: unknown) => e);
  expect(unknown).toBeInstanceOf(WorkflowUpdateFailedError);
  expect((unknown as WorkflowUpdateFailedError).cause?.message).toBe('no tool call nope waits for approval in this turn (waiting: call-w)');
  await decide(t.handle, { approve: false, callId: 'call-w', identity: 'carol' });
  const second = await decide(t.handle, { approve: true, callId: 'call-w', identity: 'dave' }).catch((e: unknown) => e);
  expect((second as WorkflowUpdateFailedError).cause?.message).toMatch(/^tool call call-w \(fs__write_file\) was already decided: denied by carol at /);
  const result = await t.result();
  expect(result.approvals).toHaveLength(1);
  expect(result.approvals[0]).toMatchObject({ outcome: 'denied', decidedBy: 'carol' });
});

it('a decision without a call id decides every call waiting in the turn', async () => {
  const t = await turns.start(
    { question: 'write twice' },
    { tools, claude: [reply([toolUse('fs__write_file', { path: '/1' }, 'a'), toolUse('fs__write_file', { path: '/2' }, 'b')]), reply([text('ok')])] },
  );
  await until(() => t.handle.query(pendingApprovalsQuery), (p) => p.length === 2, 'two pending approvals');
  expect(await decide(t.handle, { approve: true })).toHaveLength(2);
  const result = await t.result();
  expect(result.approvals.map((a) => a.outcome)).toEqual(['approved', 'approved']);
  expect(t.toolCalls).toHaveLength(2);
});

it('cancelling a turn while it waits ends it cancelled', async () => {
  const t = await turns.start({ question: 'write it' }, writeScript());
  await pending(t.handle);
  await t.handle.cancel();
  const err = await t.result().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  expect((await t.handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('cancelled');
  expect(t.toolCalls).toHaveLength(0);
});

it('a batch does not count a waiting turn against its window, and shows it as waiting', async () => {
  const name = `approvals-${Date.now().toString(36)}`;
  turns.expect(batchChildId(name, 'waits'), writeScript());
  turns.expect(batchChildId(name, 'free'), { tools, claude: [reply([text('free answer')])] });
  const items = ['waits', 'free'].map((id) => ({ id, input: { question: `batch ${id}` } }));
  const [shard] = await startBatch(turns.client, { name, items, concurrency: 1, taskQueue: turns.taskQueue });
  const waiting = turns.client.workflow.getHandle(batchChildId(name, 'waits'));
  await pending(waiting);
  const batch = turns.client.workflow.getHandle(batchWorkflowId(name));
  // With a window of one, the second item runs only because the first waits for approval.
  const progress = await until(() => batch.query(batchProgressQuery), (p) => p.completed === 1, 'the free item');
  expect(progress).toMatchObject({ completed: 1, running: ['waits'], waitingApproval: ['waits'] });
  await decide(waiting, { approve: true });
  expect(await shard!.handle.result()).toMatchObject({ completed: 2, failed: 0, waitingApproval: [], running: [] });
});
