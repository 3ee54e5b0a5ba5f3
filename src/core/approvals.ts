/**
 * Approval of risky tool calls: which calls wait for a person, what a waiting call records, and the
 * decision that ends the wait. The worker's config says which of a server's tools need approval
 * (recorded with the tool list, so replay never reads live config); a turn's input may add
 * requirements, never remove the worker's.
 */
import type { InputRequest } from './input-requests';
import type { McpToolDescriptor, ToolApproval, ToolTarget } from './contracts';
import { matchesToolPattern } from './tool-patterns';
import { isRecord } from './is-record';
import { oneLine } from './text';

/** Approval requirements a turn adds to the worker's. */
export interface TurnApprovalInput {
  /** Tools that need approval: `server__tool`, bare tool name, or `server__*`. */
  tools: string[];
  /** Without a decision in this time the call is denied. */
  timeoutMs?: number;
}

/** How a waiting call ended. */
export type ApprovalOutcome = 'approved' | 'denied' | 'timed_out';

/**
 * One call that waited for a person; in the turn's result and its pending-approvals query. A call
 * waits for an approval before it runs, and (kind `input`) for answers to the server's questions
 * while it runs (src/core/input-requests.ts): one record per round of questions, the call's latest
 * record being the one that counts. For an input wait, `approved` means answered (`answer` holds
 * what the person gave), `denied` declined, `timed_out` declined for want of an answer.
 */
export interface ApprovalRecord {
  /** `input`: the server asked the person questions (absent: an approval). */
  kind?: 'input';
  /** The server's questions (kind `input`). */
  requests?: InputRequest[];
  /** Which round of questions of this call (kind `input`; from 1). */
  round?: number;
  /**
   * Asked during a live call (the legacy era): the call waits in a worker, only until its request
   * times out, and a worker restart ends the wait (the call is retried from the start).
   */
  live?: { askId: string };
  /** What the person answered (kind `input`, answered): a form's content, several forms' by key. */
  answer?: Record<string, unknown>;
  /** Claude's tool_use id. */
  callId: string;
  /** The Claude-side tool name (`server__tool`). */
  name: string;
  server: string;
  tool: string;
  /** The arguments Claude gave (injected values are added worker-side, so never here). */
  input: unknown;
  step: number;
  /** What Claude wrote with the call. */
  text: string;
  /** Workflow time, ISO 8601. */
  requestedAt: string;
  timeoutMs?: number;
  /** Absent while the call waits. */
  outcome?: ApprovalOutcome;
  /** Who decided (the identity the caller passed); absent for a timeout. */
  decidedBy?: string;
  decidedAt?: string;
  reason?: string;
}


/**
 * The memo key under which a turn lists the calls waiting for approval now, so one visibility
 * query finds them across turns without asking each turn.
 */
export const PENDING_APPROVALS_MEMO = 'pendingApprovals';

/**
 * The largest arguments (their JSON, in UTF-8 bytes) the memo keeps as the object Claude gave. Every
 * change of the waiting calls writes the whole list into the turn's history and the visibility
 * store, and arguments can be a whole file Claude writes: larger ones are kept as a shortened line.
 */
export const MEMO_INPUT_BYTES = 2048;

/**
 * The largest questions of a call waiting for input (its `requests` as JSON, in UTF-8 bytes) the memo
 * keeps whole. A form's schema is small (flat fields of primitives: a few hundred bytes, an enum of
 * every country a few KB) and is what a front door renders the form from, so the limit is generous;
 * it is there because a server chooses the size of what it asks, and a memo over the server's memo
 * limit fails the turn's workflow task, so a turn would be stuck on one server's huge schema.
 */
export const MEMO_REQUESTS_BYTES = 16_384;

/** The shortened line of JSON the memo keeps for arguments over {@link MEMO_INPUT_BYTES}. */
const MEMO_PREVIEW_CHARS = 300;

/**
 * A waiting call as the turn's memo lists it: the arguments as Claude gave them, or, when their JSON
 * is over {@link MEMO_INPUT_BYTES}, `inputTruncated` and a shortened line of that JSON instead; the
 * server's questions whole, or, over {@link MEMO_REQUESTS_BYTES}, `requestsTruncated` and each form
 * reduced to its fields (names, types, titles, which are required) with its message shortened. The
 * turn's pending-approvals query has both whole.
 */
