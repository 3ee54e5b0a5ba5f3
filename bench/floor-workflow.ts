/**
 * Temporal's own floors, for bench/turn-overhead: workflows whose "rounds" are the hops of a chat
 * turn's tool round, with activities that do nothing. `floorRounds`: the two hops a round had before
 * local tool calls (an activity on a second task queue, like Claude calls on their own queue, then
 * one on the workflow's own queue, like a tool call). `floorLocalRounds`: the shape of a round now
 * (a local activity, like a quick tool's call, then an activity on the workflow's own queue, which
 * the server dispatches eagerly, like an unstreamed Claude call).
 */
import { proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';

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

export async function floorLocalRounds(rounds: number): Promise<void> {
  const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });
  const onOwn = proxyActivities<FloorActivities>({ startToCloseTimeout: '10 seconds', taskQueue: workflowInfo().taskQueue });
  for (let i = 0; i < rounds; i++) {
    await local.noop();
    await onOwn.noop();
  }
}
