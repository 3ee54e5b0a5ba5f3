/**
 * Tool calls waiting for a person's approval, from code: list them across turns and batches, and
 * approve or deny one call (or every waiting call of a turn). Listing reads visibility (one list
 * call over the `waiting_approval` status, each turn's waiting calls from its memo), so it costs the
 * same for 1 or 200 waiting turns; only arguments too large for the memo are read from their turn
 * (its pending-approvals query, which a worker answers). Deciding is the turn's `decide` update,
 * which the turn refuses for an unknown call id or a call already decided.
 */
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowExecutionInfo,
} from '@temporalio/client';
import { PENDING_APPROVALS_MEMO, type ApprovalRecord, type PendingApprovalMemo } from '../core/approvals';
import { WAITING_APPROVAL_STATUS } from '../core/run-status';
import { SA_BATCH, SA_STATUS } from '../core/search-attributes';
import { decideUpdate, pendingApprovalsQuery } from '../core/workflow-handlers';
import { quoted } from './visibility-query';
import { kindPhrase } from './workflow-kind';
import { describeId } from './describe-id';
import { ownerClause, ownerLabelOf, type Viewer } from './owner';

/**
 * One call waiting for approval, as {@link listPendingApprovals} lists it: `input` is the object
 * Claude gave. Only when its arguments were too large for the turn's memo and the turn could not be
 * asked for them (no worker answered in time, or `fullInput: false`) is `input` absent, with
 * `inputTruncated: true` and their JSON shortened to one line in `inputPreview`.
 */
export interface PendingApproval extends PendingApprovalMemo {
  /** The turn's workflow id: what {@link approveToolCall} and {@link denyToolCall} take. */
  turnId: string;
  /** The batch the turn belongs to, if any. */
  batch?: string;
  /** Whose turn it is (its owner's label), when it was started for someone. */
  owner?: string;
}

export interface ListPendingApprovalsOptions {
  /** Only turns of this batch (its `McpTurnsBatch` search attribute). */
  batch?: string;
  /** Only the turns this viewer may see (src/client/owner.ts); all of them without one. */
  viewer?: Viewer;
  /**
   * Read arguments too large for the memo from their turn (its pending-approvals query; a worker
   * answers it, within {@link INPUT_QUERY_TIMEOUT_MS}); `false` leaves them shortened.
   * @default true
   */
  fullInput?: boolean;
}

/** A turn asked for the full arguments of its waiting calls that has not answered after this long is left shortened. */
const INPUT_QUERY_TIMEOUT_MS = 5000;

/** Who decides and why; recorded with the decision in the turn's result. */
export interface DecisionOptions {
  /** Who decides, e.g. `alice@laptop`. */
  identity: string;
  /** Told to Claude with a denial; recorded with either decision. */
  reason?: string;
}

/** A decision the turn did not apply; the message says why in one line. */
export class ApprovalDecisionError extends Error {
  override name = 'ApprovalDecisionError';
  constructor(
    message: string,
    /** The turn the decision was for. */
    readonly turnId: string,
    /** True when no workflow has that id. */
    readonly notFound = false,
  ) {
    super(message);
  }
}

/** The visibility query of running turns with a call waiting for approval, optionally in one batch. */
export function pendingApprovalsVisibilityQuery(options: Pick<ListPendingApprovalsOptions, 'batch' | 'viewer'> = {}): string {
  const owner = ownerClause(options.viewer);
  return (
    `${SA_STATUS.name} = ${quoted(WAITING_APPROVAL_STATUS)} AND ExecutionStatus = "Running"` +
    (options.batch !== undefined ? ` AND ${SA_BATCH.name} = ${quoted(options.batch)}` : '') +
    (owner ? ` AND ${owner}` : '')
  );
}

function pendingOf(execution: WorkflowExecutionInfo): PendingApproval[] {
  const listed = execution.memo?.[PENDING_APPROVALS_MEMO];
  if (!Array.isArray(listed)) return [];
  const batch = execution.typedSearchAttributes.get(SA_BATCH);
  const owner = ownerLabelOf(execution.memo);
  return (listed as PendingApprovalMemo[]).map((call) => ({
    ...call,
    turnId: execution.workflowId,
    ...(batch !== undefined ? { batch } : {}),
    ...(owner !== undefined ? { owner } : {}),
  }));
}

/**
 * Every call waiting for approval now, oldest first: one visibility list call over the turns whose
 * status is `waiting_approval` (in one batch when `batch` is given), each turn's waiting calls read
 * from its memo, and arguments too large for the memo from the turn itself (unless `fullInput` is
 * false). Visibility trails the turns by a moment: a call that started to wait a few milliseconds
 * ago may not be listed yet.
 */
