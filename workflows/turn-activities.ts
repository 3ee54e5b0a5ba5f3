/**
 * The activities a turn schedules, typed from their implementations (type-only imports, so the
 * sandbox loads none of them): renaming an implementation without its use here fails to compile.
 * One set of options per kind of call.
 */
import { ActivityCancellationType, proxyActivities, proxyLocalActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { ClaudeActivities } from '../activities/claude';
import type { ToolCallActivities } from '../activities/tool-calls';
import type { TurnStartActivities } from '../activities/turn-start';
import type { ServerCallPolicy } from '../src/core/contracts';
import { claudeCallQueue } from '../src/core/task-queues';
import { toolCallName } from '../src/core/tool-call-activity';
import { CLAUDE_CALL_RETRY, TURN_START_RETRY } from '../src/core/retry-policies';

/**
 * Claude calls (the loop's and the formatter's): retried by Temporal alone (the SDK makes no
 * retries of its own), on the queue src/core/task-queues.ts names. The activity
 * heartbeats while it waits, so a dead worker is noticed within the heartbeat timeout. A streamed
 * call is waited for when its turn is cancelled: it ends with what it streamed in its details
 * (activities/stream-publishing.ts), which history then keeps before the turn's end.
 */
export function claudeActivities(summary: string, { streamed, claudeOnTurnQueue }: { streamed: boolean; claudeOnTurnQueue: boolean }): ClaudeActivities {
  return proxyActivities<ClaudeActivities>({
    summary,
    ...(streamed ? { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED } : {}),
    taskQueue: claudeCallQueue(workflowInfo().taskQueue, { onTurnQueue: claudeOnTurnQueue, streamed, fair: workflowInfo().priority?.fairnessKey !== undefined }),
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '10 seconds',
    retry: CLAUDE_CALL_RETRY,
  });
}

/**
 * A tool's calls, scheduled by the policy its server's listing recorded. A local one (a tool the
 * worker saw answer quickly: src/mcp/tool-speed.ts) runs in this worker within the workflow task
 * that scheduled it: a round costs one workflow task, not two, and history records only its
 * result. A batch's turn (`inBatch`) also runs a tool not yet seen by the worker locally. One that
 * runs longer than the workflow task timeout keeps the task alive by heartbeating it; a retry whose
 * backoff exceeds a minute waits on a timer.
 */
export function toolCallActivity(policy: ServerCallPolicy, server: string, tool: string, { inBatch }: { inBatch: boolean }): ToolCallActivities['callTool'] {
  const name = toolCallName(server, tool);
  const retry = {
    maximumAttempts: policy.retry.maximumAttempts,
    initialInterval: policy.retry.initialIntervalMs,
    backoffCoefficient: policy.retry.backoffCoefficient,
    maximumInterval: policy.retry.maximumIntervalMs,
  };
  if (policy.localTools.includes(tool) || (inBatch && policy.unseenTools?.includes(tool))) {
    // Named as the call: the UI shows a local activity by its type (src/core/tool-call-activity.ts).
    return proxyLocalActivities<Record<string, ToolCallActivities['callTool']>>({ summary: name, startToCloseTimeout: policy.startToCloseTimeoutMs, retry })[name]!;
  }
  return proxyActivities<ToolCallActivities>({ summary: name, startToCloseTimeout: policy.startToCloseTimeoutMs, heartbeatTimeout: policy.heartbeatTimeoutMs, retry }).callTool;
}

/**
 * The turn's start, a local activity: it runs in the worker that runs the workflow, and history
 * records its result only. Each server's listing is bounded by its `listTimeoutMs`, well under this.
 */
export const TURN_START_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: TURN_START_RETRY,
} as const satisfies ActivityOptions;

export function turnStartActivities(summary: string): TurnStartActivities {
  return proxyLocalActivities<TurnStartActivities>({ ...TURN_START_OPTIONS, summary });
}
