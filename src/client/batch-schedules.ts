/**
 * Batch schedules from code: a batch of queries run by a Temporal Schedule (`batch-schedule-<name>`),
 * every `every` or on a `cron` expression. The queries are stored with the schedule (its action's
 * argument: External Storage takes it when it is large), so nothing is read at run time. Each run is
 * a `scheduledBatch` workflow (workflows/scheduled-batch.ts) whose batch is
 * `<name>-<UTC scheduled time>`; its runs are listed by batch-schedule-runs.ts.
 *
 * Owners: a schedule created with an `owner` carries its key (search attribute) and label (memo), and
 * so do its runs, their shards and turns. Every call given an `owner` sees and touches only that
 * owner's schedules: another's looks not found. Without one, a call sees every schedule (an admin's).
 */
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleSummary,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import {
  BATCH_SCHEDULE_OVERLAPS,
  batchScheduleId,
  batchScheduleNameOf,
  batchScheduleNameProblem,
  SCHEDULED_BATCH_MEMO,
  SCHEDULED_BATCH_WORKFLOW,
  type BatchScheduleOverlap,
  type ScheduledBatchInput,
  type ScheduledBatchMemo,
} from '../core/batch-schedule';
import { SA_OWNER } from '../core/search-attributes';
import type { BatchInput } from '../core/batch';
import type { scheduledBatch } from '../../workflows/scheduled-batch';
import { DEFAULT_BATCH_CONCURRENCY, messageBatchesInput, wireItems, type BatchItemRequest, type RunBatchOptions } from './batch-client';
import { BatchScheduleExistsError, BatchScheduleNotFoundError, InvalidBatchScheduleError } from './batch-schedule-errors';
import { taskQueueOf } from './client-task-queue';
import { ownerClause, ownerLabelOf, ownerMemo, ownerSearchAttributes, ownerStartOptions, type Owner } from './owner';

/** The catch-up window when none is given: a run missed while the server was down for up to an hour still runs. */
export const DEFAULT_CATCHUP_WINDOW_MS = 3_600_000;

/** gRPC's status code for a request the server refuses as invalid. */
const GRPC_INVALID_ARGUMENT = 3;

/** The shortest catch-up window Temporal takes. */
const MIN_CATCHUP_WINDOW_MS = 10_000;

/** Whose schedules a call sees: only this owner's, by its key (all of them without one). */
export interface BatchScheduleScope {
  owner?: Pick<Owner, 'key'>;
}

export interface CreateBatchScheduleOptions {
  /** The schedule's name (its id is `batch-schedule-<name>`): 1-83 characters of A-Z a-z 0-9 . _ -. */
  name: string;
  /** The queries, as `runBatch` takes them (each line's defaults already applied). */
  items: BatchItemRequest[];
  /** Turns running at once in each run. @default 10 */
  concurrency?: number;
  /** The task queue of every run, its shards and turns. @default the client's (`MCP_TURNS_TASK_QUEUE`, else `mcp-turns`) */
  taskQueue?: string;
  /** Every Claude call of each run's turns goes through Message Batches, as `runBatch` takes it. */
  messageBatches?: RunBatchOptions['messageBatches'];
  /** A run every this long (milliseconds, or `'1h'`, `'30m'`, `'1 day'`); exactly one of `every` and `cron`. */
  every?: Duration;
  /** A run at each time of this cron expression (5 fields, UTC; `@daily`, `@hourly` too); exactly one of `every` and `cron`. */
  cron?: string;
  /** What a run due while an earlier one still runs does. @default 'skip' */
  overlap?: BatchScheduleOverlap;
  /**
   * How late a run missed while the server was down (or the schedule could not act) may still
   * start; later ones are skipped. Set always, since Temporal's own default is 60 s. @default 1 h
   */
  catchupWindow?: Duration;
  /** A note kept with the schedule (shown by describe and list). */
  note?: string;
  /** Whose schedule it is: the schedule, its runs, their shards and turns carry the owner. */
  owner?: Owner;
}

/** When a schedule runs: `every` milliseconds, or at each time of `cron`. */
export type BatchScheduleSpec = { every: number } | { cron: string };

/** What a schedule's memo says of it (Temporal keeps a cron expression only compiled). */
type BatchScheduleMemo = BatchScheduleSpec & ScheduledBatchMemo;

/** The memo key of {@link BatchScheduleMemo}. */
const BATCH_SCHEDULE_MEMO = 'batchSchedule';

/** A run the schedule started, as its description keeps it (the last 10). */
export interface BatchScheduleAction {
  workflowId: string;
  /** ISO 8601: the time it was scheduled for (a trigger's: when it was triggered). */
  scheduledAt: string;
  /** ISO 8601: when the schedule started it. */
  takenAt: string;
}

