/**
 * Task queue names. Turn workflows and MCP calls share one queue; Claude calls run on a queue of
 * their own, named after it, so their rate can be capped per worker and across the queue with
 * Temporal's own worker options (batch fan-out must not turn into a 429 storm). The workflow derives
 * the Claude queue from its own queue, so no setting has to be kept in step between client and worker.
 */

/** The queue turns and batches run on when the caller names none. */
export const DEFAULT_TASK_QUEUE = 'mcp-turns';

/** The queue Claude activities run on, derived from the turn's own task queue. */
export function claudeTaskQueue(turnTaskQueue: string): string {
  return `${turnTaskQueue}-claude`;
}
