/**
 * Recent turns, conversations and batches from code, read from visibility: one list call (filtered
 * by workflow type and mcp-turns' search attributes), then one describe per listed workflow for its
 * one-line summary (the question of a turn, the first question of a conversation, the size of a
 * batch), which visibility does not carry.
 * Visibility trails the workflows by a moment: a workflow started or closed a few milliseconds ago
 * may be missing or show its previous status.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { pendingApprovalsVisibilityQuery } from './approvals';
import { SA_BATCH, SA_STATUS } from '../core/search-attributes';
import { WAITING_APPROVAL_STATUS } from '../core/run-status';
import { EXECUTION_STATUS_OF_CLOSED, runStatusOf, type RunStatus } from './run-status';
import {
  kindOfWorkflowType,
  WORKFLOW_KINDS,
  WORKFLOW_TYPE_OF_KIND,
  type WorkflowKind,
} from './workflow-kind';
import { quoted } from './visibility-query';
import { runHealth, runHealthLines } from './run-health';
import { liveWorkflowPollers } from './task-queue-pollers';
import { conversationTurnId } from '../core/conversation';
import { ownerClause, ownerLabelOf, type Viewer } from './owner';

/** What {@link listWorkflows} lists; every field narrows the list. */
export interface WorkflowListFilter {
  kind?: WorkflowKind;
  /** `running` includes the running turns that wait for approval; `waiting_approval` only those. */
  status?: RunStatus;
  /** The batch's workflows and its turns (their `McpTurnsBatch` search attribute). */
  batch?: string;
  /** Only what this viewer may see (src/client/owner.ts); all of it without one. */
  viewer?: Viewer;
  /** @default 20 */
  limit?: number;
}

/** One workflow as {@link listWorkflows} lists it. */
export interface ListedWorkflow {
  /** The workflow id: what `show`, `watch` and `cancel` take. */
  id: string;
  type: WorkflowKind;
  status: RunStatus | string;
  /** ISO 8601. */
  startTime: string;
  /** ISO 8601; absent while it runs. */
  closeTime?: string;
  batch?: string;
  /** The workflow's one-line summary: a turn's question, a batch's size; absent when it has none. */
  summary?: string;
  /** While it runs: why it cannot make progress (no worker polls its queue, its workflow task fails). */
  blocked?: string[];
  /** Whose it is (its owner's label), when it was started for someone. */
  owner?: string;
}

export const DEFAULT_LIST_LIMIT = 20;


/**
 * The visibility query of `filter`. Without a status filter, the runs a conversation or batch ended
 * by continuing as new are left out: each is listed once, by its latest run.
 */
export function workflowListQuery(filter: Omit<WorkflowListFilter, 'limit'> = {}): string {
  const types = filter.kind ? [filter.kind] : WORKFLOW_KINDS;
  const clauses = [
    types.length === 1
      ? `WorkflowType = ${quoted(WORKFLOW_TYPE_OF_KIND[types[0]!])}`
      : `WorkflowType IN (${types.map((k) => quoted(WORKFLOW_TYPE_OF_KIND[k])).join(', ')})`,
  ];
  const status = filter.status;
  if (status === undefined) clauses.push('ExecutionStatus != "ContinuedAsNew"');
  else if (status === WAITING_APPROVAL_STATUS) clauses.push(pendingApprovalsVisibilityQuery());
  else if (status === 'running') clauses.push('ExecutionStatus = "Running"');
  else clauses.push(`ExecutionStatus = ${quoted(EXECUTION_STATUS_OF_CLOSED[status])}`);
  if (filter.batch !== undefined) clauses.push(`${SA_BATCH.name} = ${quoted(filter.batch)}`);
  const owner = ownerClause(filter.viewer);
  if (owner) clauses.push(owner);
  return clauses.join(' AND ');
}

