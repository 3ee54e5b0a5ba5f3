import { Command } from 'commander';
import { listPendingApprovals, type PendingApproval } from '../../client/approvals';
import { oneLine } from '../../core/text';
import { connectOrFail } from '../connect';
import { cliSettings } from '../cli-settings';
import { connectionArgs } from '../approval-prompt';
import { inputWaitLines } from '../input-request-lines';

interface ApprovalsOptions {
  batch?: string;
  json?: boolean;
  address?: string;
  namespace?: string;
}

/** Arguments shown per row. */
const INPUT_CHARS = 60;

/** `12s`, `5m`, `3h`, `2d`: how long a call has waited. */
export function waitedFor(since: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/**
 * The waiting calls as an aligned table: turn id, call id, tool, arguments (shortened), waiting
 * since. A call waiting for input (the server's questions) is followed by lines saying so: the
 * server's message, each form's fields or the URL, and the `respond` commands (with
 * `connectionArgs`) that answer and decline it.
 */
export function approvalsTable(pending: PendingApproval[], now = Date.now(), connectionArgs: string[] = []): string {
  const rows = [
    ['TURN', 'CALL', 'TOOL', 'ARGUMENTS', 'WAITING SINCE'],
    ...pending.map((p) => [
      p.turnId,
      p.callId,
      p.name,
      oneLine(p.inputPreview ?? JSON.stringify(p.input ?? {}), INPUT_CHARS),
      `${p.requestedAt} (${waitedFor(p.requestedAt, now)} ago${p.timeoutMs !== undefined ? `, ${p.kind === 'input' ? 'declined' : 'denied'} after ${Math.round(p.timeoutMs / 1000)}s` : ''})`,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(rows[0]!), ...pending.flatMap((p, i) => [line(rows[i + 1]!), ...(p.kind === 'input' ? inputWaitLines(p, connectionArgs) : [])])].join('\n');
}

export function approvalsCommand(): Command {
  return new Command('approvals')
    .description("list the tool calls waiting for a person, across turns and batches: for approval, or (kind: input) for answers to a server's questions")
    .option('--batch <name>', 'only the turns of this batch')
    .option('--json', "print the waiting calls as JSON, each with its arguments as Claude gave them (`input`) and, waiting for input, the server's questions (`kind`, `requests`)")
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (opts: ApprovalsOptions, command: Command) => {
      const settings = cliSettings(command);
      const { client } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings);
      try {
        // The table shows the arguments shortened: arguments (and questions) too large for the memo are read from their turn only for --json.
        const pending = await listPendingApprovals(client, { ...(opts.batch !== undefined ? { batch: opts.batch } : {}), fullInput: opts.json === true });
        if (opts.json) console.log(JSON.stringify(pending, null, 2));
        else if (!pending.length) console.log(`no tool call waits for approval${opts.batch !== undefined ? ` in batch ${opts.batch}` : ''}`);
        else console.log(approvalsTable(pending, Date.now(), connectionArgs(opts)));
      } finally {
        await client.connection.close();
      }
    });
}