export interface PendingApprovalMemo extends Omit<ApprovalRecord, 'input'> {
  /** The arguments Claude gave; absent when `inputTruncated`. */
  input?: unknown;
  /** The arguments were too large for the memo: `inputPreview` has their JSON shortened to one line. */
  inputTruncated?: true;
  inputPreview?: string;
  /** The questions were too large for the memo: `requests` lists them shortened (forms: their fields only). */
  requestsTruncated?: true;
}

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;

/** What the memo lists for a waiting call: small arguments and questions as they are, large ones shortened. */
export function pendingApprovalMemo(record: ApprovalRecord): PendingApprovalMemo {
  const { input, requests, ...rest } = record;
  const json = JSON.stringify(input ?? {});
  const args = utf8Bytes(json) <= MEMO_INPUT_BYTES ? { input } : { inputTruncated: true as const, inputPreview: oneLine(json, MEMO_PREVIEW_CHARS) };
  return { ...rest, ...args, ...(requests ? memoRequests(requests) : {}) };
}

/** The questions as the memo keeps them: whole up to {@link MEMO_REQUESTS_BYTES}, else shortened. */
function memoRequests(requests: InputRequest[]): Pick<PendingApprovalMemo, 'requests' | 'requestsTruncated'> {
  if (utf8Bytes(JSON.stringify(requests)) <= MEMO_REQUESTS_BYTES) return { requests };
  const fieldsOnly = requests.map((r) => ({ ...r, message: oneLine(r.message, MEMO_PREVIEW_CHARS), ...(r.mode === 'form' ? { requestedSchema: formFields(r.requestedSchema) } : {}) }));
  if (utf8Bytes(JSON.stringify(fieldsOnly)) <= MEMO_REQUESTS_BYTES) return { requests: fieldsOnly, requestsTruncated: true };
  // Even the fields are too many: each form and URL only says that there is one.
  const bare = fieldsOnly.map((r) => (r.mode === 'form' ? { ...r, requestedSchema: { type: 'object' } } : { ...r, url: oneLine(r.url, MEMO_PREVIEW_CHARS) }));
  return { requests: bare, requestsTruncated: true };
}

/** A form's schema reduced to what lists it: each field's type, format and title, and which are required. */
function formFields(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const fields = Object.fromEntries(
    Object.entries(properties).map(([name, field]) => {
      const f = isRecord(field) ? field : {};
      const kept = Object.fromEntries(
        (['type', 'format', 'title'] as const).filter((k) => typeof f[k] === 'string' || (k === 'type' && Array.isArray(f[k]))).map((k) => [k, f[k]]),
      );
      return [name, typeof f.title === 'string' ? { ...kept, title: oneLine(f.title, 80) } : kept];
    }),
  );
  return { type: 'object', properties: fields, ...(Array.isArray(schema.required) ? { required: schema.required.filter((r) => typeof r === 'string') } : {}) };
}

/** The `decide` update's argument: one call, or every call waiting now. */
export interface ApprovalDecision {
  /** Approve, or for a call waiting for input: answer (false declines). */
  approve: boolean;
  /**
   * The answer to a server's questions (a call waiting for input): a form's content, checked
   * against its schema before it is sent (src/client); `{ [key]: content }` for several forms.
   * A URL question takes none (the person says done).
   */
  input?: Record<string, unknown>;
  /** The round of questions the answer was checked against (kind `input`): refused once a newer round asks. */
  round?: number;
  /** The tool_use id; absent = every pending call of the turn. */
  callId?: string;
  reason?: string;
  /** Who decides, e.g. `alice@laptop`. */
  identity?: string;
}

/** The approval a call of the Claude-side tool `name` needs; undefined when it runs at once. */
export type ApprovalRule = (name: string) => ToolApproval | undefined;