function listed(execution: WorkflowExecutionInfo, summary: string | undefined, blocked: string[]): ListedWorkflow {
  const batch = execution.typedSearchAttributes.get(SA_BATCH);
  const owner = ownerLabelOf(execution.memo);
  return {
    id: execution.workflowId,
    type: kindOfWorkflowType(execution.type)!,
    status: runStatusOf(execution.status.name, execution.typedSearchAttributes.get(SA_STATUS)),
    startTime: execution.startTime.toISOString(),
    ...(execution.closeTime ? { closeTime: execution.closeTime.toISOString() } : {}),
    ...(batch !== undefined ? { batch } : {}),
    ...(summary ? { summary } : {}),
    ...(blocked.length ? { blocked } : {}),
    ...(owner !== undefined ? { owner } : {}),
  };
}

/** A workflow's static summary, when this process can decode it; undefined when it has none or is gone. */
async function staticSummaryOf(client: Client, workflowId: string): Promise<string | undefined> {
  try {
    return (await (await client.workflow.getHandle(workflowId).describe()).staticSummary()) || undefined;
  } catch {
    return undefined; // gone since it was listed, never started, or encrypted under a key this process lacks
  }
}

/**
 * What describe tells of a listed workflow: its one-line summary, and while it runs, why it cannot
 * make progress (run-health.ts). A conversation's summary is its first question, whichever way it
 * was started: the summary its first message gave it, else (started without a message, or a later
 * run: continue-as-new does not carry the summary on) its first turn's, which is that turn's
 * question. A workflow gone since it was listed (retention) is listed without either.
 */
async function describedOf(
  client: Client,
  execution: WorkflowExecutionInfo,
  pollersOf: (taskQueue: string) => Promise<readonly unknown[]>,
): Promise<{ summary?: string; blocked: string[] }> {
  let described;
  try {
    described = await client.workflow.getHandle(execution.workflowId, execution.runId).describe();
  } catch {
    return { blocked: [] };
  }
  // A summary this process cannot decode (encrypted under a key it lacks) is left out; the rest is not.
  let summary = (await described.staticSummary().catch(() => undefined)) || undefined;
  if (kindOfWorkflowType(execution.type) === 'conversation' && (summary === undefined || summary === `conversation ${execution.workflowId}`)) {
    summary = await staticSummaryOf(client, conversationTurnId(execution.workflowId, 0));
  }
  const blocked = described.status.name === 'RUNNING' ? runHealthLines(await runHealth(client, described, pollersOf), execution.workflowId) : [];
  return { ...(summary ? { summary } : {}), blocked };
}

/**
 * The turns, conversations and batches `filter` selects, newest first. The list takes the first
 * `limit` visibility answers with (running ones first, then the most recently closed), so a
 * long-running workflow is never crowded out by many short ones that ended after it started.
 */
export async function listWorkflows(
  client: Client,
  filter: WorkflowListFilter = {},
): Promise<ListedWorkflow[]> {
  const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
  const executions: WorkflowExecutionInfo[] = [];
  for await (const execution of client.workflow.list({
    query: workflowListQuery(filter),
    pageSize: Math.min(limit, 1000),
  })) {
    if (kindOfWorkflowType(execution.type) === undefined) continue;
    executions.push(execution);
    if (executions.length >= limit) break;
  }
  const pollers = new Map<string, Promise<readonly unknown[]>>();
  const pollersOf = (taskQueue: string): Promise<readonly unknown[]> => {
    if (!pollers.has(taskQueue)) pollers.set(taskQueue, liveWorkflowPollers(client, taskQueue));
    return pollers.get(taskQueue)!;
  };
  const rows = await Promise.all(
    executions.map(async (e) => {
      const { summary, blocked } = await describedOf(client, e, pollersOf);
      return listed(e, summary, blocked);
    }),
  );
  return rows.sort((a, b) => b.startTime.localeCompare(a.startTime) || a.id.localeCompare(b.id));
}
