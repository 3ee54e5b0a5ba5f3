/**
 * A turn's stream, computed from its history and the records of its running Claude calls: the same
 * facts always give the same events, and more facts only add events after them. So a subscriber
 * that arrives late, reconnects, or reads a closed turn sees every event at the offset a live
 * subscriber saw it; nothing is published anywhere but in the turn's own history and its
 * activities' heartbeats, whatever the number of subscribers.
 *
 * Events per fact:
 * - the start: `start`; the tools its start recorded (offered, deferred, dropped, servers
 *   unavailable): `data-tools`; a step's first Claude call: `start-step` (and the previous step's
 *   `finish-step`); a step asked again: `data-retry` (after `data-compaction` when the
 *   conversation was compacted);
 * - a Claude call's record: `text-delta` / `reasoning-delta` / `data-retry` per part; its reply's
 *   server tool calls and results (run by the API): `tool-input-available` and
 *   `tool-output-available` marked `providerExecuted`, at once; its reply's tool calls:
 *   `tool-input-available`, once the turn goes on with them;
 * - waiting calls (the memo) and decisions (the `decide` update): `data-approval`; a call whose
 *   server asked the person questions (a memo record of kind `input`, one per round): `data-input`,
 *   waiting, then answered or declined by the decision, or timed out when it leaves the memo
 *   undecided; the call's activity that answered with the questions does not end the call (the call
 *   sent again with the answers does);
 * - a tool call's end: `tool-output-available`; calls that never ran, at the step's end;
 * - the formatter's record: `text-delta` with id `answer`; the end: the rest of the answer,
 *   `data-answer`, `finish` (`error` first when the turn failed);
 * - a formatter call whose input carries the turn's `output` writes the answer as JSON: each answer
 *   delta that changes the object parsed so far is followed by `data-output` (`partial`); the
 *   result's `output` is a last `data-output` before `data-answer`. The call's scheduled input is in
 *   history before it runs, so its deltas read from its heartbeats and from its result are parsed
 *   alike.
 */
import { canonicalJson } from '../core/canonical-json';
import { ACTIVITY_TYPES, ASKED_AGAIN } from '../core/activity-types';
import type {
  CallToolInput,
  CallToolOutput,
  ClaudeCallInput,
  ClaudeCallOutput,
  FormatResponseInput,
  FormatResponseOutput,
  ToolTarget,
} from '../core/contracts';
import type { PendingApprovalMemo } from '../core/approvals';
import { MAX_INPUT_ROUNDS, tooManyRoundsText } from '../core/input-requests';
import { buildResponse } from '../core/response';
import {
  ANSWER_TEXT_ID,
  finishOf,
  reasoningId,
  stepTextId,
  TOOL_OUTPUT_TEXT_LIMIT,
  type UnnumberedEvent,
} from '../core/stream-events';
import {
  expandRecord,
  reasoningText,
  stepText,
  type FinalTexts,
  type StreamRecord,
} from '../core/stream-record';
import { serverToolCalls, serverToolResults } from '../core/server-tool-blocks';
import { toolUses, type ToolUseBlock } from '../core/transcript';
import { turnToolsOf } from '../core/turn-toolset';
import { runningClaudeCalls, type TurnFact, type TurnFacts } from './turn-facts';
import { PartialOutput } from './partial-output';

type ClaudeCall = { kind: 'step'; step: number } | { kind: 'formatter' };

interface ToolUse {
  use: ToolUseBlock;
  step: number;
  ended: boolean;
}

export function projectTurn({ facts, live }: TurnFacts): UnnumberedEvent[] {
  return new Projection().run(facts, live);
}

class Projection {
  private readonly out: UnnumberedEvent[] = [];
  /** Claude tool name → what it calls, as the turn's start recorded it. */
  private targets: Readonly<Record<string, ToolTarget>> = {};
  private reasoning = false;
  private openStep: number | undefined;
  /** Why the open step's next call asks again, when its last call ended without going on. */
  private readonly claudeCalls = new Map<string, ClaudeCall>();
  private readonly toolActivities = new Map<string, { toolUseId: string; scheduledMs: number }>();
  /** The open step's reply's tool calls, announced once the turn goes on with them. */
  private unannounced: ToolUse[] = [];
  private readonly uses = new Map<string, ToolUse>();
  /** Signatures (name + arguments) of calls that ran, for calls answered as repeated. */
  private readonly ran = new Set<string>();
  private readonly waiting = new Map<string, string>();
  private readonly denied = new Set<string>();
  /** Calls waiting for a person's answers to their server's questions, by call id: the round's waiting event. */
  private readonly asking = new Map<string, InputEvent>();
  /** Rounds of questions announced (`<call id>#<round>`), waiting or ended. */
  private readonly asked = new Set<string>();
  /** Results of a call that asked for input instead of answering, by call id. */
  private readonly inputResults = new Map<string, number>();
  /** The answer text the formatter streamed, once it has ended. */
  private answerStreamed: string | undefined;
  /** The formatter's input carries the turn's `output`: it writes the answer as JSON, parsed as it comes. */
  private answerIsJson = false;
  private readonly partialOutput = new PartialOutput();
  /** Server tool calls announced, by id → their name, until their result is seen (it may come in a later reply). */
  private readonly serverCalls = new Map<string, string>();

