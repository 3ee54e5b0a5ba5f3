/**
 * Tool calls waiting for a person, from code: list them across turns and batches, and decide one
 * call (or every waiting call of a turn). A call waits for an approval before it runs, or (kind
 * `input`) for answers to a server's questions (src/core/input-requests.ts): {@link answerToolCall}
 * answers one, {@link denyToolCall} declines it. Listing reads visibility (one list call over the
 * `waiting_approval` status, each turn's waiting calls from its memo), so it costs the same for 1 or
 * 200 waiting turns; only arguments or questions too large for the memo are read from their turn
 * (its pending-approvals query, which a worker answers). Deciding is the turn's `decide` update,
 * which the turn refuses for an unknown call id or a call already decided; an answer is checked
 * against the server's schema here first, and a bad one is never sent.
 */
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowExecutionInfo,
} from '@temporalio/client';
import { PENDING_APPROVALS_MEMO, decisionProblem, type ApprovalDecision, type ApprovalRecord, type PendingApprovalMemo } from '../core/approvals';
import { WAITING_APPROVAL_STATUS } from '../core/run-status';
import { SA_BATCH, SA_STATUS } from '../core/search-attributes';
import { decideUpdate, pendingApprovalsQuery } from '../core/workflow-handlers';
import { quoted } from './visibility-query';
import { kindPhrase } from './workflow-kind';
import { describeId } from './describe-id';
import { answerProblem } from './input-answers';
import { ownerClause, ownerLabelOf, type Viewer } from './owner';

/**
 * One call waiting for a person, as {@link listPendingApprovals} lists it: `input` is the object
 * Claude gave. Only when its arguments were too large for the turn's memo and the turn could not be
 * asked for them (no worker answered in time, or `fullInput: false`) is `input` absent, with
 * `inputTruncated: true` and their JSON shortened to one line in `inputPreview`. A call waiting for
 * answers to the server's questions has `kind: 'input'`, its `round` and `requests` (each a form with
 * its `message` and `requestedSchema`, or a `message` and a `url` to visit); questions too large for
 * the memo that the turn could not be asked for come with `requestsTruncated: true`, each form
 * reduced to its fields.
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
  /** Who decides (or answers), e.g. `alice@laptop`. */
  identity: string;
  /** Told to Claude with a denial; recorded with any decision (a server is told only that its questions were declined). */
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

/**
 * A decision refused before it was sent because of what it says: an answer that does not match the
 * server's schema (the line names each field and what is wrong: `input.guests: must be >= 1`), an
 * answer to a call that waits for approval, an approval of a call that waits for input. Nothing was
 * sent to the turn.
 */
export class InvalidAnswerError extends ApprovalDecisionError {
  override name = 'InvalidAnswerError';
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
 * `pending` with the arguments and questions the memo shortened read from their turns, one query per such turn,
 * all at once. A turn that does not answer (no worker in time, or it has just ended) leaves its
 * calls shortened.
 */
async function withFullInputs(client: Client, pending: PendingApproval[]): Promise<PendingApproval[]> {
  const shortened = (p: PendingApproval): boolean => p.inputTruncated === true || p.requestsTruncated === true;
  const turns = [...new Set(pending.filter(shortened).map((p) => p.turnId))];
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
    const record = shortened(p) ? full.get(`${p.turnId}\u0000${p.callId}`) : undefined;
    return record ? { ...record, turnId: p.turnId, ...(p.batch !== undefined ? { batch: p.batch } : {}), ...(p.owner !== undefined ? { owner: p.owner } : {}) } : p;
  });
}

