/** The attempt a failed activity reached, read back from its failure's details. */
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { attemptDetail, failedAttempt, recordedAttempt } from '../../src/core/tool-call-attempt';

it('is read from the cause of an ActivityFailure, or from the failure itself', () => {
  const cause = ApplicationFailure.create({ type: 'McpInvalidRequest', nonRetryable: true, message: 'refused', details: [attemptDetail(1)] });
  const failure = new ActivityFailure('failed', 'callTool', 'id', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
  expect(failedAttempt(failure)).toBe(1);
  expect(failedAttempt(cause)).toBe(1);
  expect(failedAttempt(ApplicationFailure.create({ message: 'x', details: ['other', attemptDetail(3)] }))).toBe(3);
  expect(recordedAttempt(cause)).toBe(1);
  expect(recordedAttempt(failure)).toBeUndefined(); // its own details only
});

it('is undefined when the failure does not carry it (a timeout, a plain error, a bad value)', () => {
  const timeout = new ActivityFailure('t', 'callTool', 'id', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'w', new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE));
  expect(failedAttempt(timeout)).toBeUndefined();
  expect(failedAttempt(new Error('x'))).toBeUndefined();
  expect(failedAttempt(ApplicationFailure.create({ message: 'x', details: [{ attempt: 0 }, { attempt: 'two' }] }))).toBeUndefined();
  expect(failedAttempt(undefined)).toBeUndefined();
});
