import os from 'node:os';
import type { Client } from '@temporalio/client';
import { processAlive } from '../temporal/process-alive';

/** `TaskQueueKind.TASK_QUEUE_KIND_NORMAL` and `TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW` of Temporal's API. */
const NORMAL_KIND = 1;
const WORKFLOW_TYPE = 1;
/** A remote poller counts as live when it polled this recently: a long poll lasts up to a minute. */
const REMOTE_POLLER_FRESH_MS = 70_000;

export interface TaskQueuePoller {
  /** The worker's identity (the SDK's default is `pid@host`). */
  identity: string;
  lastAccessTime?: Date;
}

/**
 * The workers polling `taskQueue` for workflow tasks now. Temporal keeps listing a worker for
 * minutes after it stopped, so a poller on this machine (identity `pid@<this host>`) counts while
 * its process lives, and any other while it polled within the last 70 s.
 */
export async function liveWorkflowPollers(
  client: Client,
  taskQueue: string,
  now = Date.now(),
): Promise<TaskQueuePoller[]> {
  const res = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: NORMAL_KIND },
    taskQueueType: WORKFLOW_TYPE,
  });
  const host = os.hostname();
  return res.pollers
    .map((p) => ({
      identity: p.identity ?? '',
      ...(p.lastAccessTime?.seconds != null
        ? {
            lastAccessTime: new Date(
              Number(p.lastAccessTime.seconds) * 1000 + Math.floor((p.lastAccessTime.nanos ?? 0) / 1e6),
            ),
          }
        : {}),
    }))
    .filter((p) => {
      const local = /^(\d+)@(.+)$/.exec(p.identity);
      if (local && local[2] === host) return processAlive(Number(local[1]));
      return !!p.lastAccessTime && now - p.lastAccessTime.getTime() < REMOTE_POLLER_FRESH_MS;
    });
}
