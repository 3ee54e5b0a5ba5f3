/**
 * Task queue names. Turn workflows and MCP calls share one queue; Claude calls run on a queue of
 * their own, named after it, so their rate can be capped per worker and across the queue with
 * Temporal's own worker options (batch fan-out must not turn into a 429 storm). The workflow derives
 * the Claude queue from its own queue, so no setting has to be kept in step between client and worker.
 */
export const DEFAULT_TASK_QUEUE = 'mcp-turns';

export function taskQueueFromEnv(flag?: string): string {
  return flag ?? process.env.MCP_TURNS_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
}

export { claudeTaskQueue } from '../core/task-queue-names';
