import { ActivityFailure } from '@temporalio/workflow';

/** The message of a failure as a person should read it: an activity's own cause, not the wrapper. */
export function failureMessage(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}