  run(facts: readonly TurnFact[], live: ReadonlyMap<string, StreamRecord>): UnnumberedEvent[] {
    for (const fact of facts) this.apply(fact);
    // Claude calls still running: what they have published so far.
    for (const activityId of runningClaudeCalls(facts)) {
      const record = live.get(activityId);
      const call = this.claudeCalls.get(activityId);
      if (record && call) this.emitRecord(call, record, {});
    }
    return this.out;
  }

  private apply(fact: TurnFact): void {
    switch (fact.kind) {
      case 'started':
        this.reasoning = typeof fact.input.stream === 'object' && fact.input.stream.reasoning === true;
        this.out.push({ type: 'start', question: fact.input.question });
        return;
      case 'prepared':
        this.targets = fact.prepared.catalog.targets;
        // Recorded before the turn's first Claude call is scheduled: right after `start`.
        this.out.push({ type: 'data-tools', ...turnToolsOf(fact.prepared) });
        return;
      case 'scheduled':
        return this.scheduled(fact.activityId, fact.activityType, fact.input, fact.timeMs);
      case 'activity-completed':
        return this.completed(fact.activityId, fact.result, fact.timeMs);
      case 'activity-ended':
        return this.ended(fact);
      case 'local-tool-call':
        return this.localToolCall(fact);
      case 'pending-approvals':
        return this.pendingApprovals(fact.pending);
      case 'decision': {
        this.announce();
        const { decision } = fact;
        const chosen =
          decision.callId !== undefined
            ? this.waiting.has(decision.callId)
              ? [decision.callId]
              : []
            : [...this.waiting.keys()];
        const answered =
          decision.callId !== undefined ? (this.asking.has(decision.callId) ? [decision.callId] : []) : [...this.asking.keys()];
        for (const callId of answered) {
          const waiting = this.asking.get(callId)!;
          this.asking.delete(callId);
          const { timeoutMs: _t, ...asked } = waiting;
          this.out.push({
            ...asked,
            state: decision.approve ? 'answered' : 'declined',
            ...(decision.identity ? { by: decision.identity } : {}),
            ...(decision.reason ? { reason: decision.reason } : {}),
            // As the workflow records it (workflows/approvals.ts): an answer only with an acceptance.
            ...(decision.approve && decision.input ? { answer: decision.input } : {}),
          });
        }
        for (const callId of chosen) {
          if (!decision.approve) this.denied.add(callId);
          this.out.push({
            type: 'data-approval',
            toolCallId: callId,
            toolName: this.waiting.get(callId)!,
            state: decision.approve ? 'approved' : 'denied',
            ...(decision.identity ? { by: decision.identity } : {}),
            ...(decision.reason ? { reason: decision.reason } : {}),
          });
          this.waiting.delete(callId);
        }
        return;
      }
      case 'completed': {
        this.closeStep();
        const { response } = fact.result;
        if (this.answerStreamed !== undefined) {
          if (response.conversation.startsWith(this.answerStreamed)) {
            const rest = response.conversation.slice(this.answerStreamed.length);
            if (rest) this.answerDelta(rest, 1);
          } else {
            this.answerRetry(1, 'the answer differs from what streamed');
            this.answerDelta(response.conversation, 1);
          }
        }
        if (fact.result.output !== undefined)
          this.out.push({ type: 'data-output', output: fact.result.output, partial: false });
        this.out.push({ type: 'data-answer', response });
        this.out.push(finishOf(fact.result));
        return;
      }
      case 'task-failed':
        return; // told to the followers that want failures (turn-feed.ts), not part of the stream
      case 'closed':
        this.closeStep();
        if (fact.how === 'continued') return;
        if (fact.how === 'failed')
          this.out.push({ type: 'error', errorText: fact.message ?? 'the turn failed' });
        this.out.push({ type: 'finish', status: fact.how });
        return;
    }
  }

