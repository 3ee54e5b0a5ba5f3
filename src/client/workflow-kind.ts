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

/** What a workflow type is, in words: "a conversation", "a turn", "a batch", or "a <type> workflow". */
export function kindPhrase(type: string): string {
  const kind = kindOfWorkflowType(type);
  return kind ? `a ${kind}` : `a ${type} workflow`;
}

/** An id that names a workflow of another kind than the one asked for. */
export class WorkflowKindError extends Error {
  override name = 'WorkflowKindError';
  constructor(
    readonly workflowId: string,
    readonly wanted: WorkflowKind,
    readonly type: string,
  ) {
    super(`${workflowId} is ${kindPhrase(type)}, not a ${wanted}`);
  }
}

/** Throws {@link WorkflowKindError} unless workflow type `type` runs one of `kinds`. */
export function expectKind(workflowId: string, type: string, ...kinds: [WorkflowKind, ...WorkflowKind[]]): void {
  const kind = kindOfWorkflowType(type);
  if (kind === undefined || !kinds.includes(kind)) throw new WorkflowKindError(workflowId, kinds[0], type);
}
