import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { activityResultLimit } from '../../src/storage/activity-payload-limit';
import { PAYLOAD_TOO_LARGE } from '../../src/storage/payload-limit';

const env = new MockActivityEnvironment(
  { activityType: 'callTool', workflowType: 'chatTurn', workflowExecution: { workflowId: 'turn-1', runId: 'run-1' } },
  { interceptors: [activityResultLimit()] },
);

describe('activityResultLimit (storage off)', () => {
  it('passes results under the limit through unchanged', async () => {
    const result = { content: 'r'.repeat(1_000_000) };
    await expect(env.run(async () => result)).resolves.toBe(result);
    await expect(env.run(async () => undefined)).resolves.toBeUndefined();
  });

  it('fails a result over the limit at once, non-retryably, naming the activity, its workflow, the size and the fix', async () => {
    const failure = await env.run(async () => ({ content: 'r'.repeat(3_000_000) })).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(PAYLOAD_TOO_LARGE);
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
    expect((failure as ApplicationFailure).message).toBe(
      "the result of activity callTool (workflow chatTurn turn-1) is 2.9 MiB, over Temporal's 2.0 MiB payload limit: " +
        'configure external storage for the client and every worker: MCP_TURNS_STORAGE=fs:DIR (one machine) or MCP_TURNS_STORAGE=s3://BUCKET?endpoint=URL (a cluster)',
    );
  });
});
