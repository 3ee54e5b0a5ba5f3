import { ApplicationFailure, TemporalFailure } from '@temporalio/client';

/**
 * One line for a failed turn: the innermost failure that says what happened (the API's status,
 * message and request id come through from the Claude activity's ApplicationFailure).
 */
export function describeFailure(err: unknown): string {
  const messages: string[] = [];
  let current: unknown = err;
  while (current instanceof Error) {
    if (current instanceof TemporalFailure || current instanceof ApplicationFailure) messages.push(current.message);
    current = (current as { cause?: unknown }).cause;
  }
  const useful = messages.filter((m) => m && !/^(Workflow execution failed|Activity task failed)$/.test(m));
  return useful[0] ?? (err instanceof Error ? err.message : String(err));
}
