/** While encryption is on, a worker's log lines name a failure's type and never its message. */
import { ApplicationFailure } from '@temporalio/common';
import type { LogEntry } from '@temporalio/worker';
import { withFailureMessagesWithheld } from '../../src/worker/failure-log-redaction';

describe('withFailureMessagesWithheld', () => {
  it('keeps the line and its plain fields, and reduces each error to its name and type', () => {
    const entry: LogEntry = {
      level: 'WARN',
      message: 'Activity failed',
      timestampNanos: 0n,
      meta: {
        durationMs: 12,
        activityType: 'callTool',
        error: ApplicationFailure.create({ type: 'McpToolCallFailed', message: 'server said: secret file contents CANARY' }),
        other: new Error('Claude wrote CANARY'),
      },
    };
    const out = withFailureMessagesWithheld(entry);
    expect(out.message).toBe('Activity failed');
    expect(out.meta).toEqual({
      durationMs: 12,
      activityType: 'callTool',
      error: 'ApplicationFailure (McpToolCallFailed): message withheld while encryption is on',
      other: 'Error: message withheld while encryption is on',
    });
    expect(JSON.stringify(out.meta)).not.toContain('CANARY');
  });
});
