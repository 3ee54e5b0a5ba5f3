/**
 * `mcp-turns schedule`: batches run by a Temporal Schedule (src/client/batch-schedules.ts). `add`
 * stores a JSONL file's queries with the schedule (the batch flags as `batch` takes them), so nothing
 * needs this machine at run time; `ls`, `runs`, `trigger`, `pause`, `resume` and `rm` act on it by
 * name. Bad flags, a bad file line, a cron expression Temporal refuses and an unknown schedule are one
 * line naming the flag or the name, exit code 2.
 */
import { Command } from 'commander';
import {
  createBatchSchedule,
  deleteBatchSchedule,
  describeBatchSchedule,
  listBatchSchedules,
  pauseBatchSchedule,
  resumeBatchSchedule,
  triggerBatchSchedule,
  type BatchScheduleSpec,
  type ListedBatchSchedule,
} from '../../client/batch-schedules';
import { listBatchScheduleRuns, type BatchScheduleRun } from '../../client/batch-schedule-runs';
import { BatchScheduleExistsError, BatchScheduleNotFoundError, InvalidBatchScheduleError, type BatchScheduleField } from '../../client/batch-schedule-errors';
import { liveWorkflowPollers } from '../../client/task-queue-pollers';
import { BATCH_SCHEDULE_OVERLAPS, batchScheduleNameProblem, type BatchScheduleOverlap } from '../../core/batch-schedule';
import { oneLine } from '../../core/text';
import type { Client } from '@temporalio/client';
import { addBatchFlags, batchFlagsOf, type BatchFlags } from '../batch-flags';
import { readBatchFile } from '../batch-file';
import { alignedTable } from '../aligned-table';
import { CliError, parsePositiveInt } from '../cli-error';
import { cliSettings } from '../cli-settings';
import { connectOrFail } from '../connect';
import { compactDuration } from '../duration';
import { EXIT } from '../exit-codes';
import { parseDurationMs } from '../message-batch-flags';

interface ConnectFlags {
  address?: string;
  namespace?: string;
}

interface AddFlags extends BatchFlags, ConnectFlags {
  every?: string;
  cron?: string;
  overlap?: string;
  catchupWindow?: string;
  note?: string;
  taskQueue?: string;
}

/** The flag each option of a schedule is given by, for a problem the client finds. */
const FLAG_OF: Readonly<Record<BatchScheduleField, string>> = {
  name: 'the schedule name',
  items: 'the file',
  concurrency: '--concurrency',
  every: '--every',
  cron: '--cron',
  overlap: '--overlap',
  catchupWindow: '--catchup-window',
};

const DURATION_FORMS = 'a duration such as 90s, 30m, 2h or 24h';

/** `value` of `flag` in milliseconds, at least `minMs`; else one line naming the flag, exit code 2. */
function durationFlag(value: string, flag: string, minMs: number): number {
  const ms = parseDurationMs(value);
  if (ms === undefined || ms < minMs) throw new CliError(`${flag} must be ${DURATION_FORMS}, at least ${minMs / 1000} s; got "${oneLine(value, 50)}"`, EXIT.badInput);
  return ms;
}

/** The schedule's name, if it is one; else one line, exit code 2. */
function checkedName(name: string): string {
  const problem = batchScheduleNameProblem(name);
  if (problem) throw new CliError(`the schedule name ${problem}`, EXIT.badInput);
  return name;
}

/** "every 1h", "cron 0 2 * * *". */
function specText(spec: BatchScheduleSpec | undefined): string {
  if (!spec) return '?';
  return 'every' in spec ? `every ${compactDuration(spec.every)}` : `cron ${spec.cron}`;
}

/** `2026-05-01 10:11:12` (UTC). */
function utc(iso: string | undefined): string {
  return iso ? iso.slice(0, 19).replace('T', ' ') : '';
}

