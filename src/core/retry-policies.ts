/**
 * The retry policies of the workflows' activities, named once. Durations are Temporal's strings.
 */
import type { RetryPolicy } from '@temporalio/common';

/**
 * A Claude call: ten attempts, 1 s doubling to a minute apart. A call through a Message Batch is
 * submitted under the same policy, so either way a call is given the same chances.
 */
export const CLAUDE_CALL_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 10,
} as const satisfies RetryPolicy;

/** The Message Batch collector's API calls: the same backoff, without a limit (the batch's deadline bounds them). */
export const COLLECTOR_CALL_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
} as const satisfies RetryPolicy;

/** The turn's start (its input checked, its tools listed): three attempts. */
export const TURN_START_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumAttempts: 3,
} as const satisfies RetryPolicy;
