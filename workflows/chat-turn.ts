/**
 * One chat turn as a durable workflow: check the input and list tools once (one local activity), then Claude ⇄ MCP tool rounds until Claude
 * stops asking for tools or a budget is reached, then the forced response formatter. Every Claude
 * call and every tool call is its own activity, so each retries on its own and shows in the UI.
 *
 * Deterministic code only: time comes from the workflow clock, and I/O from activities.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  defineQuery,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import { INVALID_TURN_INPUT } from '../src/core/contracts';
import type {
  ChatTurnActivities,
  ClaudeCallOutput,
  ContentBlock,
  ListToolsOutput,
  MessageParam,
  TranscriptRef,
  TranscriptSnapshot,
  ServerUnavailable,
  Tool,
  ToolResultContent,
  TurnLocalActivities,
} from '../src/core/contracts';
import { canonicalJson } from '../src/core/canonical-json';
import { claudeTaskQueue } from '../src/core/task-queue-names';
import { GATHER_SYSTEM_PROMPT, NEED_MORE_DATA, joinSystem, unavailableServersNote } from '../src/core/prompts';
import { buildResponse, textOutput, type Artifact } from '../src/core/response';
import {
  SA_COST_USD,
  SA_INPUT_TOKENS,
  SA_MODEL,
  SA_OUTPUT_TOKENS,
  SA_STATUS,
  SA_STOP_REASON,
  SA_TOOL_CALLS,
} from '../src/core/search-attributes';
import { buildToolCatalog, type ToolCatalog } from '../src/core/tool-naming';
import { TranscriptDigests } from '../src/core/transcript-digest';
import {
  errorText,
  lastAssistantText,
  textOf,
  toolResultsMessage,
  toolUses,
  trimHistory,
  TRANSCRIPT_QUERY,
  type ToolResultEntry,
  type ToolUseBlock,
} from '../src/core/transcript';
import { DEFAULT_MODEL, applyTurnDefaults } from '../src/core/turn-defaults';
import type { ChatTurnInput, ChatTurnParams } from '../src/core/turn-input';
import type { ChatTurnResult, ToolCallRecord, TurnProgress, TurnStopReason } from '../src/core/turn-result';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../src/core/usage';

export const progressQuery = defineQuery<TurnProgress>('progress');
/** The first N messages of the transcript: how Claude activities read the conversation. */
export const transcriptQuery = defineQuery<TranscriptSnapshot, [number]>(TRANSCRIPT_QUERY);

/**
 * Claude activities read the conversation through the transcript query instead of carrying it in
 * their input, so history grows linearly with steps. Histories recorded before this still replay.
 */
const TRANSCRIPT_BY_QUERY = 'transcript-by-query';
/**
 * The input is checked by a local activity (zod stays out of the sandbox, where it would be loaded
 * for every run), and search attributes the starter already set are not upserted again. Histories
 * recorded before this validated inside the workflow and upserted status and model at once.
 */
const INPUT_CHECKED_LOCALLY = 'input-checked-locally';
/**
 * One local activity checks the input and lists the tools, where the turn had a local one and then
 * an activity: one workflow task, one activity task and eight events fewer per turn. It implies both
 * patches above without recording them (each patch costs a marker and a search-attribute upsert).
 * Histories recorded before replay through the older patches.
 */
const PREPARED_LOCALLY = 'turn-prepared-locally';

/**
 * Claude calls: retried by Temporal alone (the SDK runs with maxRetries 0), on their own task queue
 * so workers can cap their rate. The activity heartbeats while it waits, so a dead worker is noticed
 * within the heartbeat timeout rather than after start-to-close.
 */
function claudeOptions(): ActivityOptions {
  return {
    taskQueue: claudeTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
  };
}
/** Each server's listing is bounded by its `listTimeoutMs`, well under this. Also the local prepareTurn's. */
const LIST_TOOLS_OPTIONS: Pick<ActivityOptions, 'startToCloseTimeout' | 'retry'> = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
};
/** Used only if the worker did not send a policy for a server. */
const DEFAULT_TOOL_POLICY = {
  startToCloseTimeoutMs: 40_000,
  heartbeatTimeoutMs: 15_000,
  retry: { maximumAttempts: 3, initialIntervalMs: 1000, backoffCoefficient: 2, maximumIntervalMs: 10_000 },
};
/**
 * Messages added since the previous Claude call are sent along (TranscriptRef.tail) when they are at
 * most this many characters of canonical JSON: the worker that made that call then needs no query. Larger ones
 * (big tool results) are left to the query rather than recorded in history twice.
 */
