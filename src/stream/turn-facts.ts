/**
 * What a turn's stream is made of: the facts its history records, decoded, in history order, and
 * the stream records of its Claude calls still running (their heartbeat details).
 */
import type { ApprovalDecision, PendingApprovalMemo } from '../core/approvals';
import type { CallToolOutput, PreparedTurn } from '../core/contracts';
import type { StreamRecord } from '../core/stream-record';
import type { ChatTurnResult } from '../core/turn-result';
import type { ChatTurnInput } from '../schemas/turn-input';
import { isClaudeCall } from '../core/activity-types';

/** How a run closed, besides completing. */
export type RunEnd = 'failed' | 'cancelled' | 'terminated' | 'timed_out' | 'continued';

export type TurnFact =
  | { kind: 'started'; input: ChatTurnInput }
  | { kind: 'prepared'; prepared: PreparedTurn }
  | { kind: 'scheduled'; activityId: string; activityType: string; input: unknown; timeMs: number }
  | { kind: 'activity-completed'; activityId: string; result: unknown; timeMs: number }
  | {
      kind: 'activity-ended';
      activityId: string;
      how: 'failed' | 'cancelled' | 'timed_out';
      /** The stream record the call left, when it left one. */
      record?: StreamRecord;
      /** The failure's type (an ApplicationFailure's), when it has one. */
      failureType?: string;
      timeMs: number;
    }
  | {
      /** A tool call that ran as a local activity: history has its result (or failure), not its start. */
      kind: 'local-tool-call';
      toolUseId: string;
      result?: CallToolOutput;
      durationMs: number;
      attempts: number;
    }
  | { kind: 'pending-approvals'; pending: PendingApprovalMemo[] }
  | { kind: 'decision'; decision: ApprovalDecision }
  | { kind: 'completed'; result: ChatTurnResult }
  /** The worker could not run a workflow task (./workflow-task-failure.ts); not an event of the stream. */
  | { kind: 'task-failed'; message: string }
  | { kind: 'closed'; how: RunEnd; message?: string };

/** A turn's facts so far, and the records of its running Claude calls by activity id. */
export interface TurnFacts {
  facts: readonly TurnFact[];
  live: ReadonlyMap<string, StreamRecord>;
}

/** A scheduled activity of the turn that has not ended. */
export interface RunningActivity {
  activityType: string;
  /** A Claude call of a streamed turn: it publishes what it writes in its heartbeats. */
  streams: boolean;
}

/** The turn's activities scheduled and not ended, by activity id. */
export function runningActivities(facts: readonly TurnFact[]): Map<string, RunningActivity> {
  const open = new Map<string, RunningActivity>();
  for (const f of facts) {
    if (f.kind === 'scheduled') {
      const streams = isClaudeCall(f.activityType) && (f.input as { stream?: unknown } | undefined)?.stream !== undefined;
      open.set(f.activityId, { activityType: f.activityType, streams });
    } else if (f.kind === 'activity-completed' || f.kind === 'activity-ended') open.delete(f.activityId);
  }
  return open;
}

/** The activity ids of the turn's Claude calls (loop steps and the formatter) scheduled and not ended. */
export function runningClaudeCalls(facts: readonly TurnFact[]): Set<string> {
  const open = new Set<string>();
  for (const [id, { activityType }] of runningActivities(facts)) if (isClaudeCall(activityType)) open.add(id);
  return open;
}
