/**
 * The tool calls of a turn: each step's tool_use blocks run in parallel, one activity each, and are
 * answered in tool_use order. A call repeating an earlier one (same tool, same arguments) is
 * answered from that result, not run again; calls beyond the turn's budget are answered "not run";
 * a call that needs approval waits for it (the step's other calls run meanwhile) and, denied or
 * timed out, is answered with the denial; a call the server answers with questions for the person
 * waits for the answers (declined when none come in time) and is sent again with them; a failure Claude can adapt to is answered as an is_error
 * result. Every call leaves a record.
 */
import { isCancellation } from '@temporalio/workflow';
import { canonicalJson } from '../src/core/canonical-json';
import { denialText, type ApprovalRecord, type ApprovalRule } from '../src/core/approvals';
import type { TurnContext } from '../src/core/context-templates';
import type { CallToolInput, ContentBlock, ServerCallPolicy, ToolApproval, ToolCatalog, ToolResultContent, ToolTarget } from '../src/core/contracts';
import { MAX_INPUT_ROUNDS, inputResponsesOf, tooManyRoundsText, type LiveInputAsked } from '../src/core/input-requests';
import type { Artifact } from '../src/core/response';
import { failedAttempt } from '../src/core/tool-call-attempt';
import { DEFAULT_INPUT_TIMEOUT_MS, DEFAULT_TOOL_CALL_POLICY } from '../src/core/tool-call-policy';
import { errorText, textOf, type ToolResultEntry, type ToolUseBlock } from '../src/core/transcript';
import type { ToolCallRecord } from '../src/core/turn-result';
import type { ApprovalRequest } from './approvals';
import { failureMessage } from '../src/core/failure-message';
import { toolCallActivity } from './turn-activities';
import { workflowNow } from './workflow-clock';

/** How a round went, for the stop rules. */
export interface ToolRound {
  /** One result per tool_use, in tool_use order. */
  results: ToolResultEntry[];
  repeated: boolean;
  /** The budget is used up: a call was refused, or the last allowed one ran. */
  overBudget: boolean;
}

export interface ToolCallsOptions {
  /** The tools offered to Claude, by Claude-side name. */
  catalog: ToolCatalog;
  /** How each server's calls are scheduled (recorded with the tool listing). */
  policies: Record<string, ServerCallPolicy>;
  /** Calls the turn may send to servers; undefined = no budget. */
  budget: number | undefined;
  /** The approval a call of a tool needs (src/core/approvals.ts). */
  approvalFor: ApprovalRule;
  /** The turn is a batch's: tools the worker has not seen yet run locally too (ServerCallPolicy.unseenTools). */
  inBatch: boolean;
  /** Waits for a person's decision on a call; answers the decided record. */
  waitForApproval: (call: ApprovalRequest, approval: ToolApproval) => Promise<ApprovalRecord>;
  /** How many rounds of questions a call has been asked so far. */
  roundsAsked: (callId: string) => number;
  /** The turn's context, handed to every call (a code tool's `ctx.context`, a server's inject templates). */
  context?: TurnContext;
}

/** A call of the turn: its record once it has ended; before that, where it stands. */
interface CallSlot {
  state: 'waiting-approval' | 'running' | 'done';
  record: ToolCallRecord;
}

const REPEATED_NOTE =
  '(Repeated call: this tool was already called with the same arguments in this turn; here is that result again. It was not run again.)';

/** Error texts kept in a record. */
const RECORD_ERROR_CHARS = 500;

export class ToolCalls {
  /** One slot per tool_use of the turn, in tool_use order; a slot is replaced, never changed. */
  private readonly slots: CallSlot[] = [];
  private readonly found: Artifact[] = [];
  /** Signature (tool + canonical arguments) → the result of the call that ran with it. */
  private readonly seen = new Map<string, Promise<ToolResultEntry>>();
  /** Calls sent to a server. */
  private executed = 0;

  constructor(private readonly options: ToolCallsOptions) {}