const TAIL_MAX_CHARS = 16_000;
/** max_tokens retry after a cut tool_use: at most this many tokens per call. */
const MAX_TOKENS_CEILING = 64_000;

function activities(options: ActivityOptions, summary: string): ChatTurnActivities {
  return proxyActivities<ChatTurnActivities>({ ...options, summary });
}

function now(): number {
  return new Date().getTime(); // workflow time: deterministic on replay
}

function failureText(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

function isPromptTooLong(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return (
    cause instanceof ApplicationFailure &&
    (cause.type === 'ClaudePromptTooLong' || /prompt is too long|context window/i.test(cause.message))
  );
}

/** The tool loop's state; one instance per workflow run. */
class Turn {
  readonly messages: MessageParam[];
  /** Index of the question in `messages`; everything before is prior history. */
  historyLength: number;
  model: string;
  step = 0;
  usage: TokenUsage = ZERO_USAGE;
  costUsd = 0;
  readonly toolCalls: ToolCallRecord[] = [];
  readonly toolArtifacts: Artifact[] = [];
  readonly progress: TurnProgress = startingProgress();
  /** Signature → result of every tool call run in this turn (design note 01's repeated-call check). */
  private readonly seen = new Map<string, Promise<ToolResultEntry>>();
  catalog: ToolCatalog = { tools: [], targets: {}, dropped: [] };
  listed: ListToolsOutput = { tools: [], policies: {}, unavailable: [], unknownServers: [] };
  unavailable: ServerUnavailable[] = [];
  private readonly digests = new TranscriptDigests(() => this.catalog.tools, () => this.messages);
  /** Messages in the conversation the previous Claude activity was given; undefined before it. */
  private sentCount: number | undefined;

  /**
   * @param preparedLocally the turn runs under PREPARED_LOCALLY, which implies reading the
   *   transcript by query without asking `patched()` for it.
   */
  constructor(
    readonly input: ChatTurnParams,
    private readonly preparedLocally: boolean,
  ) {
    this.model = input.model ?? DEFAULT_MODEL;
    this.messages = [...(input.history ?? []), { role: 'user', content: input.question }];
    this.historyLength = input.history?.length ?? 0;
  }

  addUsage(usage: TokenUsage, costUsd = 0): void {
    this.usage = addUsage(this.usage, usage);
    this.costUsd += costUsd;
    this.progress.usage = this.usage;
    this.progress.costUsd = this.costUsd;
  }

  setPhase(phase: TurnProgress['phase']): void {
    this.progress.phase = phase;
    this.progress.step = this.step;
    const calls = this.progress.toolCalls;
    const errors = calls.filter((c) => c.status === 'error').length;
    setCurrentDetails(
      `**${phase}** · step ${this.step}/${this.input.maxSteps} · ${calls.length} tool call(s)` +
        (errors ? `, ${errors} failed` : '') +
        ` · ${this.usage.inputTokens} in / ${this.usage.outputTokens} out tokens`,
    );
  }

  /** Runs before PREPARED_LOCALLY: the tools came from their own activity. */
  async listTools(): Promise<void> {
    this.useTools(
      await activities(LIST_TOOLS_OPTIONS, 'list tools').listTools(this.input.servers ? { servers: this.input.servers } : {}),
    );
  }

  /** Takes the worker's tool listing (and its default model, when the input named none). */
  useTools(listed: ListToolsOutput): void {
    this.listed = listed;
    const workerModel = listed.turnDefaults?.model;
    if (this.input.model === undefined && workerModel && workerModel !== this.model) {
      this.model = workerModel;
      upsertSearchAttributes([{ key: SA_MODEL, value: workerModel }]);
    }
    this.catalog = buildToolCatalog(listed.tools, this.input.tools ?? {}, this.input.maxToolsPerRequest);
    this.unavailable = [
      ...listed.unavailable,
      ...listed.unknownServers.map((server) => ({ server, reason: 'not configured on the worker' })),
    ];
    if (this.catalog.dropped.length) log.info('tools not offered to Claude', { dropped: this.catalog.dropped });
  }

  system(): string | undefined {
    const note = this.unavailable.length ? unavailableServersNote(this.unavailable) : undefined;
    const gather = this.input.loopPolicy === 'gather-then-format' ? GATHER_SYSTEM_PROMPT : undefined;
    return joinSystem(gather, this.input.system, note);
  }

  /**
   * One Claude call of the loop. Handles the two cases where the same step is asked again: a reply
   * cut at max_tokens inside a tool_use (once, with more tokens), and a context-window overflow
   * (once, with the oldest history trimmed).
   */
  async callClaude(): Promise<ClaudeCallOutput> {
    let maxTokens = this.input.maxTokensPerCall;
    let raisedTokens = false;
    let trimmed = false;
    for (;;) {
      const summary = `Claude · step ${this.step}`;
      let reply: ClaudeCallOutput;
      try {
        reply = await activities(claudeOptions(), summary).claude({
          model: this.model,
          ...(this.system() !== undefined ? { system: this.system() } : {}),
          ...this.conversation(),
          maxTokens,
          ...(this.input.thinking
            ? { thinking: { type: 'enabled' as const, budget_tokens: this.input.thinking.budgetTokens } }
            : {}),
          step: this.step,
        });
      } catch (err) {
        if (isCancellation(err)) throw err; // the turn was cancelled: it ends cancelled, not failed
        if (isPromptTooLong(err) && !trimmed && this.trim()) {
          trimmed = true;
          continue;
        }
        if (isPromptTooLong(err)) throw this.fail('context_window', err);
        throw this.fail('claude', err);
      }
      this.addUsage(reply.usage, reply.costUsd);
      if (reply.stopReason === 'model_context_window_exceeded' && !trimmed && this.trim()) {
        trimmed = true;
        continue;
      }
      const last = reply.content[reply.content.length - 1];
      if (reply.stopReason === 'max_tokens' && last?.type === 'tool_use' && !raisedTokens && maxTokens < MAX_TOKENS_CEILING) {
        raisedTokens = true;
        maxTokens = Math.min(maxTokens * 2, MAX_TOKENS_CEILING);
        log.info('reply cut inside a tool_use; asking again with more tokens', { step: this.step, maxTokens });
        continue;
      }
      return reply;
    }
  }

  /** The conversation for a Claude activity: by reference (linear history), or inline (old runs). */
  conversation(): { messages: MessageParam[]; tools: Tool[]; transcript?: TranscriptRef } {
    if (!this.preparedLocally && !patched(TRANSCRIPT_BY_QUERY)) return { messages: this.messages, tools: this.catalog.tools };
    const { workflowId, runId } = workflowInfo();
    const count = this.messages.length;
    const transcript: TranscriptRef = { workflowId, runId, count, digest: this.digests.upTo(count) };
    if (this.sentCount !== undefined) {
      // Skip the previous call's reply: that worker holds it already.
      const from = Math.min(this.sentCount + 1, count);
      if (this.digests.chars(from, count) <= TAIL_MAX_CHARS) transcript.tail = this.messages.slice(from);
    }
    this.sentCount = count;
    return { messages: [], tools: [], transcript };
  }

  private trim(): boolean {
    const trimmed = trimHistory(this.messages, this.historyLength);
    if (!trimmed) return false;
    const dropped = this.messages.length - trimmed.length;
    this.messages.splice(0, this.messages.length, ...trimmed);
    this.historyLength -= dropped;
    this.digests.invalidateFrom(0); // rewritten, not appended: no worker's copy matches any more
    this.sentCount = undefined;
    log.warn('context window exceeded; trimmed prior history', { dropped });
    return true;
  }

  private fail(what: 'claude' | 'context_window', err: unknown): ApplicationFailure {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const type = cause instanceof ApplicationFailure && cause.type ? cause.type : 'ClaudeCallFailed';
    const message =
      what === 'context_window'
        ? `the conversation does not fit the model's context window, even with prior history trimmed (step ${this.step}): ${failureText(err)}`
        : `Claude call failed at step ${this.step}: ${failureText(err)}`;
    return ApplicationFailure.create({ type, message, nonRetryable: true, cause: err instanceof Error ? err : undefined });
  }

  /** Runs every tool_use of a reply in parallel; results come back in tool_use order. */
  async runTools(uses: ToolUseBlock[]): Promise<{ results: ToolResultEntry[]; repeated: boolean; overBudget: boolean }> {
    const budget = this.input.maxToolCalls;
    let executed = this.toolCalls.filter((c) => !c.repeated && c.attempts > 0).length;
    let repeated = false;
    let overBudget = false;
    const pending = uses.map((use) => {
      const signature = `${use.name}\u0000${canonicalJson(use.input)}`;
      const earlier = this.seen.get(signature);
      if (earlier) {
        repeated = true;
        return this.answerRepeated(use, earlier);
      }
      if (budget !== undefined && executed >= budget) {
        overBudget = true;
        return this.answerNotRun(use, `not run: this turn's tool-call budget (${budget}) is used up`);
      }
      executed++;
      const result = this.runTool(use);
      this.seen.set(signature, result);
      return result;
    });
    const results = await Promise.all(pending);
    if (budget !== undefined && executed >= budget) overBudget = true;
    return { results, repeated, overBudget };
  }

  private record(use: ToolUseBlock, fields: Partial<ToolCallRecord>): ToolCallRecord {
    const target = this.catalog.targets[use.name];
    const record: ToolCallRecord = {
      id: use.id,
      step: this.step,
      ...(target ? { server: target.server, tool: target.tool } : {}),
      name: use.name,
      input: use.input,
      isError: false,
      durationMs: 0,
      attempts: 0,
      ...fields,
    };
    this.toolCalls.push(record);
    return record;
  }

  private progressEntry(record: ToolCallRecord, status: 'running' | 'ok' | 'error'): void {
    const entry = { id: record.id, name: record.name, step: record.step, isError: record.isError, durationMs: record.durationMs, status };
    const i = this.progress.toolCalls.findIndex((c) => c.id === record.id);
    if (i >= 0) this.progress.toolCalls[i] = entry;
    else this.progress.toolCalls.push(entry);
  }

  private async runTool(use: ToolUseBlock): Promise<ToolResultEntry> {
    const target = this.catalog.targets[use.name];
    if (!target) {
      const available = Object.keys(this.catalog.targets);
      return this.answerNotRun(
        use,
        `Unknown tool "${use.name}". Available tools: ${available.length ? available.join(', ') : 'none'}.`,
      );
    }
    const record = this.record(use, {});
    this.progressEntry(record, 'running');
    const policy = this.listed.policies[target.server] ?? DEFAULT_TOOL_POLICY;
    const started = now();
    let content: ToolResultContent[];
    let isError: boolean;
    try {
      const out = await activities(
        {
          startToCloseTimeout: policy.startToCloseTimeoutMs,
          heartbeatTimeout: policy.heartbeatTimeoutMs,
          retry: {
            maximumAttempts: policy.retry.maximumAttempts,
            initialInterval: policy.retry.initialIntervalMs,
            backoffCoefficient: policy.retry.backoffCoefficient,
            maximumInterval: policy.retry.maximumIntervalMs,
          },
        },
        `${target.server} · ${target.tool}`,
      ).callTool({
        server: target.server,
        tool: target.tool,
        arguments: (use.input ?? {}) as Record<string, unknown>,
        toolUseId: use.id,
      });
      content = out.content;
      isError = out.isError;
      record.attempts = out.attempt ?? 1;
      this.toolArtifacts.push(...out.artifacts);
      if (isError) record.error = textOf(out.content.filter((c) => c.type === 'text') as ContentBlock[]).slice(0, 500);
    } catch (err) {
      if (isCancellation(err)) throw err; // the turn was cancelled: not a tool failure for Claude to see
      // Retries are exhausted or the error cannot succeed on retry: Claude sees the failure as data.
      const text = failureText(err);
      content = errorText(`Tool ${target.server}/${target.tool} failed: ${text}`);
      isError = true;
      record.error = text.slice(0, 500);
      record.attempts = policy.retry.maximumAttempts;
    }
    record.isError = isError;
    record.durationMs = now() - started;
    this.progressEntry(record, isError ? 'error' : 'ok');
    return { toolUseId: use.id, content, isError };
  }

  private async answerRepeated(use: ToolUseBlock, earlier: Promise<ToolResultEntry>): Promise<ToolResultEntry> {
    const first = await earlier;
    const record = this.record(use, { repeated: true, isError: first.isError });
    this.progressEntry(record, first.isError ? 'error' : 'ok');
    return {
      toolUseId: use.id,
      isError: first.isError,
      content: [
        { type: 'text', text: '(Repeated call: this tool was already called with the same arguments in this turn; here is that result again. It was not run again.)' },
        ...first.content,
      ],
    };
  }

  private async answerNotRun(use: ToolUseBlock, text: string): Promise<ToolResultEntry> {
    const record = this.record(use, { isError: true, error: text });
    this.progressEntry(record, 'error');
    return { toolUseId: use.id, content: errorText(text), isError: true };
  }
}

/**
 * The chat-turn workflow. Input is checked here too (the client checks first), so a bad input
 * started by other means fails the run at once, with every bad field named, instead of retrying.
 */
export async function chatTurn(rawInput: ChatTurnInput): Promise<ChatTurnResult> {
  // Queries are answered from the first workflow task on, before the turn's start has finished, so
  // a progress query right after the start is answered (queries leave no trace in history).
  const current: { turn?: Turn } = {};
  setHandler(progressQuery, () => current.turn?.progress ?? startingProgress());
  setHandler(transcriptQuery, (count: number) =>
    current.turn ? { messages: current.turn.messages.slice(0, count), tools: current.turn.catalog.tools } : { messages: [], tools: [] },
  );
  // patched() records a marker: ask for an older patch only when the newer one is absent (old histories).
  const preparedLocally = patched(PREPARED_LOCALLY);
  const checkedLocally = preparedLocally || patched(INPUT_CHECKED_LOCALLY);
  try {
    return await runTurn(rawInput, preparedLocally, checkedLocally, current);
  } catch (err) {
    // The status attribute says how the turn ended, so `McpTurnsStatus = "running"` finds only running
    // turns. Part of the PREPARED_LOCALLY shape: older runs ended without this update.
    if (preparedLocally) upsertSearchAttributes([{ key: SA_STATUS, value: isCancellation(err) ? 'cancelled' : 'failed' }]);
    throw err;
  }
}

async function runTurn(
  rawInput: ChatTurnInput,
  preparedLocally: boolean,
  checkedLocally: boolean,
  current: { turn?: Turn },
): Promise<ChatTurnResult> {
  let listed: ListToolsOutput | undefined;
  if (preparedLocally) {
    listed = await local(LIST_TOOLS_OPTIONS, 'check input, list tools', (acts) => acts.prepareTurn(rawInput));
  } else if (checkedLocally) {
    await local({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } }, 'check input', (acts) => acts.checkTurnInput(rawInput));
  }
  const input = applyTurnDefaults(rawInput);
  const turn = new Turn(input, preparedLocally);
  current.turn = turn;
  const startAttributes = workflowInfo().typedSearchAttributes;
  const initial = [
    { key: SA_STATUS, value: 'running' },
    { key: SA_MODEL, value: turn.model },
  ].filter(({ key }) => !checkedLocally || startAttributes.get(key) === undefined);
  if (initial.length) upsertSearchAttributes(initial);
  if (listed) {
    turn.useTools(listed);
  } else {
    turn.setPhase('listing-tools');
    await turn.listTools();
  }

  let stopReason: TurnStopReason | undefined;
  while (!stopReason) {
    if (turn.step >= input.maxSteps) {
      stopReason = 'max_steps';
      break;
    }
    turn.step++;
    turn.setPhase('thinking');
    const reply = await turn.callClaude();
    const uses = toolUses(reply.content);

    if (reply.stopReason === 'pause_turn') {
      // A server-side tool paused the turn: send the reply back as-is so Claude continues.
      turn.messages.push({ role: 'assistant', content: reply.content });
      continue;
    }
    if (reply.stopReason === 'max_tokens' && reply.content[reply.content.length - 1]?.type === 'tool_use') {
      // Still cut inside a tool_use after the retry: keep what was said, drop the unfinished call.
      const said = reply.content.filter((b) => b.type !== 'tool_use');
      if (said.length) turn.messages.push({ role: 'assistant', content: said });
      stopReason = 'max_tokens';
      break;
    }
    turn.messages.push({ role: 'assistant', content: reply.content });
    if (reply.stopReason === 'refusal') stopReason = 'refusal';
    else if (uses.length === 0) stopReason = reply.stopReason === 'max_tokens' ? 'max_tokens' : 'completed';
    if (stopReason) break;

    turn.setPhase('calling-tools');
    const { results, repeated, overBudget } = await turn.runTools(uses);
    turn.messages.push(toolResultsMessage(results));

    // Budgets stop only here, between whole steps: every tool_use above has its tool_result.
    if (repeated) stopReason = 'repeated_call';
    else if (overBudget) stopReason = 'max_tool_calls';
    else if (input.maxTokens !== undefined && turn.usage.inputTokens + turn.usage.outputTokens >= input.maxTokens) {
      stopReason = 'max_tokens';
    } else if (input.loopPolicy === 'gather-then-format' && !textOf(reply.content).includes(NEED_MORE_DATA)) {
      stopReason = 'completed';
    }
  }

  const result = await finish(turn, stopReason);
  upsertSearchAttributes([
    { key: SA_STATUS, value: 'completed' },
    { key: SA_STOP_REASON, value: result.stopReason },
    { key: SA_TOOL_CALLS, value: result.toolCalls.length },
    { key: SA_INPUT_TOKENS, value: result.usage.inputTokens + result.usage.cacheReadInputTokens + result.usage.cacheCreationInputTokens },
    { key: SA_OUTPUT_TOKENS, value: result.usage.outputTokens },
    { key: SA_COST_USD, value: result.costUsd },
  ]);
  return result;
}

