/**
 * The activities of a running workflow that are failing and being retried, as lines for progress
 * (src/stream/failing-call-line.ts), each failed attempt once. Read from the workflow's description
 * (its pending activities), so it needs no worker and writes nothing. One turn followed gets them
 * in its stream (`followTurn`); this is for many turns at once (a batch's).
 */
import type { Client } from '@temporalio/client';
import { failingAttempts } from '../stream/failing-call-line';

export class FailingCalls {
  /** `runId/activityId/attempt` of every failed attempt reported. */
  private readonly reported = new Set<string>();

  constructor(private readonly client: Client) {}

  /**
   * A line for each failing attempt of `workflowId`'s running activities not reported before (each
   * failed attempt once). Throws what describe throws (e.g. `WorkflowNotFoundError`).
   */
  async lines(workflowId: string): Promise<string[]> {
    const described = await this.client.workflow.getHandle(workflowId).describe();
    const lines: string[] = [];
    for (const { key, line } of failingAttempts(described.runId, described.raw.pendingActivities ?? [])) {
      if (this.reported.has(key)) continue;
      this.reported.add(key);
      lines.push(line);
    }
    return lines;
  }
}
