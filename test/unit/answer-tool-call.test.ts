/**
 * `answerToolCall` against a stand-in Temporal client: the waiting record is read from the turn's
 * memo (its questions, when the memo shortened them, from the turn's query), the answer checked
 * against the server's schema, and only a good answer is sent as the turn's `decide` update, with
 * who answered. A call the memo does not list as waiting is left to the turn's own refusal.
 */
import { TypedSearchAttributes } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { InvalidAnswerError, answerToolCall, approveToolCall, denyToolCall } from '../../src/client/approvals';
import { PENDING_APPROVALS_MEMO, pendingApprovalMemo, type ApprovalDecision, type ApprovalRecord } from '../../src/core/approvals';
import type { InputRequest } from '../../src/core/input-requests';

const seating: InputRequest = {
  key: 'details',
  mode: 'form',
  message: 'Where would you like to sit?',
  requestedSchema: {
    type: 'object',
    properties: { seating: { type: 'string', enum: ['inside', 'terrace', ...Array.from({ length: 3000 }, (_, i) => `table-${i}`)] } },
    required: ['seating'],
  },
};

const record = (callId: string, extra: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
  kind: 'input',
  round: 1,
  requests: [seating],
  callId,
  name: 'modern__book_table',
  server: 'modern',
  tool: 'book_table',
  input: { restaurant: 'Chez Anna' },
  step: 1,
  text: '',
  requestedAt: '2026-11-23T12:00:00.000Z',
  ...extra,
});

/** A client whose one turn waits with `waiting`; it records the updates and queries it is sent. */
function clientOf(waiting: ApprovalRecord[]) {
  const sent: ApprovalDecision[] = [];
  let queries = 0;
  const handle = {
    describe: async () => ({
      type: 'chatTurn',
      status: { name: 'RUNNING' },
      startTime: new Date(),
      typedSearchAttributes: new TypedSearchAttributes(),
      memo: { [PENDING_APPROVALS_MEMO]: waiting.map(pendingApprovalMemo) },
    }),
    query: async () => {
      queries++;
      return waiting;
    },
    executeUpdate: async (_update: unknown, { args: [decision] }: { args: [ApprovalDecision] }) => {
      sent.push(decision);
      return [{ ...waiting.find((r) => r.callId === decision.callId), outcome: decision.approve ? 'approved' : 'denied', answer: decision.input, decidedBy: decision.identity }];
    },
  };
  const client = { workflow: { getHandle: () => handle }, withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() } as unknown as Client;
  return { client, sent, queries: () => queries };
}

it('sends a good answer with who gave it, and sends nothing for a bad one', async () => {
  const { client, sent } = clientOf([record('toolu_1', { requests: [{ ...seating, requestedSchema: { type: 'object', properties: { guests: { type: 'integer', minimum: 1 } }, required: ['guests'] } }] })]);
  const bad = await answerToolCall(client, 'turn-1', 'toolu_1', { guests: 0 }, { identity: 'alice' }).catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(InvalidAnswerError);
  expect(bad).toMatchObject({ message: 'input.guests: must be >= 1', turnId: 'turn-1' });
  expect(sent).toEqual([]);
  const decided = await answerToolCall(client, 'turn-1', 'toolu_1', { guests: 3 }, { identity: 'alice', reason: 'for the team' });
  expect(sent).toEqual([{ approve: true, callId: 'toolu_1', input: { guests: 3 }, identity: 'alice', reason: 'for the team', round: 1 }]);
  expect(decided[0]).toMatchObject({ outcome: 'approved', answer: { guests: 3 }, decidedBy: 'alice' });
});

it("checks against the whole schema from the turn's query when the memo shortened the questions", async () => {
  const { client, sent, queries } = clientOf([record('toolu_big')]);
  // The memo kept the field, not its 3002 choices: only the turn's own record refuses "roof".
  expect(pendingApprovalMemo(record('toolu_big')).requestsTruncated).toBe(true);
  const bad = await answerToolCall(client, 'turn-1', 'toolu_big', { seating: 'roof' }, { identity: 'alice' }).catch((e: Error) => e);
  expect((bad as Error).message).toMatch(/^input\.seating: must be one of "inside", "terrace", "table-0", .*…$/);
  expect(queries()).toBe(1);
  await answerToolCall(client, 'turn-1', 'toolu_big', { seating: 'terrace' }, { identity: 'alice' });
  expect(sent).toHaveLength(1);
});

it('refuses an answer, or done, to a call that waits for approval, and an approval of a form that asks for values', async () => {
  const approval = record('toolu_write', { kind: undefined, requests: undefined, round: undefined, name: 'files__write_file' });
  const { client, sent } = clientOf([approval, record('toolu_form')]);
  for (const input of [{ x: 1 }, undefined]) {
    await expect(answerToolCall(client, 'turn-1', 'toolu_write', input, { identity: 'alice' })).rejects.toThrow(
      new InvalidAnswerError('tool call toolu_write (files__write_file) waits for approval, not for input: approve or deny it', 'turn-1'),
    );
  }
  await expect(approveToolCall(client, 'turn-1', 'toolu_form', { identity: 'alice' })).rejects.toThrow('tool call toolu_form (modern__book_table) asks for input: give it, or decline');
  expect(sent).toEqual([]);
  // Approving and denying an approval, and declining a form, go to the turn as they are.
  await approveToolCall(client, 'turn-1', 'toolu_write', { identity: 'alice' });
  await denyToolCall(client, 'turn-1', 'toolu_form', { identity: 'alice' });
  expect(sent.map((d) => [d.callId, d.approve])).toEqual([
    ['toolu_write', true],
    ['toolu_form', false],
  ]);
});

it('says done to a URL question without input, and leaves a call the memo does not list to the turn', async () => {
  const { client, sent } = clientOf([record('toolu_url', { requests: [{ key: 'login', mode: 'url', message: 'Sign in', url: 'https://id.example/x' }] })]);
  await answerToolCall(client, 'turn-1', 'toolu_url', undefined, { identity: 'alice' });
  await answerToolCall(client, 'turn-1', 'toolu_gone', { anything: true }, { identity: 'alice' });
  expect(sent).toEqual([
    { approve: true, callId: 'toolu_url', identity: 'alice', round: 1 },
    { approve: true, callId: 'toolu_gone', input: { anything: true }, identity: 'alice' },
  ]);
});
