/**
 * `mcp-turns cancel <turn|conversation|batch>`: cancels what the name stands for (see
 * src/client/cancel.ts) and waits until it has closed, one line per workflow:
 * `cancelled turn turn-… (was running for 12 s)`. A workflow that has already ended is left as it
 * is and said so; that is no error (exit 0), as nothing named runs any more. Exit 1 when the name
 * stands for nothing, when no worker can run a workflow now (said why at once; `--terminate` ends
 * it), or when a workflow has not closed within the wait.
 */
import { Command } from 'commander';
import { cancelByName, DEFAULT_CANCEL_WAIT_MS, NotMcpTurnsWorkflowError, NothingToCancelError, type CancelOutcome } from '../../client/cancel';
import { formatDuration } from '../duration';
import { CliError, parsePositiveInt } from '../cli-error';
import { connectOrFail } from '../connect';
import { cliSettings } from '../cli-settings';
import { EXIT } from '../exit-codes';
import { oneLine } from '../../core/text';

interface CancelOptions {
  wait?: string;
  terminate?: boolean;
  json?: boolean;
  address?: string;
  namespace?: string;
}

/** One workflow's line. */
export function cancelLine(o: CancelOutcome, waitedMs: number): string {
  const what = `${o.type} ${o.id}`;
  const ran = formatDuration(o.ranForMs / 1000);
  switch (o.outcome) {
    case 'cancelled':
      return `cancelled ${what} (was running for ${ran})`;
    case 'already-ended':
      return `${what} had already ended (${o.status}): nothing to cancel`;
    case 'ended-otherwise':
      return `${what} ended ${o.status} before the cancel took effect (ran for ${ran})`;
    case 'still-running':
      return `${what} still runs ${formatDuration(waitedMs / 1000)} after the cancel: is a worker running on task queue ${o.taskQueue}?`;
    case 'blocked': {
      const why = [
        ...(o.health?.failingTask ? [`its workflow task fails (attempt ${o.health.failingTask.attempt - 1}): ${oneLine(o.health.failingTask.message, 300)}`] : []),
        ...(o.health?.noWorker ? [`no worker polls its task queue ${o.taskQueue}`] : []),
      ];
      return `${what} cannot carry the cancel out now: ${why.join('; ')}. The cancel is recorded and takes effect once a worker runs it; \`mcp-turns cancel ${o.id} --terminate\` ends it now`;
    }
    case 'terminated':
      return `terminated ${what} (was running for ${ran})`;
  }
}

export function cancelCommand(): Command {
  return new Command('cancel')
    .description('cancel a turn, a conversation or a batch (by its name or workflow id) and wait until it has ended')
    .argument('<name>', 'a turn or conversation id, a batch name, or a batch workflow id')
    .option('--wait <seconds>', `how long to wait for it to end (default ${DEFAULT_CANCEL_WAIT_MS / 1000})`)
    .option('--terminate', 'end it at once, without a worker and without its cleanup (a running Claude or tool call is abandoned)')
    .option('--json', 'print an array of {id, type, outcome, status, ranForMs, parent, taskQueue, health}')
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (name: string, opts: CancelOptions, command: Command) => {
      const settings = cliSettings(command);
      const waitMs = opts.wait !== undefined ? parsePositiveInt(opts.wait, '--wait') * 1000 : DEFAULT_CANCEL_WAIT_MS;
      const { client } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings);
      try {
        const outcomes = await cancelByName(client, name, { waitMs, terminate: opts.terminate === true }).catch((err: unknown) => {
          if (err instanceof NothingToCancelError) throw new CliError(err.message, EXIT.notFound);
          if (err instanceof NotMcpTurnsWorkflowError) throw new CliError(err.message, EXIT.badInput);
          throw err;
        });
        if (opts.json) console.log(JSON.stringify(outcomes, null, 2));
        else for (const o of outcomes) console.log(cancelLine(o, waitMs));
        if (outcomes.some((o) => o.outcome === 'still-running' || o.outcome === 'blocked')) process.exitCode = EXIT.failed;
      } finally {
        await client.connection.close();
      }
    });
}
