/**
 * The attempt a failed activity reached. Temporal's ActivityFailure does not say how many attempts
 * ran, so the Claude and MCP activities put their attempt number into the details of every failure
 * they throw (activities/attempt.ts), and the workflow reads it back here; a failure without it (a
 * timeout, say) ran them all.
 */

/** What an activity adds to the details of every failure it throws. */
export interface FailedAttemptDetail {
  attempt: number;
}

/** The detail recording `attempt`. */
export function attemptDetail(attempt: number): FailedAttemptDetail {
  return { attempt };
}

/** The attempt in one failure's own details (not its causes'). */
export function recordedAttempt(failure: unknown): number | undefined {
  const details = failure && typeof failure === 'object' ? (failure as { details?: unknown }).details : undefined;
  if (!Array.isArray(details)) return undefined;
  for (const d of details) {
    const attempt = (d as Partial<FailedAttemptDetail> | null)?.attempt;
    if (typeof attempt === 'number' && Number.isInteger(attempt) && attempt >= 1) return attempt;
  }
  return undefined;
}

/**
 * The attempt recorded in a failure's details: `failure` is the activity's failure as the workflow
 * catches it (an ActivityFailure whose cause carries the details) or the cause itself.
 */
export function failedAttempt(failure: unknown): number | undefined {
  for (let f: unknown = failure, depth = 0; f && typeof f === 'object' && depth < 3; f = (f as { cause?: unknown }).cause, depth++) {
    const attempt = recordedAttempt(f);
    if (attempt !== undefined) return attempt;
  }
  return undefined;
}
