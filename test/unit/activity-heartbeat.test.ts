/** The activities' one heartbeat rule, in a mock activity context. */
import { MockActivityEnvironment } from '@temporalio/testing';
import { Context } from '@temporalio/activity';
import { heartbeatingWhile } from '../../activities/heartbeat';

const waitMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function beatsWhileWaiting(heartbeatTimeoutMs: number | undefined, waitFor: number): Promise<number> {
  const env = new MockActivityEnvironment(heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs } : {});
  let beats = 0;
  env.on('heartbeat', () => beats++);
  await env.run(async () => heartbeatingWhile(Context.current(), () => waitMs(waitFor)));
  const after = beats;
  await waitMs(waitFor);
  expect(beats).toBe(after); // stopped with the call
  return beats;
}

it('beats every third of a short heartbeat timeout while the call waits, and stops after it', async () => {
  expect(await beatsWhileWaiting(600, 1100)).toBeGreaterThanOrEqual(3);
});

it('beats at least every 2 s when the timeout is long or unset', async () => {
  expect(await beatsWhileWaiting(60_000, 2300)).toBeGreaterThanOrEqual(1);
});