/** `fn()`, with the client's refusals as the CLI's lines (exit code 2). */
async function asCliLines<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof InvalidBatchScheduleError) throw new CliError(`${FLAG_OF[err.field]} ${err.problem}`, EXIT.badInput);
    if (err instanceof BatchScheduleNotFoundError) throw new CliError(`${err.message} (\`mcp-turns schedule ls\` lists them)`, EXIT.notFound);
    if (err instanceof BatchScheduleExistsError) {
      throw new CliError(`schedule ${err.scheduleName} exists already: \`mcp-turns schedule rm ${err.scheduleName}\`, then add it again, replaces it; or give this one another name`, EXIT.badInput);
    }
    throw err;
  }
}

/** Runs `fn` with a client of the command's settings, closed after. */
async function withClient<T>(flags: ConnectFlags, command: Command, fn: (client: Client) => Promise<T>): Promise<T> {
  const { client } = await connectOrFail({ address: flags.address, namespace: flags.namespace }, cliSettings(command));
  try {
    return await asCliLines(() => fn(client));
  } finally {
    await client.connection.close();
  }
}

/** A line on stderr when no worker polls `taskQueue`: the schedule's runs wait until one does. */
async function warnWithoutWorker(client: Client, taskQueue: string): Promise<void> {
  const pollers = await liveWorkflowPollers(client, taskQueue).catch(() => undefined);
  if (pollers && !pollers.length) console.error(`no worker polls task queue ${taskQueue} now: runs wait until one does (\`mcp-turns worker\`)`);
}

function withConnectFlags(command: Command): Command {
  return command.option('--address <host:port>', 'Temporal address').option('--namespace <ns>', 'Temporal namespace');
}

function addCommand(): Command {
  const command = new Command('add')
    .description("store a JSONL file's queries as a batch run on a schedule (every <duration> or on a cron expression, UTC)")
    .argument('<name>', 'the schedule name; each run is the batch <name>-<UTC time>, e.g. nightly-20261127T020000Z')
    .argument('<file>', 'JSONL: one {"id"?, "question", ...overrides} per line, read now and stored with the schedule')
    .option('--every <duration>', `a run every ${DURATION_FORMS} (or --cron)`)
    .option('--cron <expr>', 'a run at each time of a cron expression in UTC, e.g. "0 2 * * *" (or --every)');
  addBatchFlags(command)
    .option('--overlap <policy>', `a run due while one still runs: ${BATCH_SCHEDULE_OVERLAPS.join(' | ')} (default skip)`)
    .option('--catchup-window <duration>', 'a run missed while Temporal was down still starts up to this late (default 1h)')
    .option('--note <text>', 'a note kept with the schedule')
    .option('--task-queue <queue>', 'task queue of its runs (default mcp-turns or MCP_TURNS_TASK_QUEUE)');
  return withConnectFlags(command).action(async (name: string, file: string, opts: AddFlags, cmd: Command) => {
    checkedName(name);
    if ((opts.every === undefined) === (opts.cron === undefined)) {
      throw new CliError(`give exactly one of --every <duration> and --cron "<expr>"${opts.every !== undefined ? ', not both' : ''}`, EXIT.badInput);
    }
    const every = opts.every !== undefined ? durationFlag(opts.every, '--every', 1000) : undefined;
    const catchupWindow = opts.catchupWindow !== undefined ? durationFlag(opts.catchupWindow, '--catchup-window', 10_000) : undefined;
    if (opts.overlap !== undefined && !(BATCH_SCHEDULE_OVERLAPS as readonly string[]).includes(opts.overlap)) {
      throw new CliError(`--overlap must be one of ${BATCH_SCHEDULE_OVERLAPS.join(', ')}, got "${oneLine(opts.overlap, 50)}"`, EXIT.badInput);
    }
    const { concurrency, defaults, messageBatches } = batchFlagsOf(opts);
    const { items, problems } = readBatchFile(file, defaults);
    // A schedule runs its file every time: a bad line is fixed now, not skipped at every run.
    if (problems.length) {
      throw new CliError(`${file}: ${problems.length} bad line${problems.length > 1 ? 's' : ''}: fix ${problems.length > 1 ? 'them' : 'it'}, nothing was scheduled`, EXIT.badInput, problems.map((p) => `${file}:${p.line}: ${p.message}`));
    }
    if (!items.length) throw new CliError(`${file}: no query lines, nothing was scheduled`, EXIT.badInput);
    await withClient(opts, cmd, async (client) => {
      const view = await createBatchSchedule(client, {
        name,
        items,
        concurrency,
        ...(opts.taskQueue !== undefined ? { taskQueue: opts.taskQueue } : {}),
        ...(messageBatches ? { messageBatches } : {}),
        ...(every !== undefined ? { every } : { cron: opts.cron! }),
        ...(opts.overlap !== undefined ? { overlap: opts.overlap as BatchScheduleOverlap } : {}),
        ...(catchupWindow !== undefined ? { catchupWindow } : {}),
        ...(opts.note !== undefined ? { note: opts.note } : {}),
      });
      console.log(
        `schedule ${name}: ${view.queries} queries, concurrency ${view.concurrency}, ${specText(view.spec)} (next run ${utc(view.nextRunTimes[0])} UTC), ` +
          `overlap ${view.overlap}, catch-up window ${compactDuration(view.catchupWindowMs)}, task queue ${view.taskQueue}`,
      );
      console.log(`each run is the batch ${name}-<UTC time>: \`mcp-turns schedule runs ${name}\` lists them, \`mcp-turns schedule trigger ${name}\` runs one now`);
      await warnWithoutWorker(client, view.taskQueue);
    });
  });
}

