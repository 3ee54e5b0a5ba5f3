/**
 * A running turn's progress as its history records it: the same `TurnProgress` the workflow's
 * `progress` query answers, computed from the turn's facts (./turn-facts.ts) and their stream
 * events, so it is known without a worker (none polls, or its workflow task fails).
 */
import { ACTIVITY_TYPES, isClaudeCall } from '../core/activity-types';
import type { ApprovalRecord } from '../core/approvals';
import type { ClaudeCallOutput } from '../core/contracts';
import { WAITING_APPROVAL_STATUS } from '../core/run-status';
import type { TurnProgress } from '../core/turn-result';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../core/usage';
import { runningActivities, type TurnFact } from './turn-facts';
import { projectTurn } from './turn-projection';

type ProgressCall = TurnProgress['toolCalls'][number];

/** The phase the running activities and waiting calls tell. */
function phaseOf(facts: readonly TurnFact[], waiting: number): TurnProgress['phase'] {
  if (!facts.some((f) => f.kind === 'prepared')) return 'listing-tools';
  const running = [...runningActivities(facts).values()].map((a) => a.activityType);
  if (running.includes(ACTIVITY_TYPES.formatResponse)) return 'formatting';
  if (running.some((type) => isClaudeCall(type))) return 'asking-claude';
  if (running.length || waiting) return 'calling-tools';
  return 'asking-claude';
}

/** The usage and cost of the turn's Claude calls that have completed. */
function claudeUsage(facts: readonly TurnFact[]): { usage: TokenUsage; costUsd: number } {
  const claudeCalls = new Set<string>();
  let usage = ZERO_USAGE;
  let costUsd = 0;
  for (const f of facts) {
    if (f.kind === 'scheduled' && isClaudeCall(f.activityType)) claudeCalls.add(f.activityId);
    if (f.kind === 'activity-completed' && claudeCalls.has(f.activityId)) {
      const output = f.result as Partial<ClaudeCallOutput> | undefined;
      if (output?.usage) usage = addUsage(usage, output.usage);
      costUsd += output?.costUsd ?? 0;
    }
  }
  return { usage, costUsd };
}

/** The progress of a turn whose history so far holds `facts`. */
export function recordedProgress(facts: readonly TurnFact[]): TurnProgress {
  let step = 0;
  const calls = new Map<string, ProgressCall>();
  for (const e of projectTurn({ facts, live: new Map() })) {
    if (e.type === 'start-step') step = e.step;
    else if (e.type === 'tool-input-available')
      calls.set(e.toolCallId, { id: e.toolCallId, name: e.toolName, step: e.step, isError: false, durationMs: 0, status: 'running' });
    else if (e.type === 'tool-output-available') {
      const call = calls.get(e.toolCallId);
      if (call) calls.set(e.toolCallId, { ...call, isError: e.isError, durationMs: e.durationMs, status: e.isError ? 'error' : 'ok' });
    }
  }
  const memo = facts.filter((f) => f.kind === 'pending-approvals').pop()?.pending ?? [];
  const pendingApprovals: ApprovalRecord[] = memo.map(({ inputTruncated: _t, inputPreview, ...record }) => ({
    ...record,
    input: record.input ?? inputPreview,
  }));
  for (const a of pendingApprovals) {
    const call = calls.get(a.callId);
    if (call) call.status = WAITING_APPROVAL_STATUS;
  }
  return {
    phase: phaseOf(facts, pendingApprovals.length),
    step,
    toolCalls: [...calls.values()],
    pendingApprovals,
    ...claudeUsage(facts),
  };
}
