/**
 * What an id names, asked once: its kind of mcp-turns workflow (turn, conversation, batch) or
 * another workflow's type, and its status in the one vocabulary (src/core/run-status.ts). The
 * front doors ask it before they act on an id a person gave them.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import { SA_STATUS } from '../core/search-attributes';
import type { RunStatus } from '../core/run-status';
import { runStatusOf } from './run-status';
import { kindOfWorkflowType, type WorkflowKind } from './workflow-kind';

export interface IdDescription {
  id: string;
  /** mcp-turns' kind of workflow; undefined for a workflow that is not mcp-turns'. */
  kind?: WorkflowKind;
  /** The workflow type it runs. */
  type: string;
  status: RunStatus | string;
  /** Still running (waiting for an approval included). */
  running: boolean;
  startTime: Date;
  closeTime?: Date;
  /** Its search attributes (whose it is: src/client/owner.ts). */
  searchAttributes: TypedSearchAttributes;
  /** Its memo as it stands (a turn's: the calls waiting for a person, src/core/approvals.ts). */
  memo?: Record<string, unknown>;
}

/** What `id` names in the client's namespace; undefined when no workflow has that id. */
export async function describeId(client: Client, id: string): Promise<IdDescription | undefined> {
  let described;
  try {
    described = await client.workflow.getHandle(id).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
  const kind = kindOfWorkflowType(described.type);
  return {
    id,
    ...(kind ? { kind } : {}),
    type: described.type,
    status: runStatusOf(described.status.name, described.typedSearchAttributes.get(SA_STATUS)),
    running: described.status.name === 'RUNNING',
    startTime: described.startTime,
    ...(described.closeTime ? { closeTime: described.closeTime } : {}),
    searchAttributes: described.typedSearchAttributes,
    ...(described.memo ? { memo: described.memo } : {}),
  };
}

/** "completed at 2026-11-27T02:00:00.000Z": how an ended workflow's status reads in a line. */
export function endedPhrase(d: Pick<IdDescription, 'status' | 'closeTime'>): string {
  return `${d.status}${d.closeTime ? ` at ${d.closeTime.toISOString()}` : ''}`;
}
