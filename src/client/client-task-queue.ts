/**
 * The task queue work started through a client goes to when the caller names none: the one of the
 * settings the client was connected with (connectClient, the CLI and `serve` pass theirs), else this
 * process's (`MCP_TURNS_TASK_QUEUE`, else `mcp-turns`): the rule the worker follows, so a client and
 * a worker configured alike meet on one queue.
 */
import type { Client } from '@temporalio/client';
import { processSettings } from '../config/process-settings';

const taskQueues = new WeakMap<Client, string>();

/** Work started through `client` goes to `taskQueue` unless its caller names another. */
export function useTaskQueue(client: Client, taskQueue: string): void {
  taskQueues.set(client, taskQueue);
}

/** `named`, else the task queue of `client`'s settings, else this process's (see the file comment). */
export function taskQueueOf(client: Client, named?: string): string {
  return named ?? taskQueues.get(client) ?? processSettings().taskQueue;
}
