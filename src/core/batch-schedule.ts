/**
 * Batch schedules: a batch of queries run by a Temporal Schedule, each run a `scheduledBatch`
 * workflow that starts the batch's shards as its children. The schedule's id, the name of each
 * run's batch, what the schedule stores with it (the run's argument) and what a run returns, shared
 * by the workflow, the client and the CLI. Sandbox-safe. The run's argument is stored once, when the
 * schedule is created or updated, and read by every run for as long as the schedule lives, so the
 * storage drivers keep it out of the age-based clean-up (src/storage/kept-area.ts).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { BatchInput, BatchItem } from './batch';

/** The workflow type of a schedule's runs (workflows/scheduled-batch.ts). */
export const SCHEDULED_BATCH_WORKFLOW = 'scheduledBatch';

/** A schedule's id is this prefix and its name. */
export const BATCH_SCHEDULE_ID_PREFIX = 'batch-schedule-';

export function batchScheduleId(name: string): string {
  return `${BATCH_SCHEDULE_ID_PREFIX}${name}`;
}

/** The name of the schedule of id `scheduleId`; undefined for a schedule that is not a batch schedule. */
export function batchScheduleNameOf(scheduleId: string): string | undefined {
  return scheduleId.startsWith(BATCH_SCHEDULE_ID_PREFIX) ? scheduleId.slice(BATCH_SCHEDULE_ID_PREFIX.length) : undefined;
}

/** `20261127T020000Z`: the UTC time of a run, to the second, as its batch name ends. */
export function compactUtc(at: Date): string {
  return at.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
}

/** A run's batch name: the schedule's name and the run's scheduled time, `nightly-20261127T020000Z`. */
export function scheduledBatchName(schedule: string, scheduledAt: Date): string {
  return `${schedule}-${compactUtc(scheduledAt)}`;
}

/** Batch names are at most 100 characters: a schedule's name leaves room for `-` and the time. */
export const MAX_BATCH_SCHEDULE_NAME_LENGTH = 100 - '-20261127T020000Z'.length;

/** The characters of a schedule's name (a batch name's: `BATCH_NAME_PATTERN`), its length aside. */
export const BATCH_SCHEDULE_NAME_CHARACTERS = /^[A-Za-z0-9._-]+$/;

/** What is wrong with `name` as a schedule's name, in a phrase; undefined when it is fine. */
export function batchScheduleNameProblem(name: string): string | undefined {
  if (!BATCH_SCHEDULE_NAME_CHARACTERS.test(name)) return `must be characters of A-Z a-z 0-9 . _ -, got "${name.slice(0, 120)}"`;
  if (name.length > MAX_BATCH_SCHEDULE_NAME_LENGTH) {
    return `must be at most ${MAX_BATCH_SCHEDULE_NAME_LENGTH} characters (each run's batch is named <name>-20261127T020000Z, at most 100), got ${name.length}`;
  }
  return undefined;
}

/**
 * Set by Temporal on a workflow a schedule starts: the time the run was scheduled for (a trigger's:
 * when it was triggered), and the schedule's id.
 */
export const SA_SCHEDULED_START_TIME = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);
export const SA_SCHEDULED_BY_ID = defineSearchAttributeKey('TemporalScheduledById', SearchAttributeType.KEYWORD);

/** What to do with a run that is due while an earlier one still runs (Temporal's overlap policies). */
export const BATCH_SCHEDULE_OVERLAPS = ['skip', 'buffer-one', 'buffer-all', 'cancel-other', 'terminate-other', 'allow-all'] as const;

export type BatchScheduleOverlap = (typeof BATCH_SCHEDULE_OVERLAPS)[number];

/**
 * The argument of every run, stored with the schedule (External Storage takes it when it is large):
 * the batch as `startBatch` would start it.
 */
export interface ScheduledBatchInput {
  /** The schedule's name: each run's batch is `<schedule>-<UTC scheduled time>`. */
  schedule: string;
  /** The queries, with the batch's defaults applied and `output` as JSON Schema. */
  items: BatchItem[];
  /** Turns running at once, over all shards. */
  concurrency: number;
  /** The task queue of the batch's shards and turns. */
  taskQueue: string;
  messageBatches?: BatchInput['messageBatches'];
}

/** What a run returns: its batch and the counts summed over its shards. */
export interface ScheduledBatchResult {
  batch: string;
  total: number;
  completed: number;
  failed: number;
  /** Finished (or running) from an earlier run of the same batch: not run again. */
  skipped: number;
}

/**
 * The memo key of what each run's memo says of its batch (`{ queries, concurrency }`), by which a
 * running run's shards are found without asking it.
 */
export const SCHEDULED_BATCH_MEMO = 'scheduledBatch';

export interface ScheduledBatchMemo {
  queries: number;
  concurrency: number;
}
