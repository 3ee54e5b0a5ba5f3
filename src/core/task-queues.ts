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

/**
 * The queue of a turn's Claude calls. With no rate cap across the queue (`onTurnQueue`, recorded at
 * the turn's start), an unstreamed call runs on the turn's own queue: the server hands it to the
 * worker in the response to the workflow task that scheduled it (eager activity dispatch), one
 * matching hop fewer per call, and the worker caps its Claude calls itself (src/claude/call-limiter.ts).
 * A streamed call stays on the Claude queue, whose worker sends heartbeats (its deltas) at the
 * stream's pace, a per-worker setting the turn queue's MCP calls do not need.
 *
 * A turn with a fairness key (its owner's) keeps every Claude call on the Claude queue: the calls
 * waiting for the worker's Claude slots then wait in Temporal's matching, where fairness orders
 * them by owner. Dispatched eagerly they would wait inside the worker, first come first served.
 */
export function claudeCallQueue(turnTaskQueue: string, { onTurnQueue, streamed, fair = false }: { onTurnQueue: boolean; streamed: boolean; fair?: boolean }): string {
  return onTurnQueue && !streamed && !fair ? turnTaskQueue : claudeTaskQueue(turnTaskQueue);
}
