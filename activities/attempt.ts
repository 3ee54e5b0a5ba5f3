/**
 * The attempt an activity's failure happened on, stamped in one place for the Claude and MCP
 * activities. Temporal's ActivityFailure does not say how many attempts ran, so every
 * ApplicationFailure these activities throw carries its attempt in its details (the workflow reads
 * it with `failedAttempt`, src/core/tool-call-attempt.ts), and a final one also says it at the end
 * of its message (`; attempt N`), where a person reads it.
 */
import type { Context, Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { attemptDetail, recordedAttempt } from '../src/core/tool-call-attempt';

/**
 * Why the activity gives up on a retryable failure at this attempt (it becomes final), or
 * undefined to leave it to the retry policy.
 */
export type GiveUp = (failure: ApplicationFailure, attempt: number) => string | undefined;

/**
 * `err` with the attempt of `info` stamped. An ApplicationFailure gains the attempt detail; when it
 * is final (non-retryable, given up by `giveUp`, or failing the retry policy's last attempt) its
 * message also ends with `; attempt N`, and `(gave up: why)` when given up, which makes it
 * non-retryable. `more` details follow the attempt's. Anything else (a cancellation, a failure already
 * stamped) is returned as it is.
 */
export function stampAttempt(err: unknown, info: Pick<Info, 'attempt' | 'retryPolicy'>, giveUp?: GiveUp, more: unknown[] = []): unknown {
  if (!(err instanceof ApplicationFailure) || recordedAttempt(err) !== undefined) return err;
  const { attempt } = info;
  const gaveUp = giveUp?.(err, attempt);
  const nonRetryable = err.nonRetryable === true || gaveUp !== undefined;
  const maximumAttempts = info.retryPolicy?.maximumAttempts;
  const final = nonRetryable || (maximumAttempts !== undefined && maximumAttempts > 0 && attempt >= maximumAttempts);
  return ApplicationFailure.create({
    type: err.type ?? undefined,
    message: final ? `${err.message}; attempt ${attempt}${gaveUp !== undefined ? ` (gave up: ${gaveUp})` : ''}` : err.message,
    nonRetryable,
    details: [...(err.details ?? []), attemptDetail(attempt), ...more],
    ...(err.cause ? { cause: err.cause } : {}),
    ...(err.nextRetryDelay != null && !nonRetryable ? { nextRetryDelay: err.nextRetryDelay } : {}),
    ...(err.category != null ? { category: err.category } : {}),
  });
}

/** Runs `fn`, stamping the attempt of `ctx` (and `more` details) on whatever it throws (see {@link stampAttempt}). */
export async function stampingAttempt<T>(ctx: Context, fn: () => Promise<T>, giveUp?: GiveUp, more?: unknown[]): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw stampAttempt(err, ctx.info, giveUp, more);
  }
}
