/**
 * The state of one running turn: its resolved input, transcript, tool calls, phase, step and
 * usage. Only its methods change it; the progress query and the UI's current details are computed
 * from it when asked.
 */
import type { LiveInputAsked } from '../src/core/input-requests';
import { condition, log, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { SA_BATCH } from '../src/core/search-attributes';
import type { ApprovalRecord } from '../src/core/approvals';
import type {
  CallControls,
  ClaudeCallInput,
  ClaudeCallOutput,
  DroppedTool,
  FormatMode,
  FormatResponseInput,
  OfferedTool,
  PreparedTurn,
  ServerUnavailable,
  ThinkingConfigParam,
  ToolApproval,
  ToolChoice,
} from '../src/core/contracts';
import { loopToolChoiceOf, toolChoiceForStep, type LoopToolChoice } from '../src/core/request-controls';
import type { OutputReport } from '../src/core/output-spec';
import { turnSystemPrompt } from '../src/core/prompts';
import { historyServerTools, isServerToolDefinition } from '../src/core/server-tools';
import { calledToolNames, referencedToolNames } from '../src/core/tool-references';
import { unavailableServers } from '../src/core/turn-toolset';
import { streamRequest } from '../src/core/stream-record';
import { resolveTurn, type ResolvedTurnInput } from '../src/core/resolve-turn';
import type { TurnResponse } from '../src/core/response';
import { segment, type TranscriptSegment } from '../src/core/transcript-segment';
import { progressDetails, type TurnProgressState } from '../src/core/turn-progress';
import type { ChatTurnResult, TurnProgress, TurnStopReason } from '../src/core/turn-result';
import { addUsage, totalTokens, ZERO_USAGE, type TokenUsage } from '../src/core/usage';
import type { ChatTurnInput } from '../src/schemas/turn-input';
import { publishWaitingApprovals } from './approval-status';
import { MessageBatchCalls } from './message-batch-call';
import { InteractiveCalls, type ClaudeCalls } from './claude-calls';
import type { ApprovalRequest, Approvals } from './approvals';
import { ToolCalls } from './tool-round';
import { TurnTranscript } from './turn-transcript';
import { workflowTime } from './workflow-clock';

/** What every Claude call of the loop is asked with, besides the transcript and the step. */
export type ClaudeStepRequest = Omit<ClaudeCallInput, 'step'>;

/** How a turn answered: the response, and how the formatter arrived at it (absent without it). */
export interface TurnAnswer {
  response: TurnResponse;
  formatMode?: FormatMode;
  /** With the turn's `output`: the JSON answer (absent when none validates) and how it was written. */
  typed?: { output?: unknown; report: OutputReport };
}

/** Progress before the turn's start has finished. */
export const STARTING_PROGRESS: TurnProgress = {
  phase: 'listing-tools',
  step: 0,
  toolCalls: [],
  pendingApprovals: [],
  usage: ZERO_USAGE,
  costUsd: 0,
};

export class Turn {
  readonly input: ResolvedTurnInput;
  /** The loop's Claude calls' request, besides the transcript. */
  readonly request: ClaudeStepRequest;
  /** The formatter's request, besides the transcript and the tools it names: the caller's system prompt, no gathering instructions. */
  private readonly formatRequest: FormatResponseInput;
  /** Every tool definition Claude is sent: the catalog's, and the server tools the prior history called. */
  private readonly offered: readonly OfferedTool[];
  readonly transcript: TurnTranscript;
  readonly calls: ToolCalls;
  /** Servers whose tools this turn goes without, and why. */
  readonly unavailable: readonly ServerUnavailable[];
  readonly droppedTools: readonly DroppedTool[];
  /** Claude was offered at least one tool. */
  readonly hadTools: boolean;
  /** The turn streams: its Claude calls publish what they write. */
  readonly streamed: boolean;
  /** The worker that started the turn runs its unstreamed Claude calls on the turn's queue (WorkerTurnDefaults). */
  readonly claudeOnTurnQueue: boolean;
  private phase: TurnProgress['phase'] = 'listing-tools';
  private steps = 0;
  private usage: TokenUsage = ZERO_USAGE;
  private costUsd = 0;
  /** Whether any call waited for approval when that was last published. */
  private waitingPublished = false;
  /** The turn's `toolChoice`, in one form; absent without one, or without tools to choose from. */
  private readonly toolChoice: LoopToolChoice | undefined;
  /** The Claude name of the tool `toolChoice` forces. */
  private readonly forcedTool: string | undefined;
  /** The stop sequence the loop's last call ended at. */
  stopSequence: string | undefined = undefined;
  /** The code execution container the turn's calls run in, once a reply ran code: its later calls go on in it. */
  container: string | undefined = undefined;
  /** How the turn calls Claude: each call an activity, or every call through Message Batches (`input.messageBatches`). */
  readonly claudeCalls: ClaudeCalls;

  /**
   * A turn from its input and what its start decided and recorded (its toolset and the worker's
   * defaults); `history` is prior conversation passed as segments (a conversation's turns), after
   * `input.history`.
   */
  constructor(
    input: ChatTurnInput,
    prepared: PreparedTurn,
    private readonly approvals: Approvals,
    history: TranscriptSegment[] = [],
  ) {
    this.input = resolveTurn(input, prepared.workerDefaults);
    this.claudeOnTurnQueue = prepared.workerDefaults.claudeOnTurnQueue === true;
    const batches = this.input.messageBatches;
    const { catalog } = prepared;
    if (catalog.dropped.length) log.info('tools not offered to Claude', { dropped: catalog.dropped });
    this.droppedTools = catalog.dropped;
    this.hadTools = catalog.tools.length > 0;
    this.unavailable = unavailableServers(prepared);
    this.transcript = new TurnTranscript([...(this.input.history ? [segment(this.input.history)] : []), ...history], this.input.question);
    // The server tools the prior history called stay defined, whatever this turn offers (the API refuses them undefined).
    const tools = [...catalog.tools, ...historyServerTools(this.transcript.priorMessages(), catalog.tools)];
    this.transcript.offerTools(tools);
    this.calls = new ToolCalls({
      catalog,
      policies: prepared.policies,
      budget: this.input.maxToolCalls,
      approvalFor: (name) => prepared.approvals[name],
      waitForApproval: (call, approval) => this.waitForApproval(call, approval),
      roundsAsked: (callId) => this.approvals.records.filter((r) => r.callId === callId && r.kind === 'input').length,
      inBatch: workflowInfo().typedSearchAttributes.get(SA_BATCH) !== undefined,
      ...(this.input.context ? { context: this.input.context } : {}),
    });
    const { model, maxTokensPerCall: maxTokens } = this.input;
    const thinking: ThinkingConfigParam | undefined = this.input.thinking ? { type: 'enabled', budget_tokens: this.input.thinking.budgetTokens } : undefined;
    const loopSystem = turnSystemPrompt(this.input, this.unavailable, { for: 'loop' });
    const formatterSystem = turnSystemPrompt(this.input, this.unavailable, { for: 'formatter' });
    // A Message Batch does not stream.
    const stream = batches ? undefined : streamRequest(this.input.stream);
    this.streamed = stream !== undefined;
    this.claudeCalls = batches
      ? new MessageBatchCalls({ ...(batches.deadlineMs !== undefined ? { deadlineMs: batches.deadlineMs } : {}), onWaiting: () => this.refreshDetails() })
      : new InteractiveCalls({ streamed: this.streamed, claudeOnTurnQueue: this.claudeOnTurnQueue });
    const streaming = stream ? { stream } : {};
    const { effort, cache, userId, stopSequences, output } = this.input;
    // What every call of the turn is sent (src/core/request-controls.ts).
    const controls: CallControls = { ...(effort ? { effort } : {}), ...(cache ? { cache } : {}), ...(userId ? { userId } : {}) };
    this.request = {
      model,
      maxTokens,
      ...(loopSystem !== undefined ? { system: loopSystem } : {}),
      ...(thinking ? { thinking } : {}),
      ...streaming,
      ...controls,
      ...(stopSequences ? { stopSequences } : {}),
    };
    this.toolChoice = this.input.toolChoice !== undefined && this.hadTools ? loopToolChoiceOf(this.input.toolChoice) : undefined;
    this.forcedTool = prepared.forcedTool;
    this.offered = tools;
    this.formatRequest = {
      model,
      maxTokens,
      ...(formatterSystem !== undefined ? { system: formatterSystem } : {}),
      ...(thinking ? { thinking } : {}),
      ...streaming,
      ...controls,
      ...(output ? { output } : {}),
    };
  }

  /** The `tool_choice` of the loop's call at `step`, from the turn's `toolChoice` (a turn without tools sends none). */
  toolChoiceFor(step: number): { toolChoice?: ToolChoice } {
    const toolChoice = toolChoiceForStep(this.toolChoice, step, this.forcedTool);
    return toolChoice ? { toolChoice } : {};
  }

  /**
   * The formatter's request, besides the transcript: with the tools its transcript names (the
   * server tools, the deferred tools a search found) and the container the turn's code ran in.
   */
  formatterRequest(): FormatResponseInput {
    const messages = [...this.transcript.priorMessages(), ...this.transcript.ownMessages()];
    // The typed output's call has no tool of its own to keep the transcript's tool_use blocks defined: it is sent the tools they call.
    const referenced = new Set([...referencedToolNames(messages), ...(this.input.output ? calledToolNames(messages) : [])]);
    const tools = this.offered.filter((t) => isServerToolDefinition(t) || referenced.has(t.name));
    return { ...this.formatRequest, ...(tools.length ? { tools } : {}), ...(this.container ? { container: this.container } : {}) };
  }

  /** Claude calls of the loop so far. */
  get step(): number {
    return this.steps;
  }

  /** Starts the loop's next step: the step number. */
  beginStep(): number {
    this.steps++;
    this.enter('asking-claude');
    return this.steps;
  }

  /** Enters a phase; the UI's current details follow. */
  enter(phase: TurnProgress['phase']): void {
    this.phase = phase;
    this.refreshDetails();
  }

  /** Adds an answered Claude call (the loop's or the formatter's) to the turn's usage and cost. */
  addUsage(call: Pick<ClaudeCallOutput, 'usage' | 'costUsd'>): void {
    this.usage = addUsage(this.usage, call.usage);
    this.costUsd += call.costUsd ?? 0;
  }

  /** Every token of the turn's Claude calls so far: what `maxTokens` budgets. */
  tokensUsed(): number {
    return totalTokens(this.usage);
  }

  progress(): TurnProgressState {
    return {
      phase: this.phase,
      step: this.steps,
      maxSteps: this.input.maxSteps,
      toolCalls: this.calls.all,
      running: this.calls.running,
      approvals: this.approvals.records,
      usage: this.usage,
      costUsd: this.costUsd,
      ...(this.claudeCalls.waitingMessageBatch ? { waitingMessageBatch: this.claudeCalls.waitingMessageBatch } : {}),
    };
  }

  /** The Temporal UI's current details follow the state. */
  refreshDetails(): void {
    setCurrentDetails(progressDetails(this.progress()));
  }

  /** The turn's result, once it has answered. */
  finish(loopStopReason: TurnStopReason, { response, formatMode, typed }: TurnAnswer): ChatTurnResult {
    this.enter('done');
    const stopReason = typed && typed.output === undefined ? (typed.report.refused ? 'refusal' : 'invalid_output') : loopStopReason;
    return {
      response,
      stopReason,
      ...(typed ? { ...(typed.output !== undefined ? { output: typed.output } : {}), outputReport: typed.report } : {}),
      ...(stopReason === 'stop_sequence' && this.stopSequence !== undefined ? { stopSequence: this.stopSequence } : {}),
      steps: this.steps,
      toolCalls: this.calls.records,
      usage: this.usage,
      costUsd: this.costUsd,
      model: this.input.model,
      messages: this.finalMessages(response),
      ...(formatMode && !typed ? { formatMode } : {}),
      unavailableServers: [...this.unavailable],
      droppedTools: [...this.droppedTools],
      approvals: [...this.approvals.records],
      ...(this.transcript.compaction ? { compaction: this.transcript.compaction } : {}),
    };
  }

  /**
   * The transcript for the result: the `history` the caller passed (compacted, if it was) and this
   * turn's messages, never ending on an unanswered user message, so it can be the next turn's
   * history as it is. History passed as segments (by a conversation) is not echoed back.
   */
  private finalMessages(response: TurnResponse): ChatTurnResult['messages'] {
    const messages = [...(this.input.history ? this.transcript.priorMessages() : []), ...this.transcript.ownMessages()];
    if (messages[messages.length - 1]?.role === 'user') messages.push({ role: 'assistant', content: response.conversation || '(no answer)' });
    return messages;
  }

  /**
   * Keeps a call as waiting and waits for its decision, or its timeout (a durable timer): no worker
   * slot is held, and a waiting turn can leave the worker's cache. Answers the decided record.
   */
  /** A question a server asks during a live call (src/core/workflow-handlers.ts liveInputSignal). */
  askLive(asked: LiveInputAsked): void {
    this.calls.askLive(asked);
  }

  private async waitForApproval(call: ApprovalRequest, approval: ToolApproval): Promise<ApprovalRecord> {
    this.approvals.add(call, approval, workflowTime());
    this.approvalsChanged();
    const decided = (): boolean => this.approvals.current(call.callId)?.outcome !== undefined;
    if (approval.timeoutMs === undefined) await condition(decided);
    else if (!(await condition(decided, approval.timeoutMs))) this.approvals.timeOut(call.callId, workflowTime());
    this.approvalsChanged();
    return this.approvals.current(call.callId)!;
  }

  private approvalsChanged(): void {
    this.waitingPublished = publishWaitingApprovals(this.approvals.pending(), this.waitingPublished);
    this.refreshDetails();
  }
}
