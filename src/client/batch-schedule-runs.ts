/**
 * The runs of a batch schedule, from visibility (`TemporalScheduledById`): a schedule's own
 * description keeps only its last 10. Each with its batch and counts: a closed run's from its result,
 * a running one's summed from its shards' progress (a query each, bounded in time: a shard no worker
 * answers leaves the counts out). Visibility trails the workflows by a moment: a run started a few
 * milliseconds ago may be missing.
 */
import { WorkflowFailedError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import {
  batchScheduleId,
  SA_SCHEDULED_BY_ID,
  SA_SCHEDULED_START_TIME,
  SCHEDULED_BATCH_MEMO,
  SCHEDULED_BATCH_WORKFLOW,
  scheduledBatchName,
  type ScheduledBatchMemo,
  type ScheduledBatchResult,
} from '../core/batch-schedule';
import { batchShardWorkflowIds } from '../core/batch-shards';
import type { BatchProgress } from '../core/batch';
import { SA_BATCH } from '../core/search-attributes';
import { batchProgressQuery } from '../core/workflow-handlers';
import { describeBatchSchedule, type BatchScheduleScope } from './batch-schedules';
import { describeFailure } from './describe-failure';
import { ownerClause } from './owner';
import { runStatusOf, type RunStatus } from './run-status';
import { quoted } from './visibility-query';

/** How long a running run's shards have to answer their progress query. */
const PROGRESS_WAIT_MS = 3000;

export interface BatchScheduleRunCounts {
  total: number;
  completed: number;
  failed: number;
  skipped: number;
  /** Turns running now (a running run's only). */
  running?: number;
}

/** One run of a schedule. */
export interface BatchScheduleRun {
  workflowId: string;
  runId: string;
  /** Its batch: `<schedule>-<UTC scheduled time>`; `mcp-turns batch results <batch>` reads its answers. */
  batch: string;
  status: RunStatus | string;
  /** ISO 8601. */
  startTime: string;
  /** ISO 8601; absent while it runs. */
  closeTime?: string;
  /** Absent while no shard of a running run has answered, and for a run that did not complete. */
  counts?: BatchScheduleRunCounts;
  /** Why a failed run failed. */
  error?: string;
}

export interface BatchScheduleRunsOptions extends BatchScheduleScope {
  /** @default 20 */
  limit?: number;
}

/** The visibility query of schedule `name`'s runs, for `scope`. */
export function batchScheduleRunsQuery(name: string, scope: BatchScheduleScope = {}): string {
  const owner = scope.owner ? ownerClause({ admin: false, ownerKey: scope.owner.key }) : undefined;
  return [
    `WorkflowType = ${quoted(SCHEDULED_BATCH_WORKFLOW)}`,
    `${SA_SCHEDULED_BY_ID.name} = ${quoted(batchScheduleId(name))}`,
    ...(owner ? [owner] : []),
  ].join(' AND ');
}

/** A run's batch: as it upserted it, else as it names it (its scheduled time, else its start). */
function batchOf(name: string, e: WorkflowExecutionInfo): string {
  return e.typedSearchAttributes.get(SA_BATCH) ?? scheduledBatchName(name, e.typedSearchAttributes.get(SA_SCHEDULED_START_TIME) ?? e.startTime);
}

/** A running run's counts, summed over the shards that answer in time; undefined when none does. */
async function runningCounts(client: Client, batch: string, memo: Record<string, unknown> | undefined): Promise<BatchScheduleRunCounts | undefined> {
  const size = memo?.[SCHEDULED_BATCH_MEMO] as ScheduledBatchMemo | undefined;
  if (!size) return undefined;
  const shards = batchShardWorkflowIds(batch, size.concurrency, size.queries);
  const deadline = Date.now() + PROGRESS_WAIT_MS;
  const parts = await Promise.all(
    shards.map((id) => client.withDeadline(deadline, () => client.workflow.getHandle(id).query(batchProgressQuery)).catch(() => undefined)),
  );
  const known = parts.filter((p): p is BatchProgress => p !== undefined);
  if (!known.length) return undefined;
  return {
    // A shard not started yet (or not answering) holds the rest of the queries.
    total: size.queries,
    completed: known.reduce((n, p) => n + p.completed, 0),
    failed: known.reduce((n, p) => n + p.failed, 0),
    skipped: known.reduce((n, p) => n + p.skipped, 0),
    running: known.reduce((n, p) => n + p.running.length, 0),
  };
}

/** A closed run's counts (completed) or why it did not complete (failed). */
async function closedOutcome(client: Client, e: WorkflowExecutionInfo): Promise<Pick<BatchScheduleRun, 'counts' | 'error'>> {
  try {
    const { total, completed, failed, skipped } = (await client.workflow.getHandle(e.workflowId, e.runId).result()) as ScheduledBatchResult;
    return { counts: { total, completed, failed, skipped } };
  } catch (err) {
    if (err instanceof WorkflowFailedError) return e.status.name === 'FAILED' ? { error: describeFailure(err) } : {};
    throw err;
  }
}

/**
 * The runs of schedule `name`, newest first (at most `limit`), each with its batch, status and
 * counts; {@link BatchScheduleNotFoundError} when there is no schedule of that name `options` may see.
 * Runs of a deleted schedule are listed while a schedule of that name exists again.
 */
export async function listBatchScheduleRuns(client: Client, name: string, options: BatchScheduleRunsOptions = {}): Promise<BatchScheduleRun[]> {
  const scope = options.owner ? { owner: options.owner } : {};
  await describeBatchSchedule(client, name, scope);
  const limit = options.limit ?? 20;
  const executions: WorkflowExecutionInfo[] = [];
  for await (const e of client.workflow.list({ query: batchScheduleRunsQuery(name, scope), pageSize: Math.min(limit, 1000) })) {
    executions.push(e);
    if (executions.length >= limit) break;
  }
  const runs = await Promise.all(
    executions.map(async (e): Promise<BatchScheduleRun> => {
      const batch = batchOf(name, e);
      const running = e.status.name === 'RUNNING';
      const outcome = running ? { counts: await runningCounts(client, batch, e.memo) } : await closedOutcome(client, e);
      return {
        workflowId: e.workflowId,
        runId: e.runId,
        batch,
        status: runStatusOf(e.status.name),
        startTime: e.startTime.toISOString(),
        ...(e.closeTime ? { closeTime: e.closeTime.toISOString() } : {}),
        ...(outcome.counts ? { counts: outcome.counts } : {}),
        ...('error' in outcome && outcome.error ? { error: outcome.error } : {}),
      };
    }),
  );
  return runs.sort((a, b) => b.startTime.localeCompare(a.startTime) || a.workflowId.localeCompare(b.workflowId));
}
