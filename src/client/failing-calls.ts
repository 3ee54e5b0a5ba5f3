/**
 * The activities of a running workflow that are failing and being retried, as lines for progress:
 * "Claude unreachable: connection refused (http://…), attempt 4, next in 8 s". Read from the
 * workflow's description (its pending activities), so it needs no worker and writes nothing.
 */
import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { ClaudeFailureType } from '../core/failure-types';
import { oneLine } from '../core/text';
import { claudeToolName } from '../core/tool-naming';
import { ACTIVITY_TYPES } from '../core/activity-types';

export type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;

/** The activity types of Claude calls (activities/claude.ts) and of MCP tool calls (activities/mcp.ts). */
const CLAUDE_ACTIVITIES: ReadonlySet<string> = new Set([ACTIVITY_TYPES.claude, ACTIVITY_TYPES.formatResponse]);
const TOOL_ACTIVITY = ACTIVITY_TYPES.callTool;

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
  if (CLAUDE_ACTIVITIES.has(type)) {
    if (failure.applicationFailureInfo?.type === ClaudeFailureType.Connection) {
      return `Claude unreachable: ${oneLine(text.replace(/^Claude API (connection error: )?/, ''), REASON_CHARS)}`;
    }
    return `Claude call failing: ${oneLine(text.replace(/^Claude API /, ''), REASON_CHARS)}`;
  }
  if (type === TOOL_ACTIVITY) {
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

/**
 * How often `run` and `chat` ask the turn they follow for its failing calls (a describe each time):
 * half a Claude call's first retry interval (1 s), so each failed attempt is seen before the next.
 */
export const FOLLOWED_TURN_EVERY_MS = 500;

export class FailingCalls {
  /** `runId/activityId/attempt` of every failed attempt reported. */
  private readonly reported = new Set<string>();
  /** When each workflow was last described. */
  private readonly askedAt = new Map<string, number>();

  /** @param everyMs a workflow asked again sooner than this answers no lines without a describe. */
  constructor(
    private readonly client: Client,
    private readonly everyMs = 0,
  ) {}

  /**
   * A line for each failing attempt of `workflowId`'s running activities not reported before (each
   * failed attempt once). Throws what describe throws (e.g. `WorkflowNotFoundError`).
   */
  async lines(workflowId: string): Promise<string[]> {
    const askedAt = this.askedAt.get(workflowId);
    if (askedAt !== undefined && Date.now() - askedAt < this.everyMs) return [];
    this.askedAt.set(workflowId, Date.now());
    const described = await this.client.workflow.getHandle(workflowId).describe();
    const now = Date.now();
    const lines: string[] = [];
    for (const activity of described.raw.pendingActivities ?? []) {
      const key = `${described.runId}/${activity.activityId}/${failedAttemptOf(activity)}`;
      const line = failingCallLine(activity, now);
      if (line === undefined || this.reported.has(key)) continue;
      this.reported.add(key);
      lines.push(line);
    }
    return lines;
  }
}
