/** What the benches report of a Message Batch collector's runs: how often it continued as new, how long its runs grew. */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

export interface CollectorRuns {
  runs: number;
  /** The longest run's events. */
  maxEvents: number;
  /** Workflow tasks that timed out or failed, over all runs (a failed task replays its run). */
  tasksTimedOut: number;
  tasksFailed: number;
}

/** The collector `workflowId`'s runs, walked back from the newest through each run's first event (at most `limit`). */
export async function collectorRuns(client: Client, workflowId: string, limit = 200): Promise<CollectorRuns> {
  const figures: CollectorRuns = { runs: 0, maxEvents: 0, tasksTimedOut: 0, tasksFailed: 0 };
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId && figures.runs < limit) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    figures.runs++;
    figures.maxEvents = Math.max(figures.maxEvents, events.length);
    for (const e of events) {
      if (e.workflowTaskTimedOutEventAttributes) figures.tasksTimedOut++;
      if (e.workflowTaskFailedEventAttributes) figures.tasksFailed++;
    }
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return figures;
}
