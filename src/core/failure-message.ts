/**
 * The one rule for the message of a failure as a person reads it, for the workflows (a tool's
 * failure for Claude, a failed turn's cause, a conversation's failed turn) and for the client (a
 * failed turn or batch item).
 */
import { ActivityFailure, ChildWorkflowFailure } from '@temporalio/common';

/**
 * The names the client gives its errors that only wrap a workflow's failure (`Workflow execution
 * failed`, `Workflow Update failed`); their classes live in `@temporalio/client`, which workflow
 * code cannot import.
 */
const CLIENT_WRAPPERS: ReadonlySet<string> = new Set(['WorkflowFailedError', 'WorkflowUpdateFailedError']);

/** How deep the cause chain is followed. */
const MAX_DEPTH = 10;

/**
 * A Temporal wrapper: it says only where its cause happened (`Activity task failed`, `Child
 * Workflow execution failed`, `Workflow execution failed`), and its cause says what.
 */
function isWrapper(err: Error): boolean {
  return err instanceof ActivityFailure || err instanceof ChildWorkflowFailure || CLIENT_WRAPPERS.has(err.name);
}

/**
 * The first message in `err`'s cause chain (outermost first) that is not a Temporal wrapper's: the
 * failure that says what happened, with the context its own thrower added (e.g. `Claude call failed
 * at step 2: Claude API 401 ...`), never a wrapper's `Activity task failed`. A chain of wrappers
 * only gives the innermost one's message; a value that is no Error gives its string.
 */
export function failureMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let last = err.message;
  let current: unknown = err;
  for (let depth = 0; current instanceof Error && depth < MAX_DEPTH; depth++, current = current.cause) {
    if (current.message) last = current.message;
    if (current.message && !isWrapper(current)) return current.message;
  }
  return last;
}
