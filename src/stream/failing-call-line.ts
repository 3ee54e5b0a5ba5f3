/**
 * The line for a running activity whose last attempt failed and is retried, read from its
 * workflow's description (a pending activity): "Claude unreachable: connection refused (http://…),
 * attempt 4, next in 8 s".
 */
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { ClaudeFailureType } from '../core/failure-types';
import { oneLine } from '../core/text';
import { claudeToolName } from '../core/tool-naming';
import { ACTIVITY_TYPES, isClaudeCall } from '../core/activity-types';

export type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;


const PENDING_ACTIVITY_STATE = temporal.api.enums.v1.PendingActivityState;

/** Longest reason in a line. */
const REASON_CHARS = 200;

/** An MCP failure's message starts with the call it is about: `server/tool: reason` (src/mcp/pool.ts). */
const TOOL_CALL_PREFIX = /^([^/\s:]+)\/([^:]+): ([\s\S]*)$/;

/**
 * The attempt whose failure `activity` reports. A pending activity's `attempt` is the one it runs
 * or waits to run; its `lastFailure` is the previous attempt's.
 */
export function failedAttemptOf(activity: PendingActivity): number {
  return Math.max(1, (activity.attempt ?? 1) - 1);
}

/** The failure's message, or its first cause's that has one (a wrapper may have none). */
function failureText(failure: temporal.api.failure.v1.IFailure): string {
  let current: temporal.api.failure.v1.IFailure | null | undefined = failure;
  for (let depth = 0; current && depth < 10; depth++, current = current.cause) {
    if (current.message) return current.message;
  }
  return 'no reason given';
}

/** What the line says about the call: who fails and why. */
function whatFails(activity: PendingActivity, failure: temporal.api.failure.v1.IFailure): string {
  const type = activity.activityType?.name ?? 'activity';
  const text = failureText(failure);
  if (isClaudeCall(type)) {
    if (failure.applicationFailureInfo?.type === ClaudeFailureType.Connection) {
      return `Claude unreachable: ${oneLine(text.replace(/^Claude API (connection error: )?/, ''), REASON_CHARS)}`;
    }
    return `Claude call failing: ${oneLine(text.replace(/^Claude API /, ''), REASON_CHARS)}`;
  }
  if (type === ACTIVITY_TYPES.callTool) {
    const call = TOOL_CALL_PREFIX.exec(text);
    return call
      ? `tool ${claudeToolName(call[1]!, call[2]!)} failing: ${oneLine(call[3]!, REASON_CHARS)}`
      : `tool call failing: ${oneLine(text, REASON_CHARS)}`;
  }
  return `${type} failing: ${oneLine(text, REASON_CHARS)}`;
}

/** When the next attempt runs: `next in 8 s`, `retrying now` when it runs (or is due) now, or `paused`. */
function nextAttempt(activity: PendingActivity, now: number): string {
  if (activity.paused) return 'paused';
  const at = activity.nextAttemptScheduleTime ? tsToMs(activity.nextAttemptScheduleTime) : undefined;
  return at !== undefined && at > now ? `next in ${Math.ceil((at - now) / 1000)} s` : 'retrying now';
}

/**
 * The line for a pending activity whose last attempt failed, e.g. `Claude unreachable: connection
 * refused (http://127.0.0.1:8787/v1/messages), attempt 4, next in 8 s`; undefined when none failed.
 */
export function failingCallLine(activity: PendingActivity, now = Date.now()): string | undefined {
  const failure = activity.lastFailure;
  // A call being cancelled is no longer retried: its last failure is news to no one.
  if (!failure || activity.state === PENDING_ACTIVITY_STATE.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED) return undefined;
  return `${whatFails(activity, failure)}, attempt ${failedAttemptOf(activity)}, ${nextAttempt(activity, now)}`;
}

/** A failed attempt of a running activity, and its line. */
export interface FailingAttempt {
  /** `runId/activityId/attempt`: the same failed attempt has the same key however often it is described. */
  key: string;
  line: string;
}

/** The failed attempts `pending` (a run's pending activities, described at `now`) report. */
export function failingAttempts(runId: string, pending: readonly PendingActivity[], now = Date.now()): FailingAttempt[] {
  const attempts: FailingAttempt[] = [];
  for (const activity of pending) {
    const line = failingCallLine(activity, now);
    if (line !== undefined) attempts.push({ key: `${runId}/${activity.activityId}/${failedAttemptOf(activity)}`, line });
  }
  return attempts;
}