  private scheduled(activityId: string, activityType: string, input: unknown, timeMs: number): void {
    if (activityType === ACTIVITY_TYPES.claude) {
      const { step, askedAgain } = input as ClaudeCallInput;
      this.claudeCalls.set(activityId, { kind: 'step', step });
      // The workflow recorded why it asks this step's call again: the reply before is discarded.
      if (step === this.openStep && askedAgain) {
        const { reason, compacted } = ASKED_AGAIN[askedAgain];
        this.unannounced = []; // the reply is asked again: its tool calls never run
        if (compacted) this.out.push({ type: 'data-compaction', step, reason });
        this.out.push({
          type: 'data-retry',
          discard: [stepTextId(step), reasoningId(step)],
          attempt: 1,
          reason,
          step,
        });
        return;
      }
      this.closeStep();
      this.openStep = step;
      this.out.push({ type: 'start-step', step });
      return;
    }
    if (activityType === ACTIVITY_TYPES.formatResponse) {
      this.closeStep();
      this.claudeCalls.set(activityId, { kind: 'formatter' });
      this.answerIsJson = (input as FormatResponseInput | undefined)?.output !== undefined;
      return;
    }
    if (activityType === ACTIVITY_TYPES.callTool) {
      this.announce();
      const { toolUseId, tool, arguments: args } = input as CallToolInput;
      this.toolActivities.set(activityId, { toolUseId, scheduledMs: timeMs });
      const use = this.uses.get(toolUseId);
      this.ran.add(signature(use?.use.name ?? tool, use?.use.input ?? args));
    }
  }

  private completed(activityId: string, result: unknown, timeMs: number): void {
    const call = this.claudeCalls.get(activityId);
    if (call?.kind === 'step') {
      const reply = result as ClaudeCallOutput;
      if (reply.stream)
        this.emitRecord(call, reply.stream, {
          t: stepText(reply.content),
          ...(this.reasoning ? { r: reasoningText(reply.content) } : {}),
        });
      this.serverTools(reply, call.step);
      this.unannounced = toolUses(reply.content).map((use) => ({ use, step: call.step, ended: false }));
      return;
    }
    if (call?.kind === 'formatter') {
      const formatted = result as FormatResponseOutput;
      const answer = buildResponse(formatted.output).conversation;
      if (formatted.stream) this.emitRecord(call, formatted.stream, { a: answer });
      this.answerStreamed = formatted.stream ? answer : undefined;
      return;
    }
    const tool = this.toolActivities.get(activityId);
    if (tool) {
      const out = result as CallToolOutput;
      if (this.askedForInput(tool.toolUseId, out)) return;
      this.toolEnded(tool.toolUseId, {
        isError: out.isError,
        durationMs: out.durationMs ?? timeMs - tool.scheduledMs,
        resultBytes: byteLength(out.content),
        output: outputText(out.content),
        ...(out.attempt !== undefined ? { attempts: out.attempt } : {}),
      });
    }
  }

  /**
   * A reply's server tool calls and results: the API ran them within the call. A call whose result
   * is not in this reply (Claude called one of the turn's tools too) gets it in a later one.
   */
  private serverTools(reply: ClaudeCallOutput, step: number): void {
    for (const c of serverToolCalls(reply.content)) {
      if (this.serverCalls.has(c.id)) continue;
      this.serverCalls.set(c.id, c.name);
      this.out.push({ type: 'tool-input-available', toolCallId: c.id, toolName: c.name, input: c.input, step, providerExecuted: true });
    }
    for (const r of serverToolResults(reply.content)) {
      const toolName = this.serverCalls.get(r.toolUseId);
      if (toolName === undefined) continue;
      this.serverCalls.delete(r.toolUseId);
      this.out.push({
        type: 'tool-output-available',
        toolCallId: r.toolUseId,
        toolName,
        isError: r.isError,
        durationMs: 0,
        resultBytes: r.bytes,
        output: r.text.length <= TOOL_OUTPUT_TEXT_LIMIT ? r.text : `${r.text.slice(0, TOOL_OUTPUT_TEXT_LIMIT)}… (${r.text.length - TOOL_OUTPUT_TEXT_LIMIT} more characters)`,
        providerExecuted: true,
      });
    }
  }