/**
 * The approval each offered tool's calls need, merged once from the worker's requirement (as the
 * tool listing carries it, never live config) and the turn's own: a call needs approval when either
 * asks for it, with the stricter timeout (the shorter; none means none). Tools that need none are
 * absent.
 */
export function toolApprovals(
  listed: readonly McpToolDescriptor[],
  targets: Readonly<Record<string, ToolTarget>>,
  turn: TurnApprovalInput | undefined,
): Record<string, ToolApproval> {
  const approvals: Record<string, ToolApproval> = {};
  for (const [name, target] of Object.entries(targets)) {
    const byWorker = listed.find((d) => d.server === target.server && d.name === target.tool)?.approval;
    const byTurn = turn?.tools.some((p) => matchesToolPattern(p, target.server, target.tool, name))
      ? { ...(turn.timeoutMs !== undefined ? { timeoutMs: turn.timeoutMs } : {}) }
      : undefined;
    const merged = stricter(byWorker, byTurn);
    if (merged) approvals[name] = merged;
  }
  return approvals;
}

/** Two approval requirements merged: either asks for approval; the shorter timeout wins (none means none). */
export function stricter(a: ToolApproval | undefined, b: ToolApproval | undefined): ToolApproval | undefined {
  if (!a || !b) return a ?? b;
  const timeouts = [a.timeoutMs, b.timeoutMs].filter((t): t is number => t !== undefined);
  return timeouts.length ? { timeoutMs: Math.min(...timeouts) } : {};
}

/**
 * What Claude receives for a call that was denied or timed out: a denial names who denied (the
 * identity the decision came with; "a person" without one), so Claude does not take an operator's
 * decision for the user's.
 */
export function denialText(record: Pick<ApprovalRecord, 'name' | 'outcome' | 'reason' | 'decidedBy' | 'timeoutMs'>): string {
  if (record.outcome === 'timed_out') {
    return `Not run: the call to ${record.name} needed a person's approval and none came within ${Math.round((record.timeoutMs ?? 0) / 1000)} s, so it was denied.`;
  }
  const reason = record.reason ? ` Reason: ${record.reason}` : '';
  return `Not run: ${record.decidedBy ?? 'a person'} denied the call to ${record.name}.${reason}`;
}

/** Why a decision cannot be applied, or undefined when it can. */
export function decisionProblem(records: readonly ApprovalRecord[], decision: ApprovalDecision): string | undefined {
  if (decision.callId === undefined) {
    if (decision.input !== undefined) return 'an answer names the call it answers';
    const waiting = records.filter((r) => !r.outcome);
    if (!waiting.length) return 'no tool call of this turn is waiting for approval';
    // Approving every waiting call approves approvals: a server's questions are answered one call at a time.
    const asking = decision.approve ? waiting.find((r) => r.kind === 'input') : undefined;
    if (asking) return `tool call ${asking.callId} (${asking.name}) waits for input, not for approval: answer or decline it by its call id first`;
    return undefined;
  }
  const record = [...records].reverse().find((r) => r.callId === decision.callId);
  if (!record) {
    const waiting = records.filter((r) => !r.outcome).map((r) => r.callId);
    return `no tool call ${decision.callId} waits for approval in this turn${waiting.length ? ` (waiting: ${waiting.join(', ')})` : ''}`;
  }
  if (record.outcome) {
    const by = record.decidedBy ? ` by ${record.decidedBy}` : '';
    return `tool call ${record.callId} (${record.name}) was already decided: ${record.outcome}${by}${record.decidedAt ? ` at ${record.decidedAt}` : ''}`;
  }
  if (record.kind === 'input' && decision.round !== undefined && record.round !== decision.round) {
    return `tool call ${record.callId} (${record.name}) now asks round ${record.round} of questions; the answer was for round ${decision.round}: read the new questions and answer again`;
  }
  if (record.kind !== 'input' && decision.input !== undefined) {
    return `tool call ${record.callId} (${record.name}) waits for approval, not for input: approve or deny it`;
  }
  if (record.kind === 'input' && decision.approve && decision.input === undefined && record.requests?.some((r) => r.mode === 'form')) {
    return `tool call ${record.callId} (${record.name}) asks for input: give it, or decline`;
  }
  return undefined;
}
