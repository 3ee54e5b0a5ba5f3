import { Command } from 'commander';
import { ApprovalDecisionError, InvalidAnswerError, answerToolCall, denyToolCall } from '../../client/approvals';
import { isRecord } from '../../core/is-record';
import { oneLine } from '../../core/text';
import { decidedLine } from '../approval-lines';
import { CliError } from '../cli-error';
import { EXIT } from '../exit-codes';
import { connectOrFail } from '../connect';
import { cliSettings } from '../cli-settings';
import { deciderIdentity } from '../decider-identity';

interface RespondOptions {
  data?: string;
  decline?: boolean;
  done?: boolean;
  reason?: string;
  as?: string;
  address?: string;
  namespace?: string;
}

/** What `respond` was asked to send: the answer to a form, done (a URL question), or a decline. */
export type Response = { answer: Record<string, unknown> } | { done: true } | { decline: true };

/** How much of a bad `--data` a refusal repeats. */
const DATA_CHARS = 100;

/** The response the flags ask for; a CliError (exit 2) when they ask for none, several, or `--data` is no JSON object. */
export function responseOf(opts: Pick<RespondOptions, 'data' | 'decline' | 'done'>): Response {
  const given = [opts.data !== undefined && '--data', opts.decline && '--decline', opts.done && '--done'].filter((f): f is string => typeof f === 'string');
  if (given.length !== 1) {
    throw new CliError(
      given.length
        ? `respond takes one of ${given.join(', ')}, not ${given.length === 2 ? 'both' : 'all of them'}`
        : "respond needs --data '<json>' (the answer to a form), --done (a URL visited) or --decline",
      EXIT.badInput,
    );
  }
  if (opts.decline) return { decline: true };
  if (opts.done) return { done: true };
  let parsed: unknown;
  try {
    parsed = JSON.parse(opts.data!);
  } catch (err) {
    throw new CliError(`--data ${JSON.stringify(oneLine(opts.data!, DATA_CHARS))}: not JSON (${(err as Error).message})`, EXIT.badInput);
  }
  if (!isRecord(parsed)) throw new CliError(`--data ${JSON.stringify(oneLine(opts.data!, DATA_CHARS))}: the answer is a JSON object of the form's fields`, EXIT.badInput);
  return { answer: parsed };
}

export function respondCommand(): Command {
  return new Command('respond')
    .description("answer a tool call waiting for input (a server's questions, see `mcp-turns approvals`): the call is sent to the server again with the answer")
    .argument('<turn>', 'the turn (workflow id)')
    .argument('<call>', 'the tool call id (see `mcp-turns approvals`)')
    .option('--data <json>', "the answer: a JSON object of the form's fields (several forms: each form's object by its key), checked against the server's schema before it is sent")
    .option('--done', 'the URL the server asked to visit was visited')
    .option('--decline', 'decline: the server is told the person declined')
    .option('--reason <text>', 'why (recorded with the response)')
    .option('--as <name>', 'who answers (default: user@host)')
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (turnId: string, callId: string, opts: RespondOptions, command: Command) => {
      const response = responseOf(opts);
      const settings = cliSettings(command);
      const options = { identity: deciderIdentity(opts.as), ...(opts.reason !== undefined ? { reason: opts.reason } : {}) };
      const { client } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings);
      try {
        const decided = await ('decline' in response
          ? denyToolCall(client, turnId, callId, options)
          : answerToolCall(client, turnId, callId, 'answer' in response ? response.answer : undefined, options)
        ).catch((err: unknown) => {
          if (err instanceof InvalidAnswerError) throw new CliError(`cannot answer: ${err.message}`, EXIT.badInput);
          if (err instanceof ApprovalDecisionError) throw new CliError(`cannot ${'decline' in response ? 'decline' : 'answer'}: ${err.message}`, err.notFound ? EXIT.notFound : EXIT.failed);
          throw err;
        });
        for (const record of decided) console.log(decidedLine(turnId, record));
      } finally {
        await client.connection.close();
      }
    });
}
