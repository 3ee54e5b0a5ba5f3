/**
 * The attempt a failed tool-call activity reached. Temporal's ActivityFailure does not say how many
 * attempts ran, so the MCP activity puts its attempt number into the details of the failure it
 * throws, and the workflow reads it back here; a failure without it (a timeout, say) ran them all.
 */

/** What the MCP tool-call activity adds to the details of every failure it throws. */
export interface ToolCallAttemptDetail {
  attempt: number;
}

/** The detail recording `attempt`. */
export function attemptDetail(attempt: number): ToolCallAttemptDetail {
  return { attempt };
}

/**
 * The attempt recorded in a failure's details: `failure` is the activity's failure as the workflow
 * catches it (an ActivityFailure whose cause carries the details) or the cause itself.
 */
export function failedAttempt(failure: unknown): number | undefined {
  for (let f: unknown = failure, depth = 0; f && typeof f === 'object' && depth < 3; f = (f as { cause?: unknown }).cause, depth++) {
    const details = (f as { details?: unknown }).details;
    if (!Array.isArray(details)) continue;
    for (const d of details) {
      const attempt = (d as Partial<ToolCallAttemptDetail> | null)?.attempt;
      if (typeof attempt === 'number' && Number.isInteger(attempt) && attempt >= 1) return attempt;
    }
  }
  return undefined;
}
