/**
 * The one line for `run --id ID` when a workflow has that id already (a turn id is used once): a
 * running one is followed with `watch`, a closed one printed with `show`; either way another --id
 * starts a new turn. Exit code 2: the flag is the problem, and nothing was started.
 */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { kindOfWorkflowType } from '../client/workflow-kind';
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';

export async function takenIdError(client: Client, id: string): Promise<CliError> {
  let described: WorkflowExecutionDescription;
  try {
    described = await client.workflow.getHandle(id).describe();
  } catch {
    return new CliError(`workflow id ${id} is taken: choose another --id`, EXIT.badInput);
  }
  const what = kindOfWorkflowType(described.type) === 'turn' ? `turn ${id}` : `${id} (a ${described.type} workflow)`;
  if (described.status.name === 'RUNNING')
    return new CliError(
      `${what} is already running: \`mcp-turns watch ${id}\` follows it, or choose another --id`,
      EXIT.badInput,
    );
  const closed = `${described.status.name.toLowerCase()}${described.closeTime ? ` at ${described.closeTime.toISOString()}` : ''}`;
  return new CliError(
    `${what} has already run (${closed}): \`mcp-turns show ${id}\` prints it, or choose another --id`,
    EXIT.badInput,
  );
}