async function decide(
  client: Client,
  turnId: string,
  decision: ApprovalDecision & { identity: string },
  /** The decision is an answer to a server's questions: refused for a call that waits for approval. */
  answering = false,
): Promise<ApprovalRecord[]> {
  const handle = client.workflow.getHandle(turnId);
  // A decision is a person's: one describe first costs nothing, and no other kind of workflow, nor
  // a turn that has ended, is sent an update. Its memo lists the calls waiting now, with the
  // server's questions, which an answer is checked against before it is sent.
  const turn = await turnAt(client, turnId);
  if ('refusal' in turn) throw turn.refusal;
  // An answer names the round of questions it was checked against: a newer round refuses it.
  const round =
    decision.callId !== undefined && decision.approve ? await checkAnswer(client, turnId, turn.memo, { ...decision, callId: decision.callId }, answering) : undefined;
  try {
    return await handle.executeUpdate(decideUpdate, { args: [{ ...decision, ...(round !== undefined ? { round } : {}) }] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      // The turn's validator refused it: its message is the reason, in one line.
      throw new ApprovalDecisionError(err.cause?.message ?? err.message, turnId);
    }
    // It ended meanwhile.
    if (err instanceof WorkflowNotFoundError) {
      const now = await turnAt(client, turnId);
      throw 'refusal' in now ? now.refusal : new ApprovalDecisionError(`no turn ${turnId}`, turnId, true);
    }
    throw err;
  }
}

/**
 * Turn `turnId` as it stands: why it takes no decision (it does not exist, is no turn, or has
 * ended), or its memo while it runs.
 */
async function turnAt(client: Client, turnId: string): Promise<{ refusal: ApprovalDecisionError } | { memo: Record<string, unknown> | undefined }> {
  const named = await describeId(client, turnId);
  if (!named) return { refusal: new ApprovalDecisionError(`no turn ${turnId}`, turnId, true) };
  if (named.kind !== 'turn') return { refusal: new ApprovalDecisionError(`no turn ${turnId}: it is ${kindPhrase(named.type)}`, turnId) };
  if (!named.running) return { refusal: new ApprovalDecisionError(`turn ${turnId} has ended (${named.status}): nothing waits for approval`, turnId) };
  return { memo: named.memo };
}

/**
 * Refuses, before anything is sent, an approval or an answer that does not fit the call it names:
 * an answer to a call that waits for approval, an approval without the values a form asks for, an
 * answer that does not match the server's schema. A call not waiting now is left to the turn, whose
 * refusal says why (unknown, or decided already).
 */
async function checkAnswer(
  client: Client,
  turnId: string,
  memo: Record<string, unknown> | undefined,
  decision: ApprovalDecision & { callId: string },
  answering: boolean,
): Promise<number | undefined> {
  const listed = (Array.isArray(memo?.[PENDING_APPROVALS_MEMO]) ? (memo[PENDING_APPROVALS_MEMO] as PendingApprovalMemo[]) : []).find(
    (r) => r.callId === decision.callId && !r.outcome,
  );
  if (!listed) return undefined;
  if (listed.kind !== 'input') {
    if (answering) throw new InvalidAnswerError(`tool call ${listed.callId} (${listed.name}) waits for approval, not for input: approve or deny it`, turnId);
    const problem = decisionProblem([{ ...listed, input: listed.input }], decision);
    if (problem) throw new InvalidAnswerError(problem, turnId);
    return undefined;
  }
  const requests = listed.requestsTruncated ? await fullRequests(client, turnId, decision.callId) : listed.requests;
  if (!requests) return undefined; // it no longer waits: the turn says so
  const problem = decisionProblem([{ ...listed, input: listed.input, requests }], decision) ?? answerProblem(requests, decision.input);
  if (problem) throw new InvalidAnswerError(problem, turnId);
  return listed.round;
}

/** The whole questions of a waiting call whose memo shortened them, from the turn (a worker answers); undefined when it no longer waits. */
async function fullRequests(client: Client, turnId: string, callId: string): Promise<ApprovalRecord['requests']> {
  let records: ApprovalRecord[];
  try {
    records = await client.withDeadline(Date.now() + INPUT_QUERY_TIMEOUT_MS, () => client.workflow.getHandle(turnId).query(pendingApprovalsQuery));
  } catch (err) {
    throw new ApprovalDecisionError(
      `cannot check the answer: the questions of call ${callId} are too large for the turn's memo, and the turn did not say them (${(err as Error).message.split('\n')[0]})`,
      turnId,
    );
  }
  return records.find((r) => r.callId === callId)?.requests;
}

/**
 * Approves a waiting call, which then runs; `callId` undefined approves every call of the turn
 * waiting now. For a call waiting for input, approving is saying done to a URL question (a form
 * takes an answer: {@link answerToolCall}). Answers the records it decided. Throws
 * {@link ApprovalDecisionError} when the turn refuses (unknown call id, already decided, nothing
 * waiting, a call waiting for input among every waiting call) or has ended, and
 * {@link InvalidAnswerError} for a call whose form asks for values.
 */
export function approveToolCall(client: Client, turnId: string, callId: string | undefined, options: DecisionOptions): Promise<ApprovalRecord[]> {
  return decide(client, turnId, decisionOf(true, callId, undefined, options));
}

/**
 * Denies a waiting call: Claude receives an `is_error` result saying so, with the reason if one is
 * given. For a call waiting for input, declines the server's questions: the call is sent again with
 * `decline`, and Claude receives what the server answers to that. `callId` undefined denies (and
 * declines) every call of the turn waiting now. Answers the records it decided; throws
 * {@link ApprovalDecisionError} as {@link approveToolCall} does.
 */
export function denyToolCall(client: Client, turnId: string, callId: string | undefined, options: DecisionOptions): Promise<ApprovalRecord[]> {
  return decide(client, turnId, decisionOf(false, callId, undefined, options));
}

/**
 * Answers a call waiting for input (the server's questions, src/core/input-requests.ts): the same
 * call is sent to the server again with the answer. `input` is one form's content
 * (`{ guests: 4, time: '19:30' }`), or, when the server asked several forms at once, each form's by
 * its key (`{ details: {…}, contact: {…} }`); for a question that asks to visit a URL it is omitted
 * (the person says done). Before anything is sent, the answer is checked against the schema the
 * server asked with: a bad one throws {@link InvalidAnswerError} whose one line names each wrong
 * field (`input.guests: must be >= 1`), as does an answer to a call that waits for approval.
 * {@link denyToolCall} declines (the server is told `decline`). Answers the records it decided, the
 * answer and who gave it (`identity`, as `decidedBy`) included; throws {@link ApprovalDecisionError}
 * as {@link approveToolCall} does.
 */
export function answerToolCall(
  client: Client,
  turnId: string,
  callId: string,
  input: Record<string, unknown> | undefined,
  options: DecisionOptions,
): Promise<ApprovalRecord[]> {
  return decide(client, turnId, decisionOf(true, callId, input, options), true);
}

function decisionOf(approve: boolean, callId: string | undefined, input: Record<string, unknown> | undefined, options: DecisionOptions): ApprovalDecision & { identity: string } {
  return {
    approve,
    identity: options.identity,
    ...(callId !== undefined ? { callId } : {}),
    ...(input !== undefined ? { input } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
  };
}
