/**
 * The one rule for a failure's message as a person reads it: the first message in the cause chain
 * that is not a Temporal wrapper's, for the workflows and the client alike.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  RetryState,
  TerminatedFailure,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { failureMessage } from '../../src/core/failure-message';
import { describeFailure } from '../../src/client/describe-failure';

const claudeFailure = ApplicationFailure.create({
  type: 'ClaudeInvalidRequest',
  nonRetryable: true,
  message: 'Claude API 400 invalid_request_error: bad (request-id req_1); attempt 1',
});
const activityFailed = (cause?: Error) =>
  new ActivityFailure('Activity task failed', 'claude', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
const turnFailure = ApplicationFailure.create({
  type: 'ClaudeInvalidRequest',
  nonRetryable: true,
  message: `Claude call failed at step 1: ${claudeFailure.message}`,
  cause: activityFailed(claudeFailure),
});
const childFailed = (cause?: Error) =>
  new ChildWorkflowFailure('default', { workflowId: 'conv-turn-0', runId: 'r' }, 'chatTurn', RetryState.NON_RETRYABLE_FAILURE, cause);

describe('failureMessage', () => {
  it("reads an activity's failure, not the wrapper around it (a tool or Claude call in the workflow)", () => {
    expect(failureMessage(activityFailed(claudeFailure))).toBe(claudeFailure.message);
    const timedOut = new ActivityFailure(
      'Activity task timed out',
      'callTool',
      '2',
      RetryState.TIMEOUT,
      'worker',
      new TimeoutFailure('activity StartToClose timeout', undefined, TimeoutType.START_TO_CLOSE),
    );
    expect(failureMessage(timedOut)).toBe('activity StartToClose timeout');
  });

  it("reads a failed child turn's own failure, with the context the turn gave it (a conversation's turn)", () => {
    expect(failureMessage(childFailed(turnFailure))).toBe(turnFailure.message);
    expect(failureMessage(childFailed(new TerminatedFailure('stopped by ops')))).toBe('stopped by ops');
  });

  it("reads a failed workflow's failure, not the client's wrapper (a turn or batch item at the client)", () => {
    expect(failureMessage(new WorkflowFailedError('Workflow execution failed', turnFailure, RetryState.NON_RETRYABLE_FAILURE))).toBe(
      'Claude call failed at step 1: Claude API 400 invalid_request_error: bad (request-id req_1); attempt 1',
    );
    expect(failureMessage(new WorkflowUpdateFailedError('Workflow Update failed', ApplicationFailure.create({ message: 'refused' })))).toBe('refused');
  });

  it("gives the innermost wrapper's message when nothing else says more, and skips empty messages", () => {
    expect(failureMessage(new WorkflowFailedError('Workflow execution failed', activityFailed(), RetryState.NON_RETRYABLE_FAILURE))).toBe(
      'Activity task failed',
    );
    expect(failureMessage(activityFailed(ApplicationFailure.create({ message: '', cause: new Error('inner') })))).toBe('inner');
  });

  it('reads any other error as it is, and a value as its string', () => {
    expect(failureMessage(new Error('outer', { cause: new Error('inner') }))).toBe('outer');
    expect(failureMessage(ApplicationFailure.create({ message: 'plain' }))).toBe('plain');
    expect(failureMessage('text')).toBe('text');
    expect(failureMessage(undefined)).toBe('undefined');
  });
});

it("describeFailure follows the same rule", () => {
  const err = new WorkflowFailedError('Workflow execution failed', turnFailure, RetryState.NON_RETRYABLE_FAILURE);
  expect(describeFailure(err)).toBe(failureMessage(err));
  expect(describeFailure(err)).toMatch(/^Claude call failed at step 1: Claude API 400 .*; attempt 1$/);
});
