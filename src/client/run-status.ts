/**
 * A workflow's status in the words of the CLI and the list API: Temporal's execution status, with a
 * running turn that waits for a person's approval told apart (its `McpTurnsStatus` search attribute
 * says so). The one map between these words and Temporal's.
 */
import type { WorkflowExecutionStatusName } from '@temporalio/client';
import { WAITING_APPROVAL_STATUS } from '../core/approvals';

export const RUN_STATUSES = [
  'running',
  WAITING_APPROVAL_STATUS,
  'completed',
  'failed',
  'cancelled',
  'terminated',
  'timed-out',
] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];

/** A closed status as a visibility query names it (`ExecutionStatus = "Canceled"`). */
export const EXECUTION_STATUS_OF_CLOSED: Readonly<
  Record<Exclude<RunStatus, 'running' | typeof WAITING_APPROVAL_STATUS>, string>
> = {
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Canceled',
  terminated: 'Terminated',
  'timed-out': 'TimedOut',
};

const OF_STATUS_NAME: Partial<Record<WorkflowExecutionStatusName, RunStatus>> = {
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed-out',
};

/**
 * The status of a workflow whose execution status is `name`; `mcpStatus` is its `McpTurnsStatus`
 * search attribute. A status outside the list (`PAUSED`, `CONTINUED_AS_NEW`) is Temporal's name in
 * lower case, dashed.
 */
export function runStatusOf(name: WorkflowExecutionStatusName, mcpStatus?: string): RunStatus | string {
  if (name === 'RUNNING' && mcpStatus === WAITING_APPROVAL_STATUS) return WAITING_APPROVAL_STATUS;
  return OF_STATUS_NAME[name] ?? name.toLowerCase().replace(/_/g, '-');
}
