/**
 * The Claude activities: thin wrappers that bind the worker's client and config to the Claude edge
 * (src/claude) and connect it to the activity context (heartbeats, cancellation). The conversation
 * and the tools arrive as transcript segments, each its own argument (stored once by External
 * Storage, see src/core/transcript-segment.ts).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { ClaudeFailureType } from '../src/core/failure-types';
import { callClaude, type CallClaudeOptions } from '../src/claude/call-claude';
import { CallLimiter } from '../src/claude/call-limiter';
import { claudeErrorPolicy, type ClaudeConfig } from '../src/claude/config';
import { makePriceTable } from '../src/claude/pricing';
import type { ClaudeCallInput, ClaudeCallOutput, FormatResponseInput, FormatResponseOutput } from '../src/core/contracts';
import { joinSegments, type TranscriptSegment } from '../src/core/transcript-segment';
import type { ClaudeMetrics } from '../src/claude/claude-metrics';
import { formatResponse as runFormatter } from '../src/claude/response-formatter';
import type { StreamRecorder } from '../src/claude/stream-recorder';
import { buildResponse } from '../src/core/response';
import { reasoningText, stepText } from '../src/core/stream-record';
import { stampingAttempt, type GiveUp } from './attempt';
import { heartbeatingWhile } from './heartbeat';
import { keepingRecord, streamRecorder } from './stream-publishing';

export interface ClaudeActivityDeps {
  /** From `createClaudeClient()`: `maxRetries: 0`, so Temporal alone retries. */
  client: Anthropic;
  config: ClaudeConfig;
  /** Calls and tokens by model (worker metrics). */
  metrics?: ClaudeMetrics;
}

/**
 * Runs a call, once the worker's cap lets it, while heartbeating (waiting included); its failure
 * says which attempt failed (./attempt.ts). A 429
 * without `retry-after` (a spend cap does not clear in minutes) becomes final after
 * `maxSpendCapAttempts`, saying why. A streamed call heartbeats its stream record, and a call that
 * ends without a result leaves the record in its failure (./stream-publishing.ts).
 */
async function claudeCall<T>(limiter: CallLimiter, maxSpendCapAttempts: number, recorder: StreamRecorder | undefined, fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const details = recorder ? () => recorder.record : undefined;
  const limited = (): Promise<T> => limiter.run(ctx.cancellationSignal, fn);
  return stampingAttempt(ctx, () => keepingRecord(recorder, () => heartbeatingWhile(ctx, limited, details)), spendCapReached(maxSpendCapAttempts));
}

/** Gives up on a 429 without `retry-after` at attempt `maxSpendCapAttempts`. */
function spendCapReached(maxSpendCapAttempts: number): GiveUp {
  return (failure, attempt) =>
    failure.type === ClaudeFailureType.RateLimitedNoRetryAfter && attempt >= maxSpendCapAttempts
      ? `429 without retry-after ${attempt} times, likely a spend limit`
      : undefined;
}

/** Builds the `claude` and `formatResponse` activities. */
export function makeClaudeActivities(deps: ClaudeActivityDeps) {
  const prices = makePriceTable(deps.config.pricing);
  const errorPolicy = claudeErrorPolicy(deps.config);
  // One set of these activities serves both queues of a worker (src/worker/queue-registrations.ts), so one cap.
  const limiter = new CallLimiter(deps.config.maxConcurrentCalls);

  const options = (recorder: StreamRecorder | undefined): CallClaudeOptions => {
    const ctx = Context.current();
    return {
      signal: ctx.cancellationSignal,
      // Stream events are progress too: a long streamed reply keeps heartbeating. A recorded call
      // publishes its deltas itself, and the periodic beat keeps it alive between them.
      ...(recorder ? { recorder } : { onProgress: () => ctx.heartbeat() }),
      stream: deps.config.stream,
      cache: deps.config.promptCaching,
      errorPolicy,
      prices,
    };
  };

  return {
    /** One Claude call of the tool loop. */
    async claude(input: ClaudeCallInput, ...segments: TranscriptSegment[]): Promise<ClaudeCallOutput> {
      const { step, stream, askedAgain: _askedAgain, ...request } = input;
      const recorder = stream && streamRecorder('step', stream);
      const out = await claudeCall(limiter, deps.config.maxSpendCapAttempts, recorder, () => callClaude(deps.client, { ...request, ...joinSegments(segments) }, options(recorder)));
      if (recorder) out.stream = recorder.finish({ t: stepText(out.content), ...(stream.reasoning ? { r: reasoningText(out.content) } : {}) });
      deps.metrics?.record('claude', out.model, out.usage, out.stopReason ?? 'none');
      Context.current().log.debug('claude call', {
        step,
        model: out.model,
        stopReason: out.stopReason,
        requestId: out.requestId,
        inputTokens: out.usage.inputTokens,
        outputTokens: out.usage.outputTokens,
        cacheReadInputTokens: out.usage.cacheReadInputTokens,
        cacheCreationInputTokens: out.usage.cacheCreationInputTokens,
        ...(out.usage.cacheCreation1hInputTokens ? { cacheCreation1hInputTokens: out.usage.cacheCreation1hInputTokens } : {}),
      });
      return out;
    },

    /** The answer's call: the forced `response_formatter` (with repair and fallbacks), or the turn's typed `output`. */
    async formatResponse(input: FormatResponseInput, ...segments: TranscriptSegment[]): Promise<FormatResponseOutput> {
      const { stream, ...request } = input;
      const recorder = stream && streamRecorder(input.output ? 'output' : 'formatter', stream);
      const out = await claudeCall(limiter, deps.config.maxSpendCapAttempts, recorder, () =>
        runFormatter(deps.client, { ...request, messages: joinSegments(segments).messages }, options(recorder)),
      );
      if (recorder) out.stream = recorder.finish({ a: buildResponse(out.output).conversation });
      Context.current().log.debug('formatter', { mode: out.mode, calls: out.calls, notes: out.notes });
      deps.metrics?.record('formatter', input.model, out.usage, out.mode);
      return out;
    },
  };
}

/** The Claude activities' type: what the workflow schedules and the worker registers. */
export type ClaudeActivities = ReturnType<typeof makeClaudeActivities>;