/**
 * Runs one of the turn's local activities. A bad input fails them with a non-retryable
 * `InvalidTurnInput`, which is rethrown as the workflow's own failure (not wrapped in an
 * ActivityFailure) so the run fails at once, naming every bad field.
 */
async function local<R>(
  options: Pick<ActivityOptions, 'startToCloseTimeout' | 'retry'>,
  summary: string,
  call: (acts: TurnLocalActivities) => Promise<R>,
): Promise<R> {
  try {
    return await call(proxyLocalActivities<TurnLocalActivities>({ ...options, summary }));
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === INVALID_TURN_INPUT) {
      throw ApplicationFailure.create({ type: INVALID_TURN_INPUT, message: cause.message, nonRetryable: true, details: cause.details ?? undefined });
    }
    throw err;
  }
}

/** What the progress query answers before the turn has done anything. */
function startingProgress(): TurnProgress {
  return { phase: 'listing-tools', step: 0, toolCalls: [], usage: ZERO_USAGE, costUsd: 0 };
}

function withoutTools<T extends { tools: Tool[] }>(c: T): Omit<T, 'tools'> {
  const { tools: _tools, ...rest } = c;
  return rest;
}

async function finish(turn: Turn, stopReason: TurnStopReason): Promise<ChatTurnResult> {
  const { input } = turn;
  let response;
  let formatMode: ChatTurnResult['formatMode'];
  const lastText = lastAssistantText(turn.messages.slice(turn.historyLength));
  if (input.format && stopReason !== 'refusal') {
    turn.setPhase('formatting');
    const system = joinSystem(input.system, turn.unavailable.length ? unavailableServersNote(turn.unavailable) : undefined);
    const formatted = await activities(claudeOptions(), 'format response').formatResponse({
      model: turn.model,
      ...(system !== undefined ? { system } : {}),
      ...withoutTools(turn.conversation()),
      maxTokens: input.maxTokensPerCall,
      ...(input.thinking ? { thinking: { type: 'enabled' as const, budget_tokens: input.thinking.budgetTokens } } : {}),
    });
    turn.addUsage(formatted.usage, formatted.costUsd);
    formatMode = formatted.mode;
    response = buildResponse(formatted.output, turn.toolArtifacts);
  } else {
    response = buildResponse(textOutput(lastText || `(no answer: the turn stopped with ${stopReason})`), turn.toolArtifacts);
  }
  if (turn.unavailable.length && !turn.catalog.tools.length) {
    response.conversation += `\n\n_Tools unavailable for this answer: ${turn.unavailable.map((u) => `${u.server} (${u.reason})`).join(', ')}._`;
  }
  // Keep the history valid for the next turn: it must not end on an unanswered user message.
  const messages = [...turn.messages];
  if (messages[messages.length - 1]?.role === 'user') {
    messages.push({ role: 'assistant', content: response.conversation || '(no answer)' });
  }
  turn.setPhase('done');
  return {
    response,
    stopReason,
    steps: turn.step,
    toolCalls: turn.toolCalls,
    usage: turn.usage,
    costUsd: turn.costUsd,
    model: turn.model,
    messages,
    ...(formatMode ? { formatMode } : {}),
    unavailableServers: turn.unavailable,
    droppedTools: turn.catalog.dropped,
  };
}
