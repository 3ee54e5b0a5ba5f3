/**
 * Chat turns on the shared test dev server with every activity scripted in-process: no HTTP, no MCP
 * process. The workflow is the real one (the shared bundle of workflows/). `prepareTurn` checks the
 * input with the real schema, then hands out the script's tools and call policies; `callTool`,
 * `claude` and `formatResponse` answer from the script of the turn's workflow id and record what they
 * were asked, including the conversation Claude was sent (joined from the transcript segments the
 * activity is given, as the real Claude activities do).
 *
 * A turn with `messageBatches` sends its Claude calls through the real collector workflow
 * (workflows/message-batch-collector.ts): the Message Batches activities are scripted too.
 * `submitToMessageBatch` plans the request as the real one does (src/message-batches/batch-request.ts,
 * so the formatter's calls are the real formatter's) and signal-with-starts the collector; each
 * request takes the script's next Claude reply (the formatter's: a valid `response_formatter` call of
 * its text); `createMessageBatch` answers `msgbatch_scripted_<n>`, `retrieveMessageBatch` says it has
 * ended at its `messageBatchPolls`-th poll, and `deliverMessageBatchResults` signals each turn its
 * request's reply (a `fail` step as the failure of an errored request). No API is called.
 *
 * One pair of workers serves a whole test file: start them once (`startScriptedTurns` in beforeAll)
 * and give each turn its own script.
 */
