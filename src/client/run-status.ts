/**
 * A workflow's status in the one vocabulary (src/core/run-status.ts) from Temporal's execution
 * status, with a running turn that waits for a person's approval told apart (its `McpTurnsStatus`
 * search attribute says so). The one map between these words and Temporal's.
 */
import type { WorkflowExecutionStatusName } from '@temporalio/client';
import { RUN_STATUSES, WAITING_APPROVAL_STATUS, type EndStatus, type RunStatus } from '../core/run-status';

export { RUN_STATUSES, type RunStatus };

/** An ended status as a visibility query names it (`ExecutionStatus = "Canceled"`). */
export const EXECUTION_STATUS_OF_CLOSED: Readonly<Record<EndStatus, string>> = {
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Canceled',
  terminated: 'Terminated',
  timed_out: 'TimedOut',
};

/**
 * The status of a workflow whose execution status is `name`; `mcpStatus` is its `McpTurnsStatus`
 * search attribute. A status outside the list (`PAUSED`, `CONTINUED_AS_NEW`) is Temporal's name in
 * lower case (`continued_as_new`).
 */
export function runStatusOf(name: WorkflowExecutionStatusName, mcpStatus?: string): RunStatus | string {
  if (name === 'RUNNING' && mcpStatus === WAITING_APPROVAL_STATUS) return WAITING_APPROVAL_STATUS;
  return name.toLowerCase();
}
