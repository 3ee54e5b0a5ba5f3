/**
 * The three kinds of workflow mcp-turns runs, in the words its CLI and list API use, and the
 * workflow type each kind runs as: the one map between them.
 */
export const WORKFLOW_KINDS = ['turn', 'conversation', 'batch'] as const;

export type WorkflowKind = (typeof WORKFLOW_KINDS)[number];

/** The workflow type each kind runs as (the name the worker registers). */
export const WORKFLOW_TYPE_OF_KIND: Readonly<Record<WorkflowKind, string>> = {
  turn: 'chatTurn',
  conversation: 'conversation',
  batch: 'chatBatch',
};

/** The kind a workflow type runs, or undefined for a workflow that is not mcp-turns'. */
export function kindOfWorkflowType(type: string): WorkflowKind | undefined {
  return WORKFLOW_KINDS.find((kind) => WORKFLOW_TYPE_OF_KIND[kind] === type);
}