import type { InputRequest } from '../../src/core/input-requests';
import { toolCallName } from '../../src/core/tool-call-activity';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { TextBlock, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { ClaudeActivities } from '../../activities/claude';
import type { ToolCallActivities } from '../../activities/tool-calls';
import type { BatchSubmitted, MessageBatchActivities, MessageBatchSubmitActivities } from '../../activities/message-batches';
import type { TurnStartActivities } from '../../activities/turn-start';
import type {
  CallToolInput,
  CallToolOutput,
  ClaudeCallInput,
  ClaudeCallOutput,
  ContentBlock,
  FormatMode,
  FormatResponseInput,
  FormatResponseOutput,
  JsonSchemaObject,
  PreparedTurn,
  ToolListing,
  MessageParam,
  ServerCallPolicy,
  ServerUnavailable,
  StopReason,
  OfferedTool,
} from '../../src/core/contracts';
import type { ToolApproval } from '../../src/core/contracts';
import type { WorkerTurnDefaults } from '../../src/core/contracts';
import { INVALID_TURN_INPUT } from '../../src/core/failure-types';
import { prepareTurnOf } from '../../src/core/turn-toolset';
import { joinSegments, type TranscriptSegment } from '../../src/core/transcript-segment';
import { claudeTaskQueue } from '../../src/core/task-queues';
import {
  API_MAX_BYTES,
  collectorWorkflowId,
  type BatchedCallFailure,
  type BatchedCallOutcome,
  type BatchRequestEntry,
  type DeliveryReport,
  type MessageBatchSettings,
  type TurnRef,
} from '../../src/core/message-batches';
import { messageBatchResultSignal } from '../../src/core/workflow-handlers';
import { collectorTarget, CollectorSubmissions } from '../../src/message-batches/collector-submissions';
import { answerAllWith } from '../../src/message-batches/deliver-results';
import { batchRequestOf, type BatchSubmitInput } from '../../src/message-batches/batch-request';
import type { CreatedBatch } from '../../src/message-batches/create-batch';
import type { DeliveryInput } from '../../src/message-batches/deliver-results';
import { FORMATTER_TOOL_NAME } from '../../src/schemas/response-formatter-tool';
import { ChatTurnInputError, parseChatTurnInput, type ChatTurnInput } from '../../src/schemas/turn-input';
import type { ChatTurnResult } from '../../src/core/turn-result';
import type { TokenUsage } from '../../src/core/usage';
import { storesPayloads } from '../../src/data-converter/data-converter';
import { testClient, testWorker, uniqueQueue } from './temporal';
import { testDataConverter } from './settings';

/** One MCP tool of a script: what `prepareTurn` lists and how `callTool` answers it. */
export interface ScriptedTool {
  server: string;
  /** The tool's MCP name; Claude sees it as `server__name`. */
  name: string;
  description?: string;
  /** @default an object schema with no properties */
  inputSchema?: JsonSchemaObject;
  /** The worker's config says a call of this tool waits for approval. */
  approval?: ToolApproval;
  /** The result text, or a function of the call's arguments (and the person's answers to `asks`). @default `<name> ok` */
  result?: string | ((args: Record<string, unknown>, answers?: CallToolInput['inputResponses']) => string);
  /** Answer as a tool-level error (MCP `isError`). */
  isError?: boolean;
  /** Throw this on every attempt: retried by Temporal unless `nonRetryable`. */
  fail?: { message: string; type?: string; nonRetryable?: boolean };
  /** Wait this long before answering, heartbeating; a cancelled call stops waiting. */
  delayMs?: number;
  /** Wait until this settles before answering, heartbeating; a cancelled call stops waiting. */
  hold?: Promise<unknown>;
  /**
   * The server asks the person these questions first (2026-07-28 `input_required`, with the
   * requestState `scripted-state`); the call sent again with answers gets `result`, which then
   * sees them as its second argument.
   */
  asks?: InputRequest[];
}

/** One scripted Claude reply. */
export interface ClaudeReply {
  content: ContentBlock[];
  /** @default `tool_use` when the content has a tool_use block, else `end_turn` */
  stopReason?: StopReason | null;
  /** @default {@link DEFAULT_USAGE} */
  usage?: Partial<TokenUsage>;
  /** @default 0 */
  costUsd?: number;
  /** Wait until this settles before answering, heartbeating; a cancelled call stops waiting. */
  hold?: Promise<unknown>;
  /**
   * The server asks the person these questions first (2026-07-28 `input_required`, with the
   * requestState `scripted-state`); the call sent again with answers gets `result`, which then
   * sees them as its second argument.
   */
  asks?: InputRequest[];
}

/** A scripted failure of one Claude call, e.g. `{ type: 'ClaudePromptTooLong', message: 'prompt is too long: …', nonRetryable: true }`. */
export interface ClaudeFailure {
  fail: { type: string; message: string; nonRetryable?: boolean };
}

export type ClaudeStep = ClaudeReply | ClaudeFailure;

export interface FormatterScript {
  /** @default "formatted answer" */
  text?: string;
  /** @default "forced" (a batched turn's formatter is the real one: its mode is its own) */
  mode?: FormatMode;
  /** @default {@link DEFAULT_USAGE} */
  usage?: Partial<TokenUsage>;
  /** @default 0 */
  costUsd?: number;
  /** The typed answer of a turn with `output` (its text is this object's JSON). @default {} */
  output?: Record<string, unknown>;
}

/** Everything one turn's activities answer. */
export interface TurnScript {
  tools?: ScriptedTool[];
  /** Call policy per server; every other listed server gets {@link FAST_TOOL_POLICY}. */
  policies?: Record<string, ServerCallPolicy>;
  unavailable?: ServerUnavailable[];
  unknownServers?: string[];
  /** The worker's defaults, as `prepareTurn` reports them (e.g. its `claude.model`). @default {} */
  workerDefaults?: WorkerTurnDefaults;
  /** Claude's answers in call order, one per call (a retried attempt takes the next one). */
  claude: ClaudeStep[];
  formatter?: FormatterScript;
}

/** What one Claude activity (`claude` or `formatResponse`) was asked. */
export interface ClaudeRequestSeen {
  workflowId: string;
  activity: 'claude' | 'formatResponse';
  /** The loop step (`claude` only). */
  step?: number;
  attempt: number;
  model: string;
  system?: string;
  maxTokens: number;
  thinking?: ClaudeCallInput['thinking'];
  /** The conversation Claude was sent (the messages of its transcript segments). */
  messages: MessageParam[];
  /** The tool definitions Claude was offered (none for the formatter). */
  tools: OfferedTool[];
  /** The activity input as scheduled (of a batched call: the request it submitted). */
  input: ClaudeCallInput | FormatResponseInput;
  /** A batched call: the custom_id of its request in a Message Batch. */
  customId?: string;
  /** `waiting` while held; `cancelled` when the activity saw its cancellation. */
  outcome: 'waiting' | 'answered' | 'failed' | 'cancelled';
}

/** One `callTool` attempt. */
export interface ToolCallSeen {
  workflowId: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  toolUseId: string;
  attempt: number;
  /** When the attempt started and ended (`performance.now()`: monotonic, sub-millisecond). */
  startedAt: number;
  endedAt?: number;
  outcome: 'running' | 'ok' | 'error' | 'failed' | 'cancelled';
}

/** What one turn's activities were asked, filled in as the turn runs. */
export interface TurnRecords {
  workflowId: string;
  /** Loop calls of Claude, in order. */
  claude: ClaudeRequestSeen[];
  /** Formatter calls. */
  formatter: ClaudeRequestSeen[];
  /** Every `callTool` attempt. */
  toolCalls: ToolCallSeen[];
  /** `prepareTurn` runs. */
  prepared: number;
}

export interface StartedTurn extends TurnRecords {
  handle: WorkflowHandle;
  result(): Promise<ChatTurnResult>;
}

/** A scripted Message Batch: what the collector created, polled and had delivered. */
export interface MessageBatchSeen {
  id: string;
  /** The custom_ids of its requests, in order. */
  customIds: string[];
  /** The requests' Messages API params, as the collector sent them. */
  entries: BatchRequestEntry[];
  retrieves: number;
  cancelled: boolean;
  /** Its results were delivered (a count per delivery). */
  deliveries: number;
}

export interface ScriptedTurnsOptions {
  taskQueue?: string;
  /** The collector's settings (as a worker's `claude.messageBatches`). @default {@link SCRIPTED_MESSAGE_BATCH_SETTINGS} */
  messageBatches?: Partial<Omit<MessageBatchSettings, 'storesPayloads'>>;
  /** A Message Batch has ended at this poll (`retrieveMessageBatch`), not before. @default 1 */
  messageBatchPolls?: number;
  /**
   * Asked at each poll (`retrieveMessageBatch`, after counting it): the Message Batch has ended.
   * Replaces `messageBatchPolls`; a cancelled batch has always ended.
   */
  messageBatchEnded?: (batch: MessageBatchSeen) => boolean;
  /** `createMessageBatch` waits for this (heartbeating) before it creates the batch of these requests. */
  beforeCreateMessageBatch?: (entries: BatchRequestEntry[]) => Promise<unknown> | undefined;
}

export interface ScriptedTurns {
  client: Client;
  taskQueue: string;
  /** Starts a turn with this script (the input is sent as given, unchecked) and waits for its result. */
  run(input: ChatTurnInput, script: TurnScript): Promise<TurnRecords & { result: ChatTurnResult }>;
  /** Starts a turn with this script; the input is sent as given, so a bad one reaches the workflow. */
  start(input: ChatTurnInput, script: TurnScript, workflowId?: string): Promise<StartedTurn>;
  /** Scripts the turn that will run as `workflowId` (e.g. a batch's child), for turns started elsewhere. */
  expect(workflowId: string, script: TurnScript): TurnRecords;
  /** Every Claude activity request of every turn, in arrival order. */
  requests: ClaudeRequestSeen[];
  /** Every `callTool` attempt of every turn, in arrival order. */
  toolCalls: ToolCallSeen[];
  /** Every Message Batch the collector created, in order. */
  messageBatches: MessageBatchSeen[];
  /** The Message Batch collector's workflow id for this queue's turns of `model`. */
  collectorId(model: string): string;
  close(): Promise<void>;
}

/** Collector settings that never make a test wait long: sent after 200 ms, polled from 100 ms, ended after 1 s idle. */
export const SCRIPTED_MESSAGE_BATCH_SETTINGS: Omit<MessageBatchSettings, 'storesPayloads'> = {
  maxRequests: 100,
  maxWaitMs: 200,
  maxBytes: API_MAX_BYTES,
  pollInitialMs: 100,
  pollMaxMs: 1000,
  idleMs: 1000,
};

/** Usage of a scripted reply that names none. */
export const DEFAULT_USAGE: TokenUsage = {
  inputTokens: 100,
  outputTokens: 20,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
};

/** A tool call policy that never makes a test wait: 2 attempts 10 ms apart, 2 s heartbeat timeout. */
export const FAST_TOOL_POLICY: ServerCallPolicy = {
  localTools: [],
  startToCloseTimeoutMs: 30_000,
  heartbeatTimeoutMs: 2_000,
  retry: { maximumAttempts: 2, initialIntervalMs: 10, backoffCoefficient: 1, maximumIntervalMs: 10 },
};

/** Heartbeat this often while held, and let the worker send beats this often, so a cancel arrives at once. */
const BEAT_MS = 50;

/** A text block of a Claude reply. */
export function text(t: string): TextBlock {
  return { type: 'text', text: t, citations: null };
}

let toolUseCount = 0;

/** A tool_use block of a Claude reply; `name` is the Claude-side name (`server__tool`). */
export function toolUse(
  name: string,
  input: Record<string, unknown> = {},
  id = `toolu_${++toolUseCount}`,
): ToolUseBlock {
  return { type: 'tool_use', id, name, input, caller: { type: 'direct' } };
}

/** A Claude reply (stop reason from the content unless given). */
export function reply(content: ContentBlock[], more: Omit<ClaudeReply, 'content'> = {}): ClaudeReply {
  return { content, ...more };
}

function usageOf(u: Partial<TokenUsage> | undefined): TokenUsage {
  return { ...DEFAULT_USAGE, ...u };
}

/** Waits for `until`, heartbeating (a local activity has no heartbeat); throws CancelledFailure when the activity is cancelled first. */
async function waitBeating(until: Promise<unknown>): Promise<void> {
  const ctx = Context.current();
  const beat = (): void => {
    if (!ctx.info.isLocal) ctx.heartbeat();
  };
  beat();
  const timer = setInterval(beat, BEAT_MS);
  try {
    await Promise.race([until, ctx.cancelled]);
  } finally {
    clearInterval(timer);
  }
}

function scriptError(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'ScriptError', message, nonRetryable: true });
}

