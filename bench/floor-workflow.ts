/**
 * Temporal's own floor, for bench/turn-overhead: a workflow whose "rounds" are the same two hops as a
 * chat turn's tool round (an activity on a second task queue, like Claude calls, then one on the
 * workflow's own queue, like tool calls), with activities that do nothing.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';

export interface FloorActivities {
  noop(): Promise<void>;
}

export async function floorRounds(rounds: number, otherQueue: string): Promise<void> {
  const onOther = proxyActivities<FloorActivities>({ startToCloseTimeout: '10 seconds', taskQueue: otherQueue });
  const onOwn = proxyActivities<FloorActivities>({ startToCloseTimeout: '10 seconds', taskQueue: workflowInfo().taskQueue });
  for (let i = 0; i < rounds; i++) {
    await onOther.noop();
    await onOwn.noop();
  }
}
