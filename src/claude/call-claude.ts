/**
 * One Claude Messages call, as the `claude` activity makes it: the request built from the
 * activity input (with prompt-caching breakpoints), streamed or not, cancellable, and every error
 * mapped to a Temporal failure.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type {
  CacheControlEphemeral,
  ContentBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  TextBlockParam,
  ToolUnion,
} from '@anthropic-ai/sdk/resources/messages';
import type { ClaudeCallOutput, ClaudeRequest, ContentBlock } from '../core/contracts';
import type { CacheTtl } from '../core/request-controls';
import { fromApiUsage } from '../core/usage';
import { toClaudeFailure, type ClaudeErrorPolicy } from './errors';
import type { PriceTable } from './pricing';
import type { StreamRecorder } from './stream-recorder';

/** Options of {@link callClaude}; everything here is worker-side, never part of the activity input. */
export interface CallClaudeOptions {
  /** Aborts the HTTP request (the activity's cancellation signal). */
  signal?: AbortSignal;
  /** Called on stream events (throttled), for activity heartbeats. */
  onProgress?: () => void;
  /** Use the streaming API; progress then follows the stream's events. @default false */
  stream?: boolean;
  /** Prompt-caching breakpoints on the last tool and the system prompt. @default true */
  cache?: boolean;
  /** Minimum time between two progress calls for stream events. @default 500 */
  progressThrottleMs?: number;
  /** Retry delays for rate limits. */
  errorPolicy?: Partial<ClaudeErrorPolicy>;
  /** When given, the output carries `costUsd`. */
  prices?: PriceTable;
  /** Records the call's deltas for subscribers; the call then streams whatever `stream` says. */
  recorder?: StreamRecorder;
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/** A breakpoint's `cache_control`: the API's default lifetime (5 min) unless `ttl` says 1 h. */
function breakpoint(ttl: CacheTtl | undefined): CacheControlEphemeral {
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : EPHEMERAL;
}

/** Block types of a user message that may carry `cache_control`. */
const CACHEABLE_USER_BLOCKS = new Set(['text', 'tool_result', 'image', 'document', 'search_result']);

/**
 * The conversation with a cache breakpoint on the last block of its last message, when that is a
 * user message (the question, or the tool results of the previous step): the API caches the whole
 * prefix, and the next step of the turn, which repeats it, reads it back instead of paying for it
 * again. Only that message is copied.
 */
function withConversationBreakpoint(messages: MessageParam[], ttl: CacheTtl | undefined): MessageParam[] {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') return messages;
  const content: ContentBlockParam[] =
    typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
  const block = content[content.length - 1];
  if (!block || !CACHEABLE_USER_BLOCKS.has(block.type)) return messages;
  if (block.type === 'text' && !block.text) return messages; // the API refuses cache_control on empty text
  content[content.length - 1] = { ...block, cache_control: breakpoint(ttl) } as ContentBlockParam;
  return [...messages.slice(0, -1), { ...last, content }];
}

/**
 * The Messages API request for an activity input. `tool_choice` and `thinking` are left out when
 * undefined, `tools` when empty. With `cache` (the default) the last tool, the system prompt (as a
 * text block) and the last user message's last block carry `cache_control` (3 of the API's 4
 * breakpoints): the first two with the input's `cache.ttl`, the last with its `conversationTtl`
 * (5 min unless it says 1 h), so 1 h breakpoints always come first. The request controls go where
 * the API takes them: `output_config` (effort, format), `stop_sequences`, `metadata.user_id`. The
 * input is never mutated.
 */
export function buildMessageParams(
  input: ClaudeRequest,
  { cache = true }: { cache?: boolean } = {},
): MessageCreateParamsNonStreaming {
  const prefixTtl = input.cache?.ttl;
  const params: MessageCreateParamsNonStreaming = {
    model: input.model,
    max_tokens: input.maxTokens,
    messages: cache ? withConversationBreakpoint(input.messages, input.cache?.conversationTtl) : input.messages,
  };
  if (input.system !== undefined && input.system !== '') {
    params.system = cache
      ? [{ type: 'text', text: input.system, cache_control: breakpoint(prefixTtl) } satisfies TextBlockParam]
      : input.system;
  }
  if (input.tools.length > 0) {
    const tools: ToolUnion[] = [...input.tools];
    const last = input.tools[input.tools.length - 1];
    // Tools come first in the cached prefix, so one breakpoint on the last tool covers them all.
    if (cache && last) tools[tools.length - 1] = { ...last, cache_control: breakpoint(prefixTtl) };
    params.tools = tools;
  }
  if (input.toolChoice !== undefined) params.tool_choice = input.toolChoice;
  if (input.thinking !== undefined) params.thinking = input.thinking;
  if (input.container !== undefined) params.container = input.container;
  if (input.stopSequences?.length) params.stop_sequences = input.stopSequences;
  if (input.effort !== undefined || input.outputFormat !== undefined) {
    params.output_config = {
      ...(input.effort !== undefined ? { effort: input.effort } : {}),
      ...(input.outputFormat !== undefined ? { format: input.outputFormat } : {}),
    };
  }
  if (input.userId !== undefined) params.metadata = { user_id: input.userId };
  return params;
}

/**
 * Makes one Claude call. Returns the assistant content unchanged (it goes back to the API
 * byte-for-byte), the stop reason, usage and request id. Every error is thrown as the
 * `ApplicationFailure` from {@link toClaudeFailure}, except cancellation: when `signal` aborted
 * the call, its reason is thrown as is (Temporal's `CancelledFailure` in an activity).
 */
export async function callClaude(
  client: Anthropic,
  input: ClaudeRequest,
  opts: CallClaudeOptions = {},
): Promise<ClaudeCallOutput> {
  const params = buildMessageParams(input, { cache: opts.cache ?? true });
  const progress = progressReporter(opts.onProgress, opts.progressThrottleMs ?? 500);
  const requestOptions = opts.signal ? { signal: opts.signal } : {};
  try {
    let message: Message;
    let requestId: string | null | undefined;
    const recorder = opts.recorder;
    if (opts.stream || recorder) {
      recorder?.beginCall('Claude is asked again (the answer is repaired or written another way)');
      const stream = client.messages.stream(params, requestOptions);
      stream.on('streamEvent', (event) => {
        recorder?.onEvent(event);
        progress.throttled();
      });
      message = await stream.finalMessage();
      requestId = stream.request_id;
    } else {
      const created = await client.messages.create(params, requestOptions);
      message = created;
      requestId = created._request_id;
    }
    const usage = fromApiUsage(message.usage, message.content);
    const output: ClaudeCallOutput = {
      // A plain JSON copy: the stream accumulator leaves non-enumerable helpers on blocks, and
      // both modes must hand the workflow the same value.
      content: JSON.parse(JSON.stringify(message.content)) as ContentBlock[],
      stopReason: message.stop_reason,
      usage,
      model: message.model,
    };
    if (requestId) output.requestId = requestId;
    if (message.stop_sequence) output.stopSequence = message.stop_sequence;
    if (message.container?.id) output.container = message.container.id;
    if (opts.prices) output.costUsd = opts.prices.costOf(usage, message.model || input.model).usd;
    return output;
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? err;
    throw toClaudeFailure(err, opts.errorPolicy, { url: `${client.baseURL.replace(/\/+$/, '')}/v1/messages` });
  }
}

/** A progress callback that never throws into the SDK, called at most once per `throttleMs`. */
function progressReporter(onProgress: (() => void) | undefined, throttleMs: number): { throttled: () => void } {
  let last = 0;
  return {
    throttled: () => {
      if (!onProgress || Date.now() - last < throttleMs) return;
      last = Date.now();
      try {
        onProgress();
      } catch {
        // A failed heartbeat must not fail the call; Temporal notices missing heartbeats itself.
      }
    },
  };
}
