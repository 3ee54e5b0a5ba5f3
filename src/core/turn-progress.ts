/**
 * A turn's live progress, computed from the turn's state whenever it is asked for (the progress
 * query and the UI's current details), so it can never drift from the state.
 */
import type { ApprovalRecord } from './approvals';
import { oneLine } from './text';
import { WAITING_APPROVAL_STATUS } from './run-status';
import type { ToolCallRecord, TurnProgress } from './turn-result';
import type { TokenUsage } from './usage';

/** The turn's state that progress is computed from. */
export interface TurnProgressState {
  phase: TurnProgress['phase'];
  /** Claude calls of the loop so far. */
  step: number;
  maxSteps: number;
  toolCalls: readonly ToolCallRecord[];
  /** Ids of tool calls still in flight. */
  running: ReadonlySet<string>;
  /** Calls that needed approval, decided or still waiting. */
  approvals: readonly ApprovalRecord[];
  usage: TokenUsage;
  costUsd: number;
  /** The Claude call waits for a Message Batch: since when (workflow time), and its collector's workflow id. */
  waitingMessageBatch?: { since: number; collector: string };
}

export function turnProgress(s: TurnProgressState): TurnProgress {
  const waiting = new Set(s.approvals.filter((a) => !a.outcome).map((a) => a.callId));
  return {
    phase: s.phase,
    step: s.step,
    toolCalls: s.toolCalls.map((c) => ({
      id: c.id,
      name: c.name,
      step: c.step,
      isError: c.isError,
      durationMs: c.durationMs,
      status: s.running.has(c.id) ? 'running' : waiting.has(c.id) ? WAITING_APPROVAL_STATUS : c.isError ? 'error' : 'ok',
    })),
    pendingApprovals: s.approvals.filter((a) => !a.outcome),
    usage: s.usage,
    costUsd: s.costUsd,
    ...(s.waitingMessageBatch ? { waitingMessageBatch: s.waitingMessageBatch } : {}),
  };
}

/** One line for the Temporal UI's "current details" of a running turn (markdown). */
export function progressDetails(s: TurnProgressState): string {
  const errors = s.toolCalls.filter((c) => c.isError && !s.running.has(c.id)).length;
  const waiting = s.approvals.filter((a) => !a.outcome);
  return (
    `**${s.phase}** · step ${s.step}/${s.maxSteps} · ${s.toolCalls.length} tool call(s)` +
    (errors ? `, ${errors} failed` : '') +
    ` · ${s.usage.inputTokens} in / ${s.usage.outputTokens} out tokens` +
    (s.waitingMessageBatch ? `\n\n**waiting for a Message Batch** (collector \`${s.waitingMessageBatch.collector}\`)` : '') +
    waiting.map((a) => `\n\n**waiting for approval**: \`${a.name}\` (call ${a.callId}) ${oneLine(JSON.stringify(a.input ?? {}), 200)}`).join('')
  );
}
