/**
 * A workflow task that the worker could not run: its code threw (a payload no key of the worker
 * opens, a stored payload it cannot find) or it did not match the recorded history. Temporal
 * records the first failure and retries the task until a worker can run it; nothing else moves the
 * turn on meanwhile. Other recorded task failures (a signal that came in during the task) are
 * Temporal's own routine and are not this.
 */
import { temporal } from '@temporalio/proto';
import { oneLine } from '../core/text';

const CAUSE = temporal.api.enums.v1.WorkflowTaskFailedCause;
const WORKER_FAILURES = new Set<number>([
  CAUSE.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
  CAUSE.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
]);

/** True for a recorded task failure the worker reported (see the file comment). */
export function isWorkerTaskFailure(attributes: temporal.api.history.v1.IWorkflowTaskFailedEventAttributes): boolean {
  return attributes.cause != null && WORKER_FAILURES.has(attributes.cause);
}

/** `workflow task failing: <why>, attempt 3; …`: the line for a failing workflow task of `workflowId`. */
export function failingTaskLine(workflowId: string, message: string, attempt: number): string {
  return (
    `workflow task failing: ${oneLine(message, 300)}, attempt ${attempt}; ` +
    `Temporal retries it until a worker can run it (\`mcp-turns cancel ${workflowId} --terminate\` ends it)`
  );
}
