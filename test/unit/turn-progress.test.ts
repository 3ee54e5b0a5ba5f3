/** A turn's progress, computed from its state (src/core/turn-progress.ts). */
import type { ToolCallRecord } from '../../src/core/turn-result';
import { progressDetails, turnProgress, type TurnProgressState } from '../../src/core/turn-progress';

const call = (id: string, isError = false): ToolCallRecord => ({ id, step: 1, name: 'srv__echo', input: {}, isError, durationMs: 5, attempts: 1 });
const state: TurnProgressState = {
  phase: 'calling-tools',
  step: 1,
  maxSteps: 5,
  toolCalls: [call('ok'), call('failed', true), call('running')],
  running: new Set(['running']),
  approvals: [],
  usage: { inputTokens: 10, outputTokens: 3, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  costUsd: 0.5,
};

it('reports each call as running, ok or error', () => {
  expect(turnProgress(state).toolCalls.map((c) => [c.id, c.status])).toEqual([
    ['ok', 'ok'],
    ['failed', 'error'],
    ['running', 'running'],
  ]);
  expect(turnProgress(state)).toMatchObject({ phase: 'calling-tools', step: 1, costUsd: 0.5, usage: { inputTokens: 10 } });
});

it('reports a call waiting for approval, and lists it in the UI details', () => {
  const waiting: TurnProgressState = {
    ...state,
    toolCalls: [...state.toolCalls, call('w')],
    approvals: [{ callId: 'w', name: 'fs__write_file', server: 'fs', tool: 'write_file', input: { path: '/tmp/x' }, step: 1, text: '', requestedAt: 't' }],
  };
  const progress = turnProgress(waiting);
  expect(progress.toolCalls.find((c) => c.id === 'w')?.status).toBe('waiting_approval');
  expect(progress.pendingApprovals.map((a) => a.callId)).toEqual(['w']);
  expect(progressDetails(waiting)).toContain('**waiting for approval**: `fs__write_file` (call w) {"path":"/tmp/x"}');
});

it('says the phase, step, calls, failures and tokens in one line for the UI', () => {
  expect(progressDetails(state)).toBe('**calling-tools** · step 1/5 · 3 tool call(s), 1 failed · 10 in / 3 out tokens');
});