  /** The records of the calls that have ended, in tool_use order. */
  get records(): ToolCallRecord[] {
    return this.slots.filter((s) => s.state === 'done').map((s) => s.record);
  }

  /** Every call so far, those still running or waiting for approval included (for progress). */
  get all(): ToolCallRecord[] {
    return this.slots.map((s) => s.record);
  }

  /** Ids of the calls whose activity runs now. */
  get running(): ReadonlySet<string> {
    return new Set(this.slots.filter((s) => s.state === 'running').map((s) => s.record.id));
  }

  /** Images and binary resources the tools returned, for the final answer. */
  get artifacts(): readonly Artifact[] {
    return this.found;
  }

  /** Runs a reply's tool calls; `text` is what Claude wrote with them (shown with a call that waits for approval). */
  async runRound(uses: ToolUseBlock[], step: number, text: string): Promise<ToolRound> {
    const { catalog, budget } = this.options;
    let repeated = false;
    let refused = false;
    const pending = uses.map((use) => {
      const slot = this.slots.push({ state: 'running', record: this.newRecord(use, step) }) - 1;
      const signature = `${use.name}\u0000${canonicalJson(use.input)}`;
      const earlier = this.seen.get(signature);
      if (earlier) {
        repeated = true;
        return this.answerRepeated(use, slot, earlier);
      }
      const target = catalog.targets[use.name];
      if (!target) {
        const available = Object.keys(catalog.targets);
        return this.answerNotRun(use, slot, `Unknown tool "${use.name}". Available tools: ${available.length ? available.join(', ') : 'none'}.`);
      }
      if (budget !== undefined && this.executed >= budget) {
        refused = true;
        return this.answerNotRun(use, slot, `not run: this turn's tool-call budget (${budget}) is used up`);
      }
      this.executed++;
      const result = this.run(use, target, step, text, slot);
      this.seen.set(signature, result);
      return result;
    });
    const results = await Promise.all(pending);
    return { results, repeated, overBudget: refused || (budget !== undefined && this.executed >= budget) };
  }

  private async run(use: ToolUseBlock, { server, tool }: ToolTarget, step: number, text: string, slot: number): Promise<ToolResultEntry> {
    const approval = this.options.approvalFor(use.name);
    if (approval) {
      this.setState(slot, 'waiting-approval');
      const decided = await this.options.waitForApproval({ callId: use.id, name: use.name, server, tool, input: use.input, step, text }, approval);
      if (decided.outcome !== 'approved') {
        // Nothing ran: no duration (the wait is the approval record's requestedAt to decidedAt).
        const denial = denialText(decided);
        this.end(slot, { isError: true, error: denial });
        return { toolUseId: use.id, content: errorText(denial), isError: true };
      }
    }
    // The call's duration counts from here: a person's time to decide is not the tool's.
    const started = workflowNow();
    this.setState(slot, 'running');
    const policy = this.options.policies[server] ?? DEFAULT_TOOL_CALL_POLICY;
    let content: ToolResultContent[];
    let ended: Pick<ToolCallRecord, 'isError' | 'error' | 'attempts' | 'durationMs'>;
    try {
      const call: CallToolInput = {
        server,
        tool,
        arguments: (use.input ?? {}) as Record<string, unknown>,
        toolUseId: use.id,
        ...(this.options.context ? { context: this.options.context } : {}),
      };
      const activity = toolCallActivity(policy, server, tool, { inBatch: this.options.inBatch });
      let out = await activity(call);
      // The server asks the person first: wait for the answers, then send the same call again with
      // them and its state, in a new activity (src/core/input-requests.ts).
      for (let rounds = 1; out.inputRequired; rounds++) {
        const asked = out.inputRequired;
        if (rounds > MAX_INPUT_ROUNDS) {
          out = { content: errorText(tooManyRoundsText(server, tool)), isError: true, attempt: out.attempt };
          break;
        }
        this.setState(slot, 'waiting-approval');
        const decided = await this.options.waitForApproval(
          { kind: 'input', requests: asked.requests, round: this.options.roundsAsked(use.id) + 1, callId: use.id, name: use.name, server, tool, input: use.input, step, text },
          { timeoutMs: policy.inputTimeoutMs ?? DEFAULT_INPUT_TIMEOUT_MS },
        );
        this.setState(slot, 'running');
        out = await activity({
          ...call,
          inputResponses: inputResponsesOf(asked.requests, decided.outcome === 'approved', decided.answer),
          ...(asked.requestState !== undefined ? { requestState: asked.requestState } : {}),
        });
      }
      content = out.content;
      this.found.push(...(out.artifacts ?? []));
      const error = out.isError ? textOf(out.content.filter((c) => c.type === 'text') as ContentBlock[]).slice(0, RECORD_ERROR_CHARS) : undefined;
      // The tool's own time; a result recorded before activities timed themselves has the workflow's.
      ended = { isError: out.isError, attempts: out.attempt ?? 1, durationMs: out.durationMs ?? workflowNow() - started, ...(error !== undefined ? { error } : {}) };
    } catch (err) {
      if (isCancellation(err)) throw err; // the turn was cancelled: not a tool failure for Claude to see
      // Retries are exhausted or the error cannot succeed on retry: Claude sees the failure as data.
      const message = failureMessage(err);
      content = errorText(`Tool ${server}/${tool} failed: ${message}`);
      ended = { isError: true, error: message.slice(0, RECORD_ERROR_CHARS), attempts: failedAttempt(err) ?? policy.retry.maximumAttempts, durationMs: workflowNow() - started };
    }
    this.end(slot, ended);
    return { toolUseId: use.id, content, isError: ended.isError };
  }