  /** A call that ran as a local activity: it started and ended in one workflow task. */
  private localToolCall(fact: Extract<TurnFact, { kind: 'local-tool-call' }>): void {
    this.announce();
    const use = this.uses.get(fact.toolUseId);
    if (use) this.ran.add(signature(use.use.name, use.use.input));
    const out = fact.result;
    if (out && this.askedForInput(fact.toolUseId, out)) return;
    this.toolEnded(
      fact.toolUseId,
      out
        ? { isError: out.isError, durationMs: out.durationMs ?? fact.durationMs, resultBytes: byteLength(out.content), output: outputText(out.content), attempts: out.attempt ?? fact.attempts }
        : { isError: true, durationMs: fact.durationMs, resultBytes: 0, attempts: fact.attempts },
    );
  }

  private ended(fact: Extract<TurnFact, { kind: 'activity-ended' }>): void {
    const call = this.claudeCalls.get(fact.activityId);
    if (call) {
      if (fact.record) this.emitRecord(call, fact.record, {});
      return;
    }
    const tool = this.toolActivities.get(fact.activityId);
    if (tool && fact.how !== 'cancelled')
      this.toolEnded(tool.toolUseId, {
        isError: true,
        durationMs: fact.timeMs - tool.scheduledMs,
        resultBytes: 0,
      });
  }

  /**
   * A call's result that asks for the person's input does not end the call: it is sent again with
   * the answers. Past {@link MAX_INPUT_ROUNDS} answered rounds the workflow stops it with an error.
   */
  private askedForInput(toolUseId: string, out: CallToolOutput): boolean {
    if (!out.inputRequired) return false;
    const results = (this.inputResults.get(toolUseId) ?? 0) + 1;
    this.inputResults.set(toolUseId, results);
    if (results <= MAX_INPUT_ROUNDS) return true;
    const target = this.targetOf(toolUseId);
    const text = tooManyRoundsText(target?.server ?? '?', target?.tool ?? '?');
    this.toolEnded(toolUseId, { isError: true, durationMs: out.durationMs ?? 0, resultBytes: byteLength([{ type: 'text', text }]), output: text, ...(out.attempt !== undefined ? { attempts: out.attempt } : {}) });
    return true;
  }

  private targetOf(toolUseId: string): ToolTarget | undefined {
    const use = this.uses.get(toolUseId);
    return use ? this.targets[use.use.name] : undefined;
  }

  private pendingApprovals(all: readonly PendingApprovalMemo[]): void {
    this.announce();
    this.pendingInputs(all.filter((p) => p.kind === 'input'));
    const pending = all.filter((p) => p.kind !== 'input');
    const now = new Set(pending.map((p) => p.callId));
    for (const [callId, toolName] of this.waiting) {
      if (now.has(callId)) continue;
      // It left the list without a decision: its wait timed out.
      this.denied.add(callId);
      this.waiting.delete(callId);
      this.out.push({ type: 'data-approval', toolCallId: callId, toolName, state: 'timed_out' });
    }
    for (const p of pending) {
      if (this.waiting.has(p.callId) || this.denied.has(p.callId) || this.uses.get(p.callId)?.ended) continue;
      this.waiting.set(p.callId, p.name);
      const input = this.uses.get(p.callId)?.use.input ?? p.input;
      this.out.push({
        type: 'data-approval',
        toolCallId: p.callId,
        toolName: p.name,
        state: 'waiting',
        ...(input !== undefined ? { input } : {}),
        ...(p.timeoutMs !== undefined ? { timeoutMs: p.timeoutMs } : {}),
      });
    }
  }

  /** Rounds of questions waiting now (the memo's records of kind `input`): new ones wait, those gone undecided timed out. */
  private pendingInputs(pending: readonly PendingApprovalMemo[]): void {
    const now = new Set(pending.map((p) => inputKey(p.callId, p.round ?? 1)));
    for (const [callId, waiting] of this.asking) {
      if (now.has(inputKey(callId, waiting.round))) continue;
      // It left the list without a decision: nobody answered in time, and the questions were declined.
      this.asking.delete(callId);
      const { timeoutMs: _t, ...asked } = waiting;
      this.out.push({ ...asked, state: 'timed_out' });
    }
    for (const p of pending) {
      const round = p.round ?? 1;
      const key = inputKey(p.callId, round);
      if (this.asked.has(key) || this.uses.get(p.callId)?.ended) continue;
      this.asked.add(key);
      const target = this.targetOf(p.callId);
      const event: InputEvent = {
        type: 'data-input',
        toolCallId: p.callId,
        round,
        state: 'waiting',
        toolName: p.name,
        server: p.server ?? target?.server ?? '',
        tool: p.tool ?? target?.tool ?? '',
        requests: p.requests ?? [],
        ...(p.timeoutMs !== undefined ? { timeoutMs: p.timeoutMs } : {}),
      };
      this.asking.set(p.callId, event);
      this.out.push(event);
    }
  }

