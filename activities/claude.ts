/**
 * The Claude activities: thin wrappers that bind the worker's client and config to the logic in
 * src/claude and src/formatter, and connect it to the activity context (heartbeats, cancellation).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ClaudeFailureType } from '../src/claude/errors';
import { callClaude, type CallClaudeOptions } from '../src/claude/call-claude';
import { claudeErrorPolicy, type ClaudeConfig } from '../src/claude/config';
import { makePriceTable } from '../src/claude/pricing';
import type { ClaudeCallInput, ClaudeCallOutput, FormatResponseInput, FormatResponseOutput, TranscriptSnapshot } from '../src/core/contracts';
import { TRANSCRIPT_QUERY } from '../src/core/transcript';
import type { ClaudeMetrics } from '../src/worker/metrics';
import { TranscriptCache } from '../src/claude/transcript-cache';
import { formatResponse as runFormatter } from '../src/formatter/format-response';

export interface ClaudeActivityDeps {
  /** From `createClaudeClient()`: `maxRetries: 0`, so Temporal alone retries. */
  client: Anthropic;
  config: ClaudeConfig;
  /** Calls and tokens by model (worker metrics). */
  metrics?: ClaudeMetrics;
  /** Conversations held between a turn's calls; default a fresh one per set of activities. */
  transcripts?: TranscriptCache;
}

/**
 * The conversation an activity works on: its own input (runs recorded before transcripts went by
 * reference), this worker's copy from the turn's previous call when its digest matches, or the
 * workflow's transcript query.
 */
async function withConversation<T extends ClaudeCallInput | FormatResponseInput>(
  input: T,
  cache: TranscriptCache,
): Promise<{ input: T; snapshot?: TranscriptSnapshot }> {
  if (!input.transcript) return { input };
  const ref = input.transcript;
  let snapshot = cache.lookup(ref);
  if (!snapshot) {
    snapshot = await Context.current()
      .client.workflow.getHandle(ref.workflowId, ref.runId)
      .query<TranscriptSnapshot, [number]>(TRANSCRIPT_QUERY, ref.count);
    if (snapshot.messages.length !== ref.count) {
      throw ApplicationFailure.create({ type: 'TranscriptMismatch', message: `transcript query returned ${snapshot.messages.length} messages, expected ${ref.count}` });
    }
  }
  const withMessages = 'tools' in input ? { ...input, messages: snapshot.messages, tools: snapshot.tools } : { ...input, messages: snapshot.messages };
  return { input: withMessages, snapshot };
}

/** How often a Claude activity heartbeats while it waits (the workflow's heartbeat timeout is 10 s). */
const HEARTBEAT_EVERY_MS = 2000;

/**
 * Heartbeats on a timer while a call is in flight, streamed or not: a worker that dies mid-call is
 * noticed within the heartbeat timeout (not after start-to-close), and cancellation is delivered.
 */
async function whileBeating<T>(fn: () => Promise<T>, maxSpendCapAttempts: number): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await fn();
  } catch (err) {
    throw withAttempt(err, ctx.info.attempt, maxSpendCapAttempts);
  } finally {
    clearInterval(timer);
  }
}

/**
 * Says which attempt failed, and bounds 429s without `retry-after` (a spend cap does not clear in
 * minutes): after `maxSpendCapAttempts` the failure becomes final, with a message that says why.
 */
function withAttempt(err: unknown, attempt: number, maxSpendCapAttempts: number): unknown {
  if (!(err instanceof ApplicationFailure)) return err;
  const capped = err.type === ClaudeFailureType.RateLimitedNoRetryAfter && attempt >= maxSpendCapAttempts;
  if (err.nonRetryable || capped) {
    return ApplicationFailure.create({
      type: err.type ?? undefined,
      message: `${err.message}; attempt ${attempt}${capped ? ` (gave up: 429 without retry-after ${attempt} times, likely a spend limit)` : ''}`,
      nonRetryable: true,
      details: err.details ?? undefined,
    });
  }
  return err;
}

/** Builds the `claude` and `formatResponse` activities (see `ChatTurnActivities`). */
export function makeClaudeActivities(deps: ClaudeActivityDeps) {
  const prices = makePriceTable(deps.config.pricing);
  const transcripts = deps.transcripts ?? new TranscriptCache();
  const errorPolicy = claudeErrorPolicy(deps.config);

  const options = (): CallClaudeOptions => {
    const ctx = Context.current();
    return {
      signal: ctx.cancellationSignal,
      // Heartbeats are what deliver cancellation to a running activity.
      onProgress: () => ctx.heartbeat(),
      stream: deps.config.stream,
      cache: deps.config.promptCaching,
      errorPolicy,
      prices,
    };
  };

  return {
    /** One Claude call of the tool loop. */
    async claude(input: ClaudeCallInput): Promise<ClaudeCallOutput> {
      const out = await whileBeating(async () => {
        const { input: full, snapshot } = await withConversation(input, transcripts);
        const reply = await callClaude(deps.client, full, options());
        if (input.transcript && snapshot) transcripts.remember(input.transcript, snapshot, reply.content);
        return reply;
      }, deps.config.maxSpendCapAttempts);
      deps.metrics?.record('claude', out.model, out.usage, out.stopReason ?? 'none');
      Context.current().log.debug('claude call', {
        step: input.step,
        model: out.model,
        stopReason: out.stopReason,
        requestId: out.requestId,
        inputTokens: out.usage.inputTokens,
        outputTokens: out.usage.outputTokens,
        cacheReadInputTokens: out.usage.cacheReadInputTokens,
        cacheCreationInputTokens: out.usage.cacheCreationInputTokens,
      });
      return out;
    },

    /** The final, forced `response_formatter` call (with repair and fallbacks). */
    async formatResponse(input: FormatResponseInput): Promise<FormatResponseOutput> {
      const out = await whileBeating(async () => {
        const { input: full } = await withConversation(input, transcripts);
        return runFormatter(deps.client, full, options());
      }, deps.config.maxSpendCapAttempts);
      if (input.transcript) transcripts.forget(input.transcript);
      Context.current().log.debug('formatter', { mode: out.mode, calls: out.calls, notes: out.notes });
      deps.metrics?.record('formatter', input.model, out.usage, out.mode);
      return out;
    },
  };
}

export type ClaudeActivities = ReturnType<typeof makeClaudeActivities>;