  /**
   * A question the server asks during a running call (the legacy era): kept as a waiting record
   * until answered, declined or timed out; the call's activity reads the answer from the record.
   */
  askLive(asked: LiveInputAsked): void {
    const slot = this.slots.find((s) => s.record.id === asked.callId && s.state !== 'done');
    if (!slot?.record.server || !slot.record.tool) return; // the call ended meanwhile: nobody waits for an answer
    const { id, name, server, tool, input, step } = slot.record;
    const round = this.options.roundsAsked(id) + 1;
    void this.options.waitForApproval(
      { kind: 'input', live: { askId: asked.askId }, requests: asked.requests, round, callId: id, name, server, tool, input, step, text: '' },
      { timeoutMs: asked.timeoutMs },
    );
  }

  private async answerRepeated(use: ToolUseBlock, slot: number, earlier: Promise<ToolResultEntry>): Promise<ToolResultEntry> {
    const first = await earlier;
    this.end(slot, { repeated: true, isError: first.isError });
    return { toolUseId: use.id, isError: first.isError, content: [{ type: 'text', text: REPEATED_NOTE }, ...first.content] };
  }

  private async answerNotRun(use: ToolUseBlock, slot: number, text: string): Promise<ToolResultEntry> {
    this.end(slot, { isError: true, error: text });
    return { toolUseId: use.id, content: errorText(text), isError: true };
  }

  /** A call's record before it ends: not an error, nothing run yet. */
  private newRecord(use: ToolUseBlock, step: number): ToolCallRecord {
    const target = this.options.catalog.targets[use.name];
    return {
      id: use.id,
      step,
      ...(target ? { server: target.server, tool: target.tool } : {}),
      name: use.name,
      input: use.input,
      isError: false,
      durationMs: 0,
      attempts: 0,
    };
  }

  private setState(slot: number, state: 'waiting-approval' | 'running'): void {
    this.slots[slot] = { state, record: this.slots[slot]!.record };
  }

  private end(slot: number, fields: Partial<ToolCallRecord>): void {
    this.slots[slot] = { state: 'done', record: { ...this.slots[slot]!.record, ...fields } };
  }
}