/** A batch schedule as {@link listBatchSchedules} lists it. */
export interface ListedBatchSchedule {
  name: string;
  scheduleId: string;
  spec?: BatchScheduleSpec;
  /** The queries each run runs. */
  queries?: number;
  concurrency?: number;
  paused: boolean;
  note?: string;
  /** ISO 8601: the next time it runs (absent while paused). */
  nextRunAt?: string;
  /** The last run it started. */
  lastRun?: BatchScheduleAction;
  /** Whose it is (its owner's label), when it was created for someone. */
  owner?: string;
}

/** A batch schedule as {@link describeBatchSchedule} tells it. */
export interface BatchScheduleView extends ListedBatchSchedule {
  queries: number;
  concurrency: number;
  taskQueue: string;
  messageBatches?: BatchInput['messageBatches'];
  overlap: BatchScheduleOverlap;
  catchupWindowMs: number;
  /** ISO 8601: its next run times (a few). */
  nextRunTimes: string[];
  /** The runs it started last, oldest first (Temporal keeps 10; all its runs: `listBatchScheduleRuns`). */
  recentRuns: BatchScheduleAction[];
  /** Workflow ids of its runs still running. */
  runningRuns: string[];
  /** Runs started, runs skipped because one still ran, runs missed beyond the catch-up window. */
  runsStarted: number;
  skippedOverlap: number;
  missedCatchupWindow: number;
  /** ISO 8601. */
  createdAt: string;
}

const POLICY_OF: Readonly<Record<BatchScheduleOverlap, ScheduleOverlapPolicy>> = {
  skip: ScheduleOverlapPolicy.SKIP,
  'buffer-one': ScheduleOverlapPolicy.BUFFER_ONE,
  'buffer-all': ScheduleOverlapPolicy.BUFFER_ALL,
  'cancel-other': ScheduleOverlapPolicy.CANCEL_OTHER,
  'terminate-other': ScheduleOverlapPolicy.TERMINATE_OTHER,
  'allow-all': ScheduleOverlapPolicy.ALLOW_ALL,
};

function overlapOf(policy: ScheduleOverlapPolicy | undefined): BatchScheduleOverlap {
  return BATCH_SCHEDULE_OVERLAPS.find((o) => POLICY_OF[o] === policy) ?? 'skip';
}

/** Milliseconds of `value`, at least `minMs`; else the error naming `field`. */
function durationMs(value: Duration, field: 'every' | 'catchupWindow', minMs: number): number {
  let ms: number;
  try {
    ms = msToNumber(value);
  } catch {
    ms = Number.NaN;
  }
  if (!Number.isFinite(ms) || ms < minMs) {
    throw new InvalidBatchScheduleError(field, `must be a duration of at least ${minMs / 1000} s (milliseconds, or '90s', '30m', '2h', '1d'), got ${JSON.stringify(value)}`);
  }
  return ms;
}

/** The schedule's spec from the options; exactly one of `every` and `cron`. */
function specOf(options: Pick<CreateBatchScheduleOptions, 'every' | 'cron'>): BatchScheduleSpec {
  if ((options.every === undefined) === (options.cron === undefined)) {
    throw new InvalidBatchScheduleError(options.every === undefined ? 'every' : 'cron', `or ${options.every === undefined ? 'cron' : 'every'}: give exactly one of them`);
  }
  if (options.cron !== undefined) {
    if (!options.cron.trim()) throw new InvalidBatchScheduleError('cron', 'is empty: give an expression such as "0 2 * * *"');
    return { cron: options.cron.trim() };
  }
  return { every: durationMs(options.every!, 'every', 1000) };
}

function assertName(name: string): void {
  const problem = batchScheduleNameProblem(name);
  if (problem) throw new InvalidBatchScheduleError('name', problem);
}

/**
 * Creates the schedule `options.name`: its runs start as it says (the first at its first time: none
 * now; `triggerBatchSchedule` runs one at once). A name in use is {@link BatchScheduleExistsError};
 * a bad option, a cron expression Temporal refuses included, is {@link InvalidBatchScheduleError}.
 */
