/** `mcp-turns batch --message-batches [--message-batch-deadline D]`: the option they make, or one line with exit code 2. */
import { CliError } from '../../src/cli/cli-error';
import { messageBatchesOf, parseDurationMs } from '../../src/cli/message-batch-flags';

function failure(fn: () => unknown): { message: string; exitCode: number } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    return { message: (err as CliError).message, exitCode: (err as CliError).exitCode };
  }
  throw new Error('did not throw');
}

it('reads durations in ms, s, m and h, and bare milliseconds', () => {
  expect(parseDurationMs('90s')).toBe(90_000);
  expect(parseDurationMs('30m')).toBe(1_800_000);
  expect(parseDurationMs('2h')).toBe(7_200_000);
  expect(parseDurationMs('24h')).toBe(86_400_000);
  expect(parseDurationMs('1.5h')).toBe(5_400_000);
  expect(parseDurationMs('1500ms')).toBe(1500);
  expect(parseDurationMs('60000')).toBe(60_000);
  for (const bad of ['', 'soon', '2d', '-5s', '1h30m', 'h']) expect(parseDurationMs(bad)).toBeUndefined();
});

it('without --message-batches the batch calls Claude directly; with it, the deadline only when given', () => {
  expect(messageBatchesOf({})).toBeUndefined();
  expect(messageBatchesOf({ messageBatches: true })).toEqual({});
  expect(messageBatchesOf({ messageBatches: true, messageBatchDeadline: '2h' })).toEqual({
    deadlineMs: 7_200_000,
  });
});

it('a bad deadline names the flag and the accepted forms; a deadline alone says it needs --message-batches', () => {
  expect(failure(() => messageBatchesOf({ messageBatches: true, messageBatchDeadline: 'tomorrow' }))).toEqual(
    {
      message:
        '--message-batch-deadline must be a duration such as 90s, 30m, 2h or 24h, or milliseconds, at least 1 s; got "tomorrow"',
      exitCode: 2,
    },
  );
  expect(
    failure(() => messageBatchesOf({ messageBatches: true, messageBatchDeadline: '500ms' })).exitCode,
  ).toBe(2);
  expect(failure(() => messageBatchesOf({ messageBatchDeadline: '2h' }))).toEqual({
    message:
      '--message-batch-deadline needs --message-batches: it is the deadline of each Message Batch request',
    exitCode: 2,
  });
});
