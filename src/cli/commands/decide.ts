import { Command } from 'commander';
import { ApprovalDecisionError, InvalidAnswerError, approveToolCall, denyToolCall } from '../../client/approvals';
import { decidedLine } from '../approval-lines';
import { CliError } from '../cli-error';
import { EXIT } from '../exit-codes';
import { connectOrFail } from '../connect';
import { cliSettings } from '../cli-settings';
import { deciderIdentity } from '../decider-identity';

interface DecideOptions {
  reason?: string;
  as?: string;
  address?: string;
  namespace?: string;
}

/** `approve` or `deny`: one call of a turn, or every call of it waiting now. */
function decisionCommand(verb: 'approve' | 'deny'): Command {
  const approve = verb === 'approve';
  return new Command(verb)
    .description(
      approve
        ? 'approve a tool call waiting for approval (without a call id: every waiting call of the turn); it runs at once'
        : 'deny a tool call waiting for approval (without a call id: every waiting call of the turn); Claude is told, with the reason',
    )
    .argument('<turn>', 'the turn (workflow id)')
    .argument('[call]', 'the tool call id (see `mcp-turns approvals`)')
    .option('--reason <text>', approve ? 'why (recorded with the decision)' : 'why (Claude receives it)')
    .option('--as <name>', 'who decides (default: user@host)')
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (turnId: string, callId: string | undefined, opts: DecideOptions, command: Command) => {
      const settings = cliSettings(command);
      const decision = { identity: deciderIdentity(opts.as), ...(opts.reason !== undefined ? { reason: opts.reason } : {}) };
      const { client } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings);
      try {
        const decided = await (approve ? approveToolCall : denyToolCall)(client, turnId, callId, decision).catch((err: unknown) => {
          // A call waiting for input is answered with `respond`: approving one whose form asks for values is bad input.
          if (err instanceof InvalidAnswerError) throw new CliError(`cannot ${verb}: ${err.message} (mcp-turns respond ${turnId} ${callId ?? '<call>'} --data '<json>')`, EXIT.badInput);
          if (err instanceof ApprovalDecisionError) throw new CliError(`cannot ${verb}: ${err.message}`, err.notFound ? EXIT.notFound : EXIT.failed);
          throw err;
        });
        for (const record of decided) console.log(decidedLine(turnId, record));
      } finally {
        await client.connection.close();
      }
    });
}

export function approveCommand(): Command {
  return decisionCommand('approve');
}

export function denyCommand(): Command {
  return decisionCommand('deny');
}