export async function createBatchSchedule(client: Client, options: CreateBatchScheduleOptions): Promise<BatchScheduleView> {
  assertName(options.name);
  const spec = specOf(options);
  const catchupWindowMs = durationMs(options.catchupWindow ?? DEFAULT_CATCHUP_WINDOW_MS, 'catchupWindow', MIN_CATCHUP_WINDOW_MS);
  const overlap = options.overlap ?? 'skip';
  if (!BATCH_SCHEDULE_OVERLAPS.includes(overlap)) throw new InvalidBatchScheduleError('overlap', `must be one of ${BATCH_SCHEDULE_OVERLAPS.join(', ')}, got "${String(overlap)}"`);
  if (!options.items.length) throw new InvalidBatchScheduleError('items', 'is empty: a schedule runs at least one query');
  const concurrency = options.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new InvalidBatchScheduleError('concurrency', `must be a positive integer, got ${concurrency}`);
  const messageBatches = messageBatchesInput(options.messageBatches);
  const input: ScheduledBatchInput = {
    schedule: options.name,
    items: wireItems(options.items),
    concurrency,
    taskQueue: taskQueueOf(client, options.taskQueue),
    ...(messageBatches ? { messageBatches } : {}),
  };
  const runMemo: ScheduledBatchMemo = { queries: input.items.length, concurrency };
  const scheduleId = batchScheduleId(options.name);
  const owned = ownerStartOptions(options.owner);
  try {
    await client.schedule.create<typeof scheduledBatch>({
      scheduleId,
      spec: 'every' in spec ? { intervals: [{ every: spec.every }] } : { cronExpressions: [spec.cron] },
      action: {
        type: 'startWorkflow',
        workflowType: SCHEDULED_BATCH_WORKFLOW,
        // Temporal appends each run's scheduled time: batch-schedule-nightly-2026-11-27T02:00:00Z.
        workflowId: scheduleId,
        taskQueue: input.taskQueue,
        args: [input],
        staticSummary: `schedule ${options.name}: ${input.items.length} queries, concurrency ${concurrency}` + (messageBatches ? ', through Message Batches' : ''),
        memo: { ...owned.memo, [SCHEDULED_BATCH_MEMO]: runMemo },
        typedSearchAttributes: ownerSearchAttributes(options.owner),
        // The owner's fairness key, as startBatch gives a batch's shards (the SDK's type lacks it; it sends it).
        ...(owned.priority ? { priority: owned.priority } : {}),
      },
      policies: { overlap: POLICY_OF[overlap], catchupWindow: catchupWindowMs },
      state: options.note !== undefined ? { note: options.note } : {},
      memo: { ...ownerMemo(options.owner), [BATCH_SCHEDULE_MEMO]: { ...spec, ...runMemo } satisfies BatchScheduleMemo },
      typedSearchAttributes: ownerSearchAttributes(options.owner),
    });
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) throw new BatchScheduleExistsError(options.name);
    // A cron expression the server cannot read: the SDK's TypeError for "Invalid schedule spec", or
    // its "Failed to create schedule" whose cause is the server's INVALID_ARGUMENT.
    if ('cron' in spec) {
      const cause = (err as { cause?: { code?: number; details?: string } } | undefined)?.cause;
      const why = err instanceof TypeError ? err.message : cause?.code === GRPC_INVALID_ARGUMENT ? (cause?.details ?? '') : undefined;
      if (why !== undefined) {
        throw new InvalidBatchScheduleError('cron', `"${spec.cron}" is not a cron expression Temporal reads${why ? ` (${why})` : ''}: give 5 fields, minute hour day month weekday in UTC, e.g. "0 2 * * *"`);
      }
    }
    throw err;
  }
  return describeBatchSchedule(client, options.name, options.owner ? { owner: options.owner } : {});
}

/** The handle and description of schedule `name`, when `scope` may see it; else {@link BatchScheduleNotFoundError}. */
async function visibleSchedule(client: Client, name: string, scope: BatchScheduleScope): Promise<{ handle: ScheduleHandle; description: ScheduleDescription }> {
  if (batchScheduleNameProblem(name)) throw new BatchScheduleNotFoundError(name);
  const handle = client.schedule.getHandle(batchScheduleId(name));
  let description: ScheduleDescription;
  try {
    description = await handle.describe();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new BatchScheduleNotFoundError(name);
    throw err;
  }
  if (scope.owner && description.typedSearchAttributes.get(SA_OWNER) !== scope.owner.key) throw new BatchScheduleNotFoundError(name);
  return { handle, description };
}

function actionOf(a: ScheduleDescription['info']['recentActions'][number]): BatchScheduleAction {
  return { workflowId: a.action.workflow.workflowId, scheduledAt: a.scheduledAt.toISOString(), takenAt: a.takenAt.toISOString() };
}

function memoOf(memo: Record<string, unknown> | undefined): { every?: number; cron?: string } & Partial<ScheduledBatchMemo> {
  const m = memo?.[BATCH_SCHEDULE_MEMO];
  return typeof m === 'object' && m !== null ? m : {};
}

