/** The approvals CLI's pure parts: the visibility query, the table, and what `run` prints or asks. */
import { pendingApprovalsVisibilityQuery, type PendingApproval } from '../../src/client/approvals';
import { approvalHint, approvalQuestion } from '../../src/cli/approval-prompt';
import { approvalsTable, waitedFor } from '../../src/cli/commands/approvals';

const waiting = (turnId: string, callId: string, input: string, requestedAt: string, timeoutMs?: number): PendingApproval => ({
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

it('lists running turns in waiting-approval status with one visibility query, optionally in one batch', () => {
  expect(pendingApprovalsVisibilityQuery()).toBe('McpTurnsStatus = "waiting-approval" AND ExecutionStatus = "Running"');
  expect(pendingApprovalsVisibilityQuery({ batch: 'nightly' })).toBe(
    'McpTurnsStatus = "waiting-approval" AND ExecutionStatus = "Running" AND McpTurnsBatch = "nightly"',
  );
  expect(pendingApprovalsVisibilityQuery({ batch: 'a"b\\c' })).toMatch(/McpTurnsBatch = "a\\"b\\\\c"$/);
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
    [waiting('turn-a', 'toolu_1', '{"path":"/tmp/a"}', '2026-11-23T11:59:50Z'), waiting('turn-long-id', 'toolu_22', long, '2026-11-23T11:00:00Z', 3_600_000)],
    now,
  ).split('\n');
  expect(table).toHaveLength(3);
  expect(table[0]).toBe('TURN          CALL      TOOL               ARGUMENTS                                                     WAITING SINCE');
  expect(table[1]).toBe('turn-a        toolu_1   files__write_file  {"path":"/tmp/a"}                                             2026-11-23T11:59:50Z (10s ago)');
  expect(table[2]!.startsWith('turn-long-id  toolu_22  files__write_file  {"path":"/srv/docs/report.md","content":"xxxxxxxxxxxxxxxxxx…  ')).toBe(true);
  expect(table[2]).toMatch(/ 2026-11-23T11:00:00Z \(60m ago, denied after 3600s\)$/);
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
