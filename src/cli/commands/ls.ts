/**
 * `mcp-turns ls`: recent turns, conversations and batches, newest first, from visibility (see
 * src/client/workflow-list.ts): an aligned table, or with `--json` an array of objects.
 */
import { Command } from 'commander';
import { listWorkflows, DEFAULT_LIST_LIMIT, type ListedWorkflow, type WorkflowListFilter } from '../../client/workflow-list';
import { RUN_STATUSES, type RunStatus } from '../../client/run-status';
import { WORKFLOW_KINDS, type WorkflowKind } from '../../client/workflow-kind';
import { WAITING_APPROVAL_STATUS } from '../../core/run-status';
import { oneLine } from '../../core/text';
import { formatDuration } from '../duration';
import { alignedTable } from '../aligned-table';
import { CliError, parsePositiveInt } from '../cli-error';
import { connectOrFail } from '../connect';
import { cliSettings } from '../cli-settings';
import { EXIT } from '../exit-codes';

interface LsOptions {
  status?: string;
  batch?: string;
  waiting?: boolean;
  type?: string;
  limit?: string;
  json?: boolean;
  address?: string;
  namespace?: string;
}

/** Summary shown per row. */
const SUMMARY_CHARS = 60;

/** `value` if it is one of `allowed`, else a CliError (exit 2) naming the flag and the allowed values. */
function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new CliError(`${flag} must be one of ${allowed.join(', ')}, got "${value}"`, EXIT.badInput);
}

/** The filter the flags ask for; bad values are exit 2. */
export function lsFilter(opts: LsOptions): WorkflowListFilter {
  let status = opts.status !== undefined ? oneOf<RunStatus>('--status', opts.status, RUN_STATUSES) : undefined;
  if (opts.waiting) {
    if (status !== undefined && status !== WAITING_APPROVAL_STATUS) {
      throw new CliError(`--waiting lists the turns waiting for approval: it cannot go with --status ${status}`, EXIT.badInput);
    }
    status = WAITING_APPROVAL_STATUS;
  }
  return {
    ...(status !== undefined ? { status } : {}),
    ...(opts.type !== undefined ? { kind: oneOf<WorkflowKind>('--type', opts.type, WORKFLOW_KINDS) } : {}),
    ...(opts.batch !== undefined ? { batch: opts.batch } : {}),
    limit: opts.limit !== undefined ? parsePositiveInt(opts.limit, '--limit') : DEFAULT_LIST_LIMIT,
  };
}

/** `2026-05-01 10:11:12` (UTC, as Temporal's times are). */
function startedAt(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}

/** The rows as an aligned table: ID, TYPE, STATUS, STARTED (UTC), DURATION (so far, while it runs), SUMMARY. */
export function workflowTable(rows: ListedWorkflow[], now = Date.now()): string {
  const table = [
    ['ID', 'TYPE', 'STATUS', 'STARTED (UTC)', 'DURATION', 'SUMMARY'],
    ...rows.map((r) => [
      r.id,
      r.type,
      r.status,
      startedAt(r.startTime),
      formatDuration(((r.closeTime ? Date.parse(r.closeTime) : now) - Date.parse(r.startTime)) / 1000),
      r.summary !== undefined ? oneLine(r.summary, SUMMARY_CHARS) : '',
    ]),
  ];
  return alignedTable(table);
}

export function lsCommand(): Command {
  return new Command('ls')
    .description('list recent turns, conversations and batches, newest first (from visibility: a moment behind)')
    .option('--status <status>', `only this status: ${RUN_STATUSES.join(', ')} (running includes ${WAITING_APPROVAL_STATUS})`)
    .option('--waiting', `only the turns waiting for approval (as --status ${WAITING_APPROVAL_STATUS})`)
    .option('--type <type>', `only this kind: ${WORKFLOW_KINDS.join(', ')}`)
    .option('--batch <name>', "only this batch's workflows and turns")
    .option('--limit <n>', `at most n rows (default ${DEFAULT_LIST_LIMIT})`)
    .option('--json', 'print an array of {id, type, status, startTime, closeTime, batch, summary, blocked}')
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (opts: LsOptions, command: Command) => {
      const settings = cliSettings(command);
      const filter = lsFilter(opts);
      const { client } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings);
      try {
        const rows = await listWorkflows(client, filter);
        if (opts.json) console.log(JSON.stringify(rows, null, 2));
        else if (!rows.length) console.log('no turn, conversation or batch to list');
        else {
          console.log(workflowTable(rows));
          // Runs that cannot make progress, and why, under the table.
          for (const row of rows) for (const line of row.blocked ?? []) console.log(`${row.id}: ${line}`);
        }
      } finally {
        await client.connection.close();
      }
    });
}