/** What a schedule's list entry and its description share. */
function listed(summary: Pick<ScheduleSummary, 'scheduleId' | 'memo' | 'state' | 'info'>): ListedBatchSchedule {
  const memo = memoOf(summary.memo);
  const spec: BatchScheduleSpec | undefined = memo.cron !== undefined ? { cron: memo.cron } : memo.every !== undefined ? { every: memo.every } : undefined;
  const last = summary.info.recentActions.at(-1);
  const next = summary.info.nextActionTimes[0];
  const owner = ownerLabelOf(summary.memo);
  return {
    name: batchScheduleNameOf(summary.scheduleId) ?? summary.scheduleId,
    scheduleId: summary.scheduleId,
    ...(spec ? { spec } : {}),
    ...(memo.queries !== undefined ? { queries: memo.queries } : {}),
    ...(memo.concurrency !== undefined ? { concurrency: memo.concurrency } : {}),
    paused: summary.state.paused,
    ...(summary.state.note ? { note: summary.state.note } : {}),
    ...(next && !summary.state.paused ? { nextRunAt: next.toISOString() } : {}),
    ...(last ? { lastRun: actionOf(last) } : {}),
    ...(owner !== undefined ? { owner } : {}),
  };
}

/** Schedule `name` as it is now; {@link BatchScheduleNotFoundError} when there is none `scope` may see. */
export async function describeBatchSchedule(client: Client, name: string, scope: BatchScheduleScope = {}): Promise<BatchScheduleView> {
  const { description: d } = await visibleSchedule(client, name, scope);
  const input = d.action.args?.[0] as ScheduledBatchInput | undefined;
  const base = listed(d);
  return {
    ...base,
    queries: input?.items.length ?? base.queries ?? 0,
    concurrency: input?.concurrency ?? base.concurrency ?? DEFAULT_BATCH_CONCURRENCY,
    taskQueue: input?.taskQueue ?? d.action.taskQueue,
    ...(input?.messageBatches ? { messageBatches: input.messageBatches } : {}),
    overlap: overlapOf(d.policies.overlap),
    catchupWindowMs: d.policies.catchupWindow,
    nextRunTimes: d.state.paused ? [] : d.info.nextActionTimes.map((t) => t.toISOString()),
    recentRuns: d.info.recentActions.map(actionOf),
    runningRuns: d.info.runningActions.map((a) => a.workflow.workflowId),
    runsStarted: d.info.numActionsTaken,
    skippedOverlap: d.info.numActionsSkippedOverlap,
    missedCatchupWindow: d.info.numActionsMissedCatchupWindow,
    createdAt: d.info.createdAt.toISOString(),
  };
}

/**
 * The batch schedules `scope` may see, by name. Temporal lists schedules from visibility: one
 * created or changed a moment ago may be missing or show its previous state.
 */
export async function listBatchSchedules(client: Client, scope: BatchScheduleScope = {}): Promise<ListedBatchSchedule[]> {
  const rows: ListedBatchSchedule[] = [];
  const owner = scope.owner ? ownerClause({ admin: false, ownerKey: scope.owner.key }) : undefined;
  for await (const summary of client.schedule.list(owner ? { query: owner } : {})) {
    if (batchScheduleNameOf(summary.scheduleId) === undefined) continue;
    if (scope.owner && summary.typedSearchAttributes?.get(SA_OWNER) !== scope.owner.key) continue;
    rows.push(listed(summary));
  }
  return rows.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Starts a run of schedule `name` now. A run still running is met by `overlap`, the schedule's own
 * policy unless given (Temporal's default for a trigger, were none passed, would be to allow all):
 * with `skip`, the trigger is counted as skipped and nothing starts.
 */
export async function triggerBatchSchedule(client: Client, name: string, options: BatchScheduleScope & { overlap?: BatchScheduleOverlap } = {}): Promise<void> {
  const { handle, description } = await visibleSchedule(client, name, options);
  await handle.trigger(options.overlap ? POLICY_OF[options.overlap] : description.policies.overlap ?? ScheduleOverlapPolicy.SKIP);
}

/** Pauses schedule `name`: no run starts until it is resumed (a trigger still runs one). A run under way goes on. */
export async function pauseBatchSchedule(client: Client, name: string, options: BatchScheduleScope & { note?: string } = {}): Promise<void> {
  const { handle } = await visibleSchedule(client, name, options);
  await handle.pause(options.note ?? 'paused');
}

/** Resumes schedule `name`: its next run is at its next time (a time missed while paused is not run). */
export async function resumeBatchSchedule(client: Client, name: string, options: BatchScheduleScope & { note?: string } = {}): Promise<void> {
  const { handle } = await visibleSchedule(client, name, options);
  await handle.unpause(options.note ?? 'resumed');
}

/** Deletes schedule `name`. A run under way goes on to its end; its runs stay listed until Temporal's retention. */
export async function deleteBatchSchedule(client: Client, name: string, scope: BatchScheduleScope = {}): Promise<void> {
  const { handle } = await visibleSchedule(client, name, scope);
  try {
    await handle.delete();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new BatchScheduleNotFoundError(name);
    throw err;
  }
}