function workflowIdOf(ctx: Context): string {
  const id = ctx.info.workflowExecution?.workflowId;
  if (!id) throw scriptError('a scripted activity ran outside a workflow');
  return id;
}

interface TurnState {
  script: TurnScript;
  records: TurnRecords;
  claudeCalls: number;
}

/** A request submitted to a Message Batch, and the script's answer for it. */
interface BatchedRequest {
  request: ClaudeRequestSeen;
  answer: ClaudeStep;
}

/**
 * Starts a turn worker (workflows from the shared bundle, `prepareTurn` and `callTool`) and a Claude
 * worker (`claude`, `formatResponse`) on a fresh task queue of the shared test dev server.
 */
export async function startScriptedTurns(opts: ScriptedTurnsOptions = {}): Promise<ScriptedTurns> {
  const taskQueue = opts.taskQueue ?? uniqueQueue('scripted-turns');
  // One converter for the workers and the client, of this process's environment when they start.
  const dataConverter = testDataConverter();
  const turns = new Map<string, TurnState>();
  const requests: ClaudeRequestSeen[] = [];
  const toolCalls: ToolCallSeen[] = [];
  const batchSettings: MessageBatchSettings = {
    ...SCRIPTED_MESSAGE_BATCH_SETTINGS,
    ...opts.messageBatches,
    storesPayloads: storesPayloads(dataConverter),
  };
  const pollsUntilEnded = opts.messageBatchPolls ?? 1;
  /** Submitted requests by custom_id (a retried submission finds its own again). */
  const batched = new Map<string, BatchedRequest>();
  const messageBatches: MessageBatchSeen[] = [];
  const messageBatchOf = (id: string): MessageBatchSeen => {
    const batch = messageBatches.find((b) => b.id === id);
    if (!batch) throw scriptError(`no scripted Message Batch ${id}`);
    return batch;
  };

  const stateOf = (workflowId: string): TurnState => {
    const state = turns.get(workflowId);
    if (!state) throw scriptError(`no script for workflow ${workflowId}`);
    return state;
  };
  const expectTurn = (workflowId: string, script: TurnScript): TurnRecords => {
    const records: TurnRecords = { workflowId, claude: [], formatter: [], toolCalls: [], prepared: 0 };
    turns.set(workflowId, { script, records, claudeCalls: 0 });
    return records;
  };

  const turnActivities = {
    async prepareTurn(raw: unknown): Promise<PreparedTurn> {
      const state = stateOf(workflowIdOf(Context.current()));
      state.records.prepared++;
      let input: ChatTurnInput;
      try {
        input = parseChatTurnInput(raw);
      } catch (err) {
        if (!(err instanceof ChatTurnInputError)) throw err;
        throw ApplicationFailure.create({
          type: INVALID_TURN_INPUT,
          message: err.message,
          nonRetryable: true,
          details: err.problems,
        });
      }
      const { script } = state;
      const { servers } = input;
      const tools = (script.tools ?? []).filter((t) => !servers || servers.includes(t.server));
      const policies: Record<string, ServerCallPolicy> = {};
      for (const t of tools) policies[t.server] = script.policies?.[t.server] ?? FAST_TOOL_POLICY;
      const listing: ToolListing = {
        tools: tools.map((t) => ({
          server: t.server,
          name: t.name,
          ...(t.description !== undefined ? { description: t.description } : {}),
          inputSchema: t.inputSchema ?? { type: 'object', properties: {} },
          ...(t.approval ? { approval: t.approval } : {}),
        })),
        policies,
        unavailable: script.unavailable ?? [],
        unknownServers: script.unknownServers ?? [],
      };
      return prepareTurnOf(input, listing, script.workerDefaults ?? {});
    },

    async callTool(input: CallToolInput): Promise<CallToolOutput> {
      const ctx = Context.current();
      const state = stateOf(workflowIdOf(ctx));
      const tool = state.script.tools?.find((t) => t.server === input.server && t.name === input.tool);
      if (!tool) throw scriptError(`the script has no tool ${input.server}/${input.tool}`);
      const seen: ToolCallSeen = {
        workflowId: state.records.workflowId,
        server: input.server,
        tool: input.tool,
        arguments: input.arguments,
        toolUseId: input.toolUseId,
        attempt: ctx.info.attempt,
        startedAt: performance.now(),
        outcome: 'running',
      };
      state.records.toolCalls.push(seen);
      toolCalls.push(seen);
      try {
        if (tool.delayMs !== undefined) await waitBeating(new Promise((r) => setTimeout(r, tool.delayMs)));
        if (tool.hold) await waitBeating(tool.hold);
      } catch (err) {
        seen.outcome = 'cancelled';
        seen.endedAt = performance.now();
        throw err;
      }
      seen.endedAt = performance.now();
      if (tool.fail) {
        seen.outcome = 'failed';
        throw ApplicationFailure.create({
          type: tool.fail.type ?? 'ToolFailed',
          message: tool.fail.message,
          nonRetryable: tool.fail.nonRetryable ?? false,
        });
      }
      if (tool.asks && !input.inputResponses) {
        seen.outcome = 'ok';
        return { content: [], isError: false, artifacts: [], truncatedBytes: 0, attempt: ctx.info.attempt, inputRequired: { requests: tool.asks, requestState: 'scripted-state' } };
      }
      const result =
        typeof tool.result === 'function' ? tool.result(input.arguments, input.inputResponses) : (tool.result ?? `${tool.name} ok`);
      seen.outcome = tool.isError ? 'error' : 'ok';
      return {
        content: [{ type: 'text', text: result }],
        isError: tool.isError ?? false,
        artifacts: [],
        truncatedBytes: 0,
        attempt: ctx.info.attempt,
      };
    },

    /** A tool call run as a local activity: its type is the call's name (src/core/tool-call-activity.ts). */
    async default(input: CallToolInput): Promise<CallToolOutput> {
      const { activityType } = Context.current().info;
      if (activityType !== toolCallName(input.server, input.tool)) throw scriptError(`no scripted activity ${activityType}`);
      return turnActivities.callTool(input);
    },
  } satisfies Pick<TurnStartActivities, 'prepareTurn'> & Pick<ToolCallActivities, 'callTool'> & { default: unknown };

  async function record(
    activity: ClaudeRequestSeen['activity'],
    input: ClaudeCallInput | FormatResponseInput,
    segments: TranscriptSegment[],
  ): Promise<{ state: TurnState; request: ClaudeRequestSeen }> {
    const ctx = Context.current();
    const state = stateOf(workflowIdOf(ctx));
    // What Claude is sent: the segments' messages, and their tools (the formatter is offered none).
    const { messages, tools } = joinSegments(segments);
    const request: ClaudeRequestSeen = {
      workflowId: state.records.workflowId,
      activity,
      ...('step' in input ? { step: input.step } : {}),
      attempt: ctx.info.attempt,
      model: input.model,
      ...(input.system !== undefined ? { system: input.system } : {}),
      maxTokens: input.maxTokens,
      ...(input.thinking ? { thinking: input.thinking } : {}),
      messages,
      tools,
      input,
      outcome: 'waiting',
    };
    (activity === 'claude' ? state.records.claude : state.records.formatter).push(request);
    requests.push(request);
    return { state, request };
  }

  const claudeActivities = {
    async claude(input: ClaudeCallInput, ...segments: TranscriptSegment[]): Promise<ClaudeCallOutput> {
      const { state, request } = await record('claude', input, segments);
      const step = state.script.claude[state.claudeCalls++];
      if (!step) {
        request.outcome = 'failed';
        throw scriptError(`the script has no reply for Claude call ${state.claudeCalls}`);
      }
      if ('fail' in step) {
        request.outcome = 'failed';
        throw ApplicationFailure.create({
          type: step.fail.type,
          message: step.fail.message,
          nonRetryable: step.fail.nonRetryable ?? false,
        });
      }
      if (step.hold) {
        try {
          await waitBeating(step.hold);
        } catch (err) {
          request.outcome = 'cancelled';
          throw err;
        }
      }
      request.outcome = 'answered';
      const calls = step.content.some((b) => b.type === 'tool_use');
      return {
        content: step.content,
        stopReason: step.stopReason === undefined ? (calls ? 'tool_use' : 'end_turn') : step.stopReason,
        usage: usageOf(step.usage),
        model: input.model,
        costUsd: step.costUsd ?? 0,
      };
    },

    async formatResponse(input: FormatResponseInput, ...segments: TranscriptSegment[]): Promise<FormatResponseOutput> {
      const { state, request } = await record('formatResponse', input, segments);
      const script = state.script.formatter ?? {};
      request.outcome = 'answered';
      const typed = input.output ? (script.output ?? {}) : undefined;
      return {
        output: { conversation: [{ type: 'text', content: typed ? JSON.stringify(typed) : (script.text ?? 'formatted answer') }] },
        mode: typed ? 'structured' : (script.mode ?? 'forced'),
        usage: usageOf(script.usage),
        calls: 1,
        notes: [],
        costUsd: script.costUsd ?? 0,
        ...(typed ? { typed: { output: typed, report: { path: 'structured' as const, calls: 1, repaired: false, notes: [] } } } : {}),
      };
    },
  } satisfies Pick<ClaudeActivities, 'claude' | 'formatResponse'>;

  /** The next scripted answer of a batched request: a loop step's reply, or the formatter's valid call. */
  function batchedAnswer(state: TurnState, request: ClaudeRequestSeen): ClaudeStep {
    if (request.activity === 'claude') {
      const step = state.script.claude[state.claudeCalls++];
      if (!step) {
        request.outcome = 'failed';
        throw scriptError(`the script has no reply for Claude call ${state.claudeCalls}`);
      }
      return step;
    }
    const script = state.script.formatter ?? {};
    return {
      content: [toolUse(FORMATTER_TOOL_NAME, { conversation: [{ type: 'text', content: script.text ?? 'formatted answer' }] })],
      ...(script.usage ? { usage: script.usage } : {}),
      ...(script.costUsd !== undefined ? { costUsd: script.costUsd } : {}),
    };
  }

  /** A batched request's result, as the real delivery hands it to its turn (src/message-batches/batch-outcome.ts). */
  function outcomeOf(customId: string, batchId: string, { request, answer }: BatchedRequest): BatchedCallOutcome {
    if ('fail' in answer) {
      request.outcome = 'failed';
      const failure: BatchedCallFailure = {
        type: answer.fail.type,
        message: `${answer.fail.message} (in Message Batch ${batchId})`,
        retryable: !(answer.fail.nonRetryable ?? false),
      };
      return { customId, batchId, failure };
    }
    request.outcome = 'answered';
    const calls = answer.content.some((b) => b.type === 'tool_use');
    return {
      customId,
      batchId,
      output: {
        content: answer.content,
        stopReason: answer.stopReason === undefined ? (calls ? 'tool_use' : 'end_turn') : answer.stopReason,
        usage: usageOf(answer.usage),
        model: request.model,
        requestId: `msg_scripted_${customId.slice(0, 12)}`,
        costUsd: answer.costUsd ?? 0,
      },
    };
  }

  const submissions = new CollectorSubmissions({ storesPayloads: true });
  const messageBatchSubmit = {
    async submitToMessageBatch(input: BatchSubmitInput, ...segments: TranscriptSegment[]): Promise<BatchSubmitted | { done: FormatResponseOutput }> {
      const ctx = Context.current();
      const execution = ctx.info.workflowExecution;
      if (!execution) throw scriptError('submitToMessageBatch ran outside a workflow');
      const turn: TurnRef = { workflowId: execution.workflowId, runId: execution.runId };
      // The real planning: a loop step's request, or the formatter's next call (or its answer).
      const planned = await batchRequestOf(input, segments, turn, { cache: true });
      if ('done' in planned) return planned;
      const customId = planned.entry.batchRequest;
      if (!batched.has(customId)) {
        const { state, request } = await record(input.kind === 'step' ? 'claude' : 'formatResponse', input.request, segments);
        request.customId = customId;
        batched.set(customId, { request, answer: batchedAnswer(state, request) });
      }
      const target = collectorTarget(input.taskQueue, input.request.model, batchSettings);
      await submissions.send(ctx.client, target, { entry: planned.entry, turn, ...(input.parent ? { parent: input.parent } : {}) }, { tellParent: input.tellParent === true });
      return { customId, collector: target.workflowId };
    },
  } satisfies MessageBatchSubmitActivities;
  const messageBatchActivities = {
    async createMessageBatch(meta: { requests: number }, ...entries: BatchRequestEntry[]): Promise<CreatedBatch> {
      if (entries.length !== meta.requests) throw scriptError(`createMessageBatch: ${entries.length} requests arrived, ${meta.requests} were sent`);
      const hold = opts.beforeCreateMessageBatch?.(entries);
      if (hold) await waitBeating(hold);
      const id = `msgbatch_scripted_${messageBatches.length + 1}`;
      messageBatches.push({ id, customIds: entries.map((e) => e.batchRequest), entries, retrieves: 0, cancelled: false, deliveries: 0 });
      return { id, adopted: false, duplicateSuspects: [] };
    },

    async retrieveMessageBatch(batchId: string): Promise<{ ended: boolean }> {
      const batch = messageBatchOf(batchId);
      const polls = ++batch.retrieves;
      return { ended: batch.cancelled || (opts.messageBatchEnded ? opts.messageBatchEnded(batch) : polls >= pollsUntilEnded) };
    },

    async cancelMessageBatch(batchId: string): Promise<void> {
      messageBatchOf(batchId).cancelled = true;
    },

    async deliverMessageBatchResults(input: DeliveryInput): Promise<DeliveryReport> {
      const ctx = Context.current();
      const batch = messageBatchOf(input.batchId);
      batch.deliveries++;
      const report: DeliveryReport = { succeeded: 0, errored: 0, expired: 0, canceled: 0, discarded: 0, discardedCostUsd: 0, foreign: 0, answered: [] };
      if (input.duplicateOf) return report; // the script never suspects a duplicate
      const withdrawn = new Set(input.withdrawn);
      for (const customId of batch.customIds) {
        const turn = input.turns[customId];
        const submitted = batched.get(customId);
        if (!turn || !submitted) throw scriptError(`Message Batch ${batch.id} holds an unknown request ${customId}`);
        if (!('fail' in submitted.answer) && submitted.answer.hold) await waitBeating(submitted.answer.hold);
        const outcome = outcomeOf(customId, batch.id, submitted);
        const cost = 'output' in outcome ? (outcome.output.costUsd ?? 0) : 0;
        report['output' in outcome ? 'succeeded' : 'errored']++;
        if (withdrawn.has(customId)) {
          report.discarded++;
          report.discardedCostUsd += cost;
          continue;
        }
        report.answered.push(customId);
        try {
          await ctx.client.workflow.getHandle(turn.workflowId, turn.runId).signal(messageBatchResultSignal, outcome);
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          report.discarded++;
          report.discardedCostUsd += cost;
        }
      }
      return report;
    },

    /** Tells each turn of a request set that it failed (a Message Batch the API refused, or lost). */
    async answerWithFailure({ turns, failure }: { turns: Record<string, TurnRef>; failure: BatchedCallFailure }): Promise<void> {
      await answerAllWith(Context.current().client, turns, failure);
    },
  } satisfies MessageBatchActivities;

  const { worker: turnWorker, connection } = await testWorker({
    taskQueue,
    // Claude calls too: a worker whose defaults say so runs them on the turn queue (src/core/task-queues.ts).
    activities: { ...turnActivities, ...messageBatchSubmit, ...claudeActivities },
    maxHeartbeatThrottleInterval: BEAT_MS,
    dataConverter,
  });
  const claudeWorker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: claudeTaskQueue(taskQueue),
    activities: { ...claudeActivities, ...messageBatchActivities },
    maxHeartbeatThrottleInterval: BEAT_MS,
    dataConverter,
  });
  const running = Promise.all([turnWorker.run(), claudeWorker.run()]);
  const client = await testClient(dataConverter);

  let started = 0;
  const start = async (
    input: ChatTurnInput,
    script: TurnScript,
    workflowId?: string,
  ): Promise<StartedTurn> => {
    const id = workflowId ?? `${taskQueue}-turn-${++started}`;
    const records = expectTurn(id, script);
    const handle = await client.workflow.start('chatTurn', { taskQueue, workflowId: id, args: [input] });
    return Object.assign(records, { handle, result: () => handle.result() as Promise<ChatTurnResult> });
  };

  return {
    client,
    taskQueue,
    start,
    async run(input, script) {
      const { handle: _handle, result, ...records } = await start(input, script);
      return { ...records, result: await result() };
    },
    expect: expectTurn,
    requests,
    toolCalls,
    messageBatches,
    collectorId: (model) => collectorWorkflowId(taskQueue, model),
    async close() {
      for (const w of [turnWorker, claudeWorker]) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await connection.close();
      await client.connection.close();
    },
  };
}