/** The schedules as a table: NAME, WHEN, QUERIES, STATE, NEXT RUN, LAST RUN, and NOTE and OWNER when any has one. */
export function scheduleTable(rows: ListedBatchSchedule[]): string {
  const notes = rows.some((r) => r.note);
  const owners = rows.some((r) => r.owner !== undefined);
  return alignedTable([
    ['NAME', 'WHEN', 'QUERIES', 'STATE', 'NEXT RUN (UTC)', 'LAST RUN (UTC)', ...(owners ? ['OWNER'] : []), ...(notes ? ['NOTE'] : [])],
    ...rows.map((r) => [
      r.name,
      specText(r.spec),
      r.queries !== undefined ? String(r.queries) : '',
      r.paused ? 'paused' : 'active',
      utc(r.nextRunAt),
      utc(r.lastRun?.scheduledAt),
      ...(owners ? [r.owner ?? ''] : []),
      ...(notes ? [oneLine(r.note ?? '', 60)] : []),
    ]),
  ]);
}

function lsCommand(): Command {
  return withConnectFlags(
    new Command('ls')
      .description('list the batch schedules (from visibility: a moment behind)')
      .option('--json', 'print an array of {name, scheduleId, spec, queries, concurrency, paused, note, nextRunAt, lastRun, owner}'),
  ).action(async (opts: ConnectFlags & { json?: boolean }, cmd: Command) => {
    await withClient(opts, cmd, async (client) => {
      const rows = await listBatchSchedules(client);
      if (opts.json) console.log(JSON.stringify(rows, null, 2));
      else console.log(rows.length ? scheduleTable(rows) : 'no batch schedule (`mcp-turns schedule add` makes one)');
    });
  });
}

/** A run's counts in words: `40 completed, 2 failed, 0 skipped of 42 (3 running)`. */
function countsText(run: BatchScheduleRun): string {
  const c = run.counts;
  if (!c) return run.error ? oneLine(run.error, 120) : '';
  return `${c.completed} completed, ${c.failed} failed, ${c.skipped} skipped of ${c.total}${c.running ? ` (${c.running} running)` : ''}`;
}

/** The runs as a table: BATCH, STATUS, STARTED (UTC), COUNTS. */
export function runTable(runs: BatchScheduleRun[]): string {
  return alignedTable([['BATCH', 'STATUS', 'STARTED (UTC)', 'COUNTS'], ...runs.map((r) => [r.batch, r.status, utc(r.startTime), countsText(r)])]);
}

