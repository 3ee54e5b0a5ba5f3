/**
 * The tool calls of a turn: each step's tool_use blocks run in parallel, one activity each, and are
 * answered in tool_use order. A call repeating an earlier one (same tool, same arguments) is
 * answered from that result, not run again; calls beyond the turn's budget are answered "not run";
 * a call that needs approval waits for it (the step's other calls run meanwhile) and, denied or
 * timed out, is answered with the denial; a failure Claude can adapt to is answered as an is_error
 * result. Every call leaves a record.
 */
import { isCancellation } from '@temporalio/workflow';
import { canonicalJson } from '../src/core/canonical-json';
import { approvalNeeded, denialText, type ToolApproval, type TurnApprovalInput } from '../src/core/approvals';
import type { ContentBlock, ServerCallPolicy, ToolResultContent } from '../src/core/contracts';
import type { Artifact } from '../src/core/response';
import { failedAttempt } from '../src/core/tool-call-attempt';
import { DEFAULT_TOOL_CALL_POLICY } from '../src/core/tool-call-policy';
import type { ToolCatalog } from '../src/core/tool-naming';
import { errorText, textOf, type ToolResultEntry, type ToolUseBlock } from '../src/core/transcript';
import type { ToolCallRecord } from '../src/core/turn-result';
import type { Approvals } from './approvals';
import { failureMessage } from './failure-message';
import { toolActivities } from './turn-activities';

/** How a round went, for the stop rules. */
export interface ToolRound {
  /** One result per tool_use, in tool_use order. */
  results: ToolResultEntry[];
  repeated: boolean;
  /** The budget is used up: a call was refused, or the last allowed one ran. */
  overBudget: boolean;
}

const REPEATED_NOTE =
  '(Repeated call: this tool was already called with the same arguments in this turn; here is that result again. It was not run again.)';

/** Error texts kept in a record. */
const RECORD_ERROR_CHARS = 500;

export class ToolCalls {
  readonly records: ToolCallRecord[] = [];
  /** Ids of calls in flight. */
  readonly running = new Set<string>();
  /** Images and binary resources the tools returned, for the final answer. */
  readonly artifacts: Artifact[] = [];
  /** Signature (tool + canonical arguments) → the result of the call that ran with it. */
  private readonly seen = new Map<string, Promise<ToolResultEntry>>();
  /** Calls sent to a server. */
  private executed = 0;

  constructor(
    private readonly catalog: ToolCatalog,
    private readonly policies: Record<string, ServerCallPolicy>,
    private readonly budget: number | undefined,
    private readonly approvals: Approvals,
    /** The worker's approval requirement per Claude-side tool name. */
    private readonly workerApprovals: Record<string, ToolApproval>,
    private readonly turnApproval: TurnApprovalInput | undefined,
  ) {}

  /** Runs a reply's tool calls; `text` is what Claude wrote with them (shown with a call that waits for approval). */
  async runRound(uses: ToolUseBlock[], step: number, text: string): Promise<ToolRound> {
    let repeated = false;
    let refused = false;
    const pending = uses.map((use) => {
      const signature = `${use.name}\u0000${canonicalJson(use.input)}`;
      const earlier = this.seen.get(signature);
      if (earlier) {
        repeated = true;
        return this.answerRepeated(use, step, earlier);
      }
      if (!this.catalog.targets[use.name]) {
        const available = Object.keys(this.catalog.targets);
        return this.answerNotRun(use, step, `Unknown tool "${use.name}". Available tools: ${available.length ? available.join(', ') : 'none'}.`);
      }
      if (this.budget !== undefined && this.executed >= this.budget) {
        refused = true;
        return this.answerNotRun(use, step, `not run: this turn's tool-call budget (${this.budget}) is used up`);
      }
      this.executed++;
      const result = this.run(use, step, text);
      this.seen.set(signature, result);
      return result;
    });
    const results = await Promise.all(pending);
    return { results, repeated, overBudget: refused || (this.budget !== undefined && this.executed >= this.budget) };
  }

  private async run(use: ToolUseBlock, step: number, text: string): Promise<ToolResultEntry> {
    const { server, tool } = this.catalog.targets[use.name]!;
    const policy = this.policies[server] ?? DEFAULT_TOOL_CALL_POLICY;
    const record = this.record(use, step, {});
    const started = workflowNow();
    const approval = approvalNeeded(this.workerApprovals[use.name], this.turnApproval, { server, tool, name: use.name });
    if (approval) {
      const decided = await this.approvals.request({ callId: use.id, name: use.name, server, tool, input: use.input, step, text }, approval);
      if (decided.outcome !== 'approved') {
        const denial = denialText(decided);
        Object.assign(record, { isError: true, error: denial, durationMs: workflowNow() - started });
        return { toolUseId: use.id, content: errorText(denial), isError: true };
      }
    }
    this.running.add(use.id);
    let content: ToolResultContent[];
    try {
      const out = await toolActivities(policy, `${server} · ${tool}`).callTool({
        server,
        tool,
        arguments: (use.input ?? {}) as Record<string, unknown>,
        toolUseId: use.id,
      });
      content = out.content;
      record.isError = out.isError;
      record.attempts = out.attempt ?? 1;
      this.artifacts.push(...out.artifacts);
      if (out.isError) record.error = textOf(out.content.filter((c) => c.type === 'text') as ContentBlock[]).slice(0, RECORD_ERROR_CHARS);
    } catch (err) {
      if (isCancellation(err)) throw err; // the turn was cancelled: not a tool failure for Claude to see
      // Retries are exhausted or the error cannot succeed on retry: Claude sees the failure as data.
      const text = failureMessage(err);
      content = errorText(`Tool ${server}/${tool} failed: ${text}`);
      record.isError = true;
      record.error = text.slice(0, RECORD_ERROR_CHARS);
      record.attempts = failedAttempt(err) ?? policy.retry.maximumAttempts;
    } finally {
      this.running.delete(use.id);
    }
    record.durationMs = workflowNow() - started;
    return { toolUseId: use.id, content, isError: record.isError };
  }

  private async answerRepeated(use: ToolUseBlock, step: number, earlier: Promise<ToolResultEntry>): Promise<ToolResultEntry> {
    const first = await earlier;
    this.record(use, step, { repeated: true, isError: first.isError });
    return { toolUseId: use.id, isError: first.isError, content: [{ type: 'text', text: REPEATED_NOTE }, ...first.content] };
  }

  private async answerNotRun(use: ToolUseBlock, step: number, text: string): Promise<ToolResultEntry> {
    this.record(use, step, { isError: true, error: text });
    return { toolUseId: use.id, content: errorText(text), isError: true };
  }

  private record(use: ToolUseBlock, step: number, fields: Partial<ToolCallRecord>): ToolCallRecord {
    const target = this.catalog.targets[use.name];
    const record: ToolCallRecord = {
      id: use.id,
      step,
      ...(target ? { server: target.server, tool: target.tool } : {}),
      name: use.name,
      input: use.input,
      isError: false,
      durationMs: 0,
      attempts: 0,
      ...fields,
    };
    this.records.push(record);
    return record;
  }
}

/** Workflow time: deterministic on replay. */
function workflowNow(): number {
  return new Date().getTime();
}
