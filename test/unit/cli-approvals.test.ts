/**
 * The approvals CLI's pure parts: the visibility query, what the memo keeps of a call's arguments,
 * the table, the decision lines of `show`, and what `run` prints or asks.
 */
import { pendingApprovalsVisibilityQuery, type PendingApproval } from '../../src/client/approvals';
import { MEMO_INPUT_BYTES, pendingApprovalMemo, type ApprovalRecord } from '../../src/core/approvals';
import { approvalLine } from '../../src/cli/approval-lines';
import { approvalHint, approvalQuestion } from '../../src/cli/approval-prompt';
import { approvalsTable, waitedFor } from '../../src/cli/commands/approvals';

const waiting = (turnId: string, callId: string, input: unknown, requestedAt: string, timeoutMs?: number): PendingApproval => ({
  turnId,
  callId,
  name: 'files__write_file',
  server: 'files',
  tool: 'write_file',
  input,
  step: 1,
  text: '',
  requestedAt,
  ...(timeoutMs !== undefined ? { timeoutMs } : {}),
});

it('lists running turns in waiting_approval status with one visibility query, optionally in one batch', () => {
  expect(pendingApprovalsVisibilityQuery()).toBe('McpTurnsStatus = "waiting_approval" AND ExecutionStatus = "Running"');
  expect(pendingApprovalsVisibilityQuery({ batch: 'nightly' })).toBe(
    'McpTurnsStatus = "waiting_approval" AND ExecutionStatus = "Running" AND McpTurnsBatch = "nightly"',
  );
  expect(pendingApprovalsVisibilityQuery({ batch: 'a"b\\c' })).toMatch(/McpTurnsBatch = "a\\"b\\\\c"$/);
});

it('keeps small arguments in the memo as the object Claude gave, and large ones as a shortened line', () => {
  const record: ApprovalRecord = { callId: 'c', name: 'files__write_file', server: 'files', tool: 'write_file', input: { path: '/a' }, step: 1, text: '', requestedAt: 't' };
  expect(pendingApprovalMemo(record)).toEqual({ ...record, input: { path: '/a' } });
  const large = pendingApprovalMemo({ ...record, input: { path: '/a', content: 'é'.repeat(MEMO_INPUT_BYTES / 2) } }); // over the limit in bytes, not in characters
  expect(large).not.toHaveProperty('input');
  expect(large).toMatchObject({ inputTruncated: true, inputPreview: expect.stringMatching(/^\{"path":"\/a","content":"éé+…$/) });
  expect(large.inputPreview).toHaveLength(300);
});

it('says how long a call has waited in the largest sensible unit', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  expect(waitedFor('2026-11-23T11:59:15Z', now)).toBe('45s');
  expect(waitedFor('2026-11-23T11:30:00Z', now)).toBe('30m');
  expect(waitedFor('2026-11-23T07:00:00Z', now)).toBe('5h');
  expect(waitedFor('2026-11-20T12:00:00Z', now)).toBe('3d');
});

it('prints waiting calls as an aligned table with shortened arguments', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  const long = JSON.stringify({ path: '/srv/docs/report.md', content: 'x'.repeat(200) });
  const table = approvalsTable(
    [
      waiting('turn-a', 'toolu_1', { path: '/tmp/a' }, '2026-11-23T11:59:50Z'),
      { ...waiting('turn-long-id', 'toolu_22', undefined, '2026-11-23T11:00:00Z', 3_600_000), inputTruncated: true, inputPreview: long },
    ],
    now,
  ).split('\n');
  expect(table).toHaveLength(3);
  expect(table[0]).toBe('TURN          CALL      TOOL               ARGUMENTS                                                     WAITING SINCE');
  expect(table[1]).toBe('turn-a        toolu_1   files__write_file  {"path":"/tmp/a"}                                             2026-11-23T11:59:50Z (10s ago)');
  expect(table[2]!.startsWith('turn-long-id  toolu_22  files__write_file  {"path":"/srv/docs/report.md","content":"xxxxxxxxxxxxxxxxxx…  ')).toBe(true);
  expect(table[2]).toMatch(/ 2026-11-23T11:00:00Z \(60m ago, denied after 3600s\)$/);
});

it("prints a call's decision: who, when, how long it waited, why; a timeout; a call still waiting", () => {
  const base: ApprovalRecord = { callId: 'c', name: 'files__write_file', server: 'files', tool: 'write_file', input: {}, step: 2, text: '', requestedAt: '2026-11-23T12:00:00.000Z' };
  expect(approvalLine({ ...base, outcome: 'denied', decidedBy: 'alice', decidedAt: '2026-11-23T12:00:07.253Z', reason: 'not "now"' })).toBe(
    'step 2 · files__write_file · denied by alice at 2026-11-23T12:00:07.253Z (waited 7.3 s) · reason "not \\"now\\""',
  );
  expect(approvalLine({ ...base, outcome: 'approved', decidedAt: '2026-11-23T12:04:30.000Z' })).toBe(
    'step 2 · files__write_file · approved by a person at 2026-11-23T12:04:30.000Z (waited 4.5 min)',
  );
  expect(approvalLine({ ...base, outcome: 'timed_out', timeoutMs: 30_000, decidedAt: '2026-11-23T12:00:30.004Z' })).toBe(
    'step 2 · files__write_file · timed out after 30 s at 2026-11-23T12:00:30.004Z, no decision',
  );
  expect(approvalLine({ ...base, timeoutMs: 60_000 }, Date.parse('2026-11-23T12:00:12Z'))).toBe(
    'step 2 · files__write_file · waiting since 2026-11-23T12:00:00.000Z (12 s so far, denied after 1 min)',
  );
});

it('asks about a waiting call with its arguments on one line, and prints the commands when it cannot ask', () => {
  const call = { name: 'files__write_file', input: { path: '/tmp/x', content: 'hi' }, callId: 'toolu_9' };
  expect(approvalQuestion(call)).toBe('run files__write_file {"path":"/tmp/x","content":"hi"}? [y/N] ');
  expect(approvalHint('turn-1', call, ['--address', '127.0.0.1:7233']).split('\n')).toEqual([
    'waiting for approval: files__write_file {"path":"/tmp/x","content":"hi"} (call toolu_9)',
    '  approve: mcp-turns approve turn-1 toolu_9 --address 127.0.0.1:7233',
    "  deny:    mcp-turns deny turn-1 toolu_9 --address 127.0.0.1:7233 --reason '…'",
  ]);
  // A word a shell would split or expand is quoted.
  expect(approvalHint('turn 1', call).split('\n')[1]).toBe("  approve: mcp-turns approve 'turn 1' toolu_9");
});
