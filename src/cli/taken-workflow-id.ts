/**
 * The one line for `run --id ID` when a workflow has that id already (a turn id is used once): a
 * running one is followed with `watch`, a closed one printed with `show`; either way another --id
 * starts a new turn. Exit code 2: the flag is the problem, and nothing was started.
 */
import type { Client } from '@temporalio/client';
import { describeId, endedPhrase, type IdDescription } from '../client/describe-id';
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';

export async function takenIdError(client: Client, id: string): Promise<CliError> {
  let described: IdDescription | undefined;
  try {
    described = await describeId(client, id);
  } catch {
    described = undefined;
  }
  if (!described) return new CliError(`workflow id ${id} is taken: choose another --id`, EXIT.badInput);
  const what = described.kind === 'turn' ? `turn ${id}` : `${id} (a ${described.type} workflow)`;
  if (described.running)
    return new CliError(
      `${what} is already running: \`mcp-turns watch ${id}\` follows it, or choose another --id`,
      EXIT.badInput,
    );
  return new CliError(
    `${what} has already run (${endedPhrase(described)}): \`mcp-turns show ${id}\` prints it, or choose another --id`,
    EXIT.badInput,
  );
}