  /** The open step's tool calls, announced: the turn went on with them. */
  private announce(): void {
    for (const u of this.unannounced) {
      this.uses.set(u.use.id, u);
      const target = this.targets[u.use.name];
      this.out.push({
        type: 'tool-input-available',
        toolCallId: u.use.id,
        toolName: u.use.name,
        ...(target ? { server: target.server, tool: target.tool } : {}),
        input: u.use.input,
        step: u.step,
      });
    }
    this.unannounced = [];
  }

  private toolEnded(
    toolUseId: string,
    fields: {
      isError: boolean;
      durationMs: number;
      resultBytes: number;
      output?: string;
      attempts?: number;
      notRun?: 'repeated' | 'denied' | 'refused';
    },
  ): void {
    const use = this.uses.get(toolUseId);
    if (!use || use.ended) return;
    use.ended = true;
    this.out.push({
      type: 'tool-output-available',
      toolCallId: toolUseId,
      toolName: use.use.name,
      ...fields,
    });
  }

  /** The open step ends: its calls that never ran are answered, then `finish-step`. */
  private closeStep(): void {
    if (this.openStep === undefined) return;
    this.announce();
    for (const u of this.uses.values()) {
      if (u.ended || u.step !== this.openStep) continue;
      const id = u.use.id;
      const notRun = this.denied.has(id)
        ? 'denied'
        : this.ran.has(signature(u.use.name, u.use.input))
          ? 'repeated'
          : 'refused';
      this.toolEnded(id, { isError: notRun !== 'repeated', durationMs: 0, resultBytes: 0, notRun });
    }
    this.out.push({ type: 'finish-step', step: this.openStep });
    this.openStep = undefined;
  }

  private emitRecord(call: ClaudeCall, record: StreamRecord, texts: FinalTexts): void {
    const parts = expandRecord(record, texts);
    // Parts before the first retry part came from the record's first attempt; each retry part names the next one.
    let attempt = record.first;
    for (const part of parts) {
      if (part[0] === 'x') {
        attempt = part[1];
        if (call.kind === 'formatter') this.answerRetry(attempt, part[2]);
        else
          this.out.push({
            type: 'data-retry',
            discard: [stepTextId(call.step), reasoningId(call.step)],
            attempt,
            reason: part[2],
            step: call.step,
          });
        continue;
      }
      const delta = String(part[1]);
      if (call.kind === 'formatter') {
        if (part[0] === 'a') this.answerDelta(delta, attempt);
      } else if (part[0] === 't')
        this.out.push({ type: 'text-delta', id: stepTextId(call.step), delta, step: call.step, attempt });
      else if (part[0] === 'r')
        this.out.push({
          type: 'reasoning-delta',
          id: reasoningId(call.step),
          delta,
          step: call.step,
          attempt,
        });
    }
  }

  /** An answer delta, and with a JSON answer the object parsed so far when it changed. */
  private answerDelta(delta: string, attempt: number): void {
    this.out.push({ type: 'text-delta', id: ANSWER_TEXT_ID, delta, attempt });
    if (!this.answerIsJson) return;
    const parsed = this.partialOutput.add(delta);
    if (parsed) this.out.push({ type: 'data-output', output: parsed.value, partial: true });
  }

  /** The answer so far is discarded: its text, and the object parsed from it. */
  private answerRetry(attempt: number, reason: string): void {
    this.partialOutput.reset();
    this.out.push({ type: 'data-retry', discard: [ANSWER_TEXT_ID], attempt, reason });
  }
}

type InputEvent = Extract<UnnumberedEvent, { type: 'data-input' }>;

function inputKey(callId: string, round: number): string {
  return `${callId}#${round}`;
}

function signature(name: string, input: unknown): string {
  return `${name}\u0000${canonicalJson(input)}`;
}

/** A tool result's content as text, cut at {@link TOOL_OUTPUT_TEXT_LIMIT} characters. */
function outputText(content: CallToolOutput['content']): string {
  const text = content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
  if (text.length <= TOOL_OUTPUT_TEXT_LIMIT) return text;
  return `${text.slice(0, TOOL_OUTPUT_TEXT_LIMIT)}… (${text.length - TOOL_OUTPUT_TEXT_LIMIT} more characters)`;
}

function byteLength(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value ?? null));
}