function runsCommand(): Command {
  return withConnectFlags(
    new Command('runs')
      .description("a schedule's runs, newest first: each run's batch, start, status and counts (from visibility: a moment behind)")
      .argument('<name>', 'the schedule name')
      .option('--limit <n>', 'at most n runs (default 20)')
      .option('--json', 'print an array of {workflowId, runId, batch, status, startTime, closeTime, counts, error}'),
  ).action(async (name: string, opts: ConnectFlags & { json?: boolean; limit?: string }, cmd: Command) => {
    const limit = opts.limit !== undefined ? parsePositiveInt(opts.limit, '--limit') : undefined;
    await withClient(opts, cmd, async (client) => {
      const runs = await listBatchScheduleRuns(client, name, limit !== undefined ? { limit } : {});
      if (opts.json) console.log(JSON.stringify(runs, null, 2));
      else if (!runs.length) console.log(`schedule ${name} has no run yet (\`mcp-turns schedule trigger ${name}\` runs one now)`);
      else console.log(`${runTable(runs)}\nanswers: \`mcp-turns batch results <batch>\``);
    });
  });
}

function triggerCommand(): Command {
  return withConnectFlags(
    new Command('trigger')
      .description("run a schedule's batch now; a run still running is met by the schedule's overlap policy (skip: nothing starts)")
      .argument('<name>', 'the schedule name'),
  ).action(async (name: string, opts: ConnectFlags, cmd: Command) => {
    await withClient(opts, cmd, async (client) => {
      await triggerBatchSchedule(client, name);
      const view = await describeBatchSchedule(client, name);
      console.log(`triggered schedule ${name} (overlap ${view.overlap}): \`mcp-turns schedule runs ${name}\` follows its run`);
      await warnWithoutWorker(client, view.taskQueue);
    });
  });
}

function pauseCommand(): Command {
  return withConnectFlags(
    new Command('pause')
      .description('pause a schedule: no run starts until it is resumed (a run under way goes on; trigger still runs one)')
      .argument('<name>', 'the schedule name')
      .option('--note <text>', 'why, kept with the schedule'),
  ).action(async (name: string, opts: ConnectFlags & { note?: string }, cmd: Command) => {
    await withClient(opts, cmd, async (client) => {
      await pauseBatchSchedule(client, name, opts.note !== undefined ? { note: opts.note } : {});
      console.log(`paused schedule ${name}`);
    });
  });
}

function resumeCommand(): Command {
  return withConnectFlags(
    new Command('resume')
      .description('resume a paused schedule: its next run is at its next time')
      .argument('<name>', 'the schedule name')
      .option('--note <text>', 'a note kept with the schedule'),
  ).action(async (name: string, opts: ConnectFlags & { note?: string }, cmd: Command) => {
    await withClient(opts, cmd, async (client) => {
      await resumeBatchSchedule(client, name, opts.note !== undefined ? { note: opts.note } : {});
      const view = await describeBatchSchedule(client, name);
      console.log(`resumed schedule ${name}: next run ${utc(view.nextRunTimes[0])} UTC`);
    });
  });
}

function rmCommand(): Command {
  return withConnectFlags(
    new Command('rm').description('delete a schedule (a run under way goes on to its end)').argument('<name>', 'the schedule name'),
  ).action(async (name: string, opts: ConnectFlags, cmd: Command) => {
    await withClient(opts, cmd, async (client) => {
      await deleteBatchSchedule(client, name);
      console.log(`deleted schedule ${name}`);
    });
  });
}

export function scheduleCommand(): Command {
  return new Command('schedule')
    .description('batches run on a schedule by Temporal (every <duration> or on a cron expression): add, ls, runs, trigger, pause, resume, rm')
    .addCommand(addCommand())
    .addCommand(lsCommand())
    .addCommand(runsCommand())
    .addCommand(triggerCommand())
    .addCommand(pauseCommand())
    .addCommand(resumeCommand())
    .addCommand(rmCommand());
}
