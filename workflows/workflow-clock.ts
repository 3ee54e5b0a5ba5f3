/** Workflow time, deterministic on replay: the SDK's clock is the time of the workflow task. */

/** Milliseconds since the epoch. */
export function workflowNow(): number {
  return new Date().getTime();
}

/** ISO 8601. */
export function workflowTime(): string {
  return new Date().toISOString();
}
