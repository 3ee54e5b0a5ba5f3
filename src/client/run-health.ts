/**
 * Whether a running workflow can make progress, from what Temporal records: whether a worker polls
 * its task queue (the poller list), and whether its workflow task fails (describe's pending
 * workflow task is on a second attempt or later; history's last failed or timed-out workflow task
 * says why: a payload no key of the worker opens, a bundle that does not match the history).
 * Nothing here asks the workflow (a query needs a worker that can run it).
 */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { failingTaskLine, isWorkerTaskFailure } from '../stream/workflow-task-failure';
import { liveWorkflowPollers } from './task-queue-pollers';

/** How many of the newest events are read back for the failed workflow task. */
const LAST_EVENTS = 50;

export interface FailingWorkflowTask {
  /** The attempt Temporal runs or waits to run now (2 or more: the one before it failed). */
  attempt: number;
  /** Why the last attempt failed, as the worker reported it. */
  message: string;
}

export interface RunHealth {
  taskQueue: string;
  /** No worker polls the task queue: the run waits for one. */
  noWorker: boolean;
  /** Its workflow task fails, and Temporal retries it until a worker can run it. */
  failingTask?: FailingWorkflowTask;
}

/** Why the run's last failed (or timed-out) workflow task failed, from the newest events of its history. */
async function lastWorkflowTaskFailure(client: Client, workflowId: string, runId: string): Promise<string> {
  const page = await client.workflowService.getWorkflowExecutionHistoryReverse({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: LAST_EVENTS,
  });
  for (const event of page.history?.events ?? []) {
    const failed = event.workflowTaskFailedEventAttributes;
    if (failed && isWorkerTaskFailure(failed)) {
      const error = await decodeOptionalFailureToOptionalError(client.options.loadedDataConverter, failed.failure);
      return error?.message ?? 'no reason given';
    }
    if (event.workflowTaskTimedOutEventAttributes) return 'no worker finished it within its timeout (a worker stopped, or is stuck)';
  }
  return 'no reason recorded';
}

/**
 * The health of the run `described` names, while it runs. `pollersOf` answers the live pollers of a
 * task queue (pass one that remembers its answers when looking at many runs).
 */
export async function runHealth(
  client: Client,
  described: WorkflowExecutionDescription,
  pollersOf: (taskQueue: string) => Promise<readonly unknown[]> = (taskQueue) => liveWorkflowPollers(client, taskQueue),
): Promise<RunHealth> {
  const taskQueue = described.taskQueue;
  const attempt = described.raw.pendingWorkflowTask?.attempt ?? 1;
  const [pollers, message] = await Promise.all([
    pollersOf(taskQueue),
    attempt >= 2 ? lastWorkflowTaskFailure(client, described.workflowId, described.runId) : undefined,
  ]);
  return {
    taskQueue,
    noWorker: pollers.length === 0,
    ...(message !== undefined ? { failingTask: { attempt, message } } : {}),
  };
}

/** The line for a run whose task queue no worker polls. */
export function noWorkerLine(taskQueue: string): string {
  return `no worker polls its task queue ${taskQueue}: it waits for one (\`mcp-turns worker\`)`;
}

/** The lines a person reads about a run that cannot make progress; none when it can. */
export function runHealthLines(health: RunHealth, workflowId: string): string[] {
  const lines: string[] = [];
  // The attempt that failed last is the one before the attempt pending now.
  if (health.failingTask) lines.push(failingTaskLine(workflowId, health.failingTask.message, health.failingTask.attempt - 1));
  if (health.noWorker) lines.push(noWorkerLine(health.taskQueue));
  return lines;
}

/** No worker polls the task queue: work sent there now would wait, and a message would not be accepted. */
export class NoWorkerError extends Error {
  override name = 'NoWorkerError';
  constructor(readonly taskQueue: string) {
    super(`no worker polls task queue ${taskQueue}: start one (\`mcp-turns worker\`), then send again`);
  }
}

/**
 * Fails with {@link NoWorkerError} when no worker polls `taskQueue`: for a caller that must not
 * wait without end on a worker (a message is accepted only by a worker running its conversation).
 */
export async function requireWorker(client: Client, taskQueue: string): Promise<void> {
  if (!(await liveWorkflowPollers(client, taskQueue)).length) throw new NoWorkerError(taskQueue);
}