export async function listPendingApprovals(client: Client, options: ListPendingApprovalsOptions = {}): Promise<PendingApproval[]> {
  let pending: PendingApproval[] = [];
  for await (const execution of client.workflow.list({ query: pendingApprovalsVisibilityQuery(options) })) {
    pending.push(...pendingOf(execution));
  }
  if (options.fullInput !== false) pending = await withFullInputs(client, pending);
  return pending.sort((a, b) => a.requestedAt.localeCompare(b.requestedAt) || a.turnId.localeCompare(b.turnId));
}

/**
 * `pending` with the arguments the memo shortened read from their turns, one query per such turn,
 * all at once. A turn that does not answer (no worker in time, or it has just ended) leaves its
 * calls shortened.
 */
async function withFullInputs(client: Client, pending: PendingApproval[]): Promise<PendingApproval[]> {
  const turns = [...new Set(pending.filter((p) => p.inputTruncated).map((p) => p.turnId))];
  if (!turns.length) return pending;
  const full = new Map<string, ApprovalRecord>();
  await Promise.all(
    turns.map(async (turnId) => {
      const records = await client
        .withDeadline(Date.now() + INPUT_QUERY_TIMEOUT_MS, () => client.workflow.getHandle(turnId).query(pendingApprovalsQuery))
        .catch(() => [] as ApprovalRecord[]);
      for (const r of records) full.set(`${turnId}\u0000${r.callId}`, r);
    }),
  );
  return pending.map((p) => {
    const record = p.inputTruncated ? full.get(`${p.turnId}\u0000${p.callId}`) : undefined;
    return record ? { ...record, turnId: p.turnId, ...(p.batch !== undefined ? { batch: p.batch } : {}), ...(p.owner !== undefined ? { owner: p.owner } : {}) } : p;
  });
}

async function decide(
  client: Client,
  turnId: string,
  callId: string | undefined,
  approve: boolean,
  options: DecisionOptions,
): Promise<ApprovalRecord[]> {
  const handle = client.workflow.getHandle(turnId);
  // A decision is a person's: one describe first costs nothing, and no other kind of workflow, nor
  // a turn that has ended, is sent an update.
  const refusal = await refusalAt(client, turnId);
  if (refusal) throw refusal;
  try {
    return await handle.executeUpdate(decideUpdate, {
      args: [
        {
          approve,
          identity: options.identity,
          ...(callId !== undefined ? { callId } : {}),
          ...(options.reason !== undefined ? { reason: options.reason } : {}),
        },
      ],
    });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      // The turn's validator refused it: its message is the reason, in one line.
      throw new ApprovalDecisionError(err.cause?.message ?? err.message, turnId);
    }
    // It ended meanwhile.
    if (err instanceof WorkflowNotFoundError) throw (await refusalAt(client, turnId)) ?? new ApprovalDecisionError(`no turn ${turnId}`, turnId, true);
    throw err;
  }
}

/** Why turn `turnId` takes no decision: it does not exist, is no turn, or has ended; undefined while it runs. */
async function refusalAt(client: Client, turnId: string): Promise<ApprovalDecisionError | undefined> {
  const named = await describeId(client, turnId);
  if (!named) return new ApprovalDecisionError(`no turn ${turnId}`, turnId, true);
  if (named.kind !== 'turn') return new ApprovalDecisionError(`no turn ${turnId}: it is ${kindPhrase(named.type)}`, turnId);
  if (!named.running) return new ApprovalDecisionError(`turn ${turnId} has ended (${named.status}): nothing waits for approval`, turnId);
  return undefined;
}

/**
 * Approves a waiting call, which then runs; `callId` undefined approves every call of the turn
 * waiting now. Answers the records it decided. Throws {@link ApprovalDecisionError} when the turn
 * refuses (unknown call id, already decided, nothing waiting) or has ended.
 */
export function approveToolCall(client: Client, turnId: string, callId: string | undefined, options: DecisionOptions): Promise<ApprovalRecord[]> {
  return decide(client, turnId, callId, true, options);
}

/**
 * Denies a waiting call: Claude receives an `is_error` result saying so, with the reason if one is
 * given. `callId` undefined denies every call of the turn waiting now. Answers the records it
 * decided; throws {@link ApprovalDecisionError} as {@link approveToolCall} does.
 */
export function denyToolCall(client: Client, turnId: string, callId: string | undefined, options: DecisionOptions): Promise<ApprovalRecord[]> {
  return decide(client, turnId, callId, false, options);
}
