/**
 * One Claude call of the loop, with the two cases where the same step is asked again: a reply cut
 * at max_tokens inside a tool_use (once, with twice the tokens, up to a ceiling), and a prompt that
 * does not fit the context window (again after each stage of compacting the prior history, until
 * nothing is left to compact).
 */
import { ActivityFailure, ApplicationFailure, isCancellation, log } from '@temporalio/workflow';
import type { CompactionPolicy } from '../src/core/compaction';
import type { ClaudeCallOutput, ThinkingConfigParam } from '../src/core/contracts';
import { CLAUDE_PROMPT_TOO_LONG } from '../src/core/failure-types';
import { isCutInsideToolUse } from '../src/core/stop-rules';
import { failureMessage } from './failure-message';
import { claudeActivities } from './turn-activities';
import type { TurnTranscript } from './turn-transcript';

/** The largest max_tokens a raise after a cut tool_use asks for. */
const MAX_TOKENS_CEILING = 64_000;

/** What a step asks Claude with, besides the transcript. */
export interface ClaudeStepRequest {
  model: string;
  system?: string;
  maxTokens: number;
  thinking?: ThinkingConfigParam;
}

/**
 * Asks Claude for step `step`; each answered call is passed to `onAnswered` (usage counts even for
 * a reply asked again). A failure ends the turn: non-retryable, with the step and the cause.
 */
export async function askClaude(
  transcript: TurnTranscript,
  request: ClaudeStepRequest,
  step: number,
  compaction: CompactionPolicy,
  onAnswered: (reply: ClaudeCallOutput) => void,
): Promise<ClaudeCallOutput> {
  let maxTokens = request.maxTokens;
  let raisedTokens = false;
  for (;;) {
    let reply: ClaudeCallOutput;
    try {
      reply = await claudeActivities(`Claude · step ${step}`).claude({ ...request, maxTokens, step }, ...transcript.segments({ withTools: true }));
    } catch (err) {
      if (isCancellation(err)) throw err; // the turn was cancelled: it ends cancelled, not failed
      const tooLong = failureType(err) === CLAUDE_PROMPT_TOO_LONG;
      if (tooLong && transcript.compact(compaction)) continue;
      throw turnFailure(err, tooLong ? `the conversation does not fit the model's context window, even with all prior history compacted (step ${step})` : `Claude call failed at step ${step}`);
    }
    onAnswered(reply);
    if (reply.stopReason === 'model_context_window_exceeded' && transcript.compact(compaction)) continue;
    if (isCutInsideToolUse(reply) && !raisedTokens && maxTokens < MAX_TOKENS_CEILING) {
      raisedTokens = true;
      maxTokens = Math.min(maxTokens * 2, MAX_TOKENS_CEILING);
      log.info('reply cut inside a tool_use; asking again with more tokens', { step, maxTokens });
      continue;
    }
    return reply;
  }
}

function failureType(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** The turn's own failure for a failed Claude call: the activity's failure type, never retried. */
function turnFailure(err: unknown, what: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: failureType(err) ?? 'ClaudeCallFailed',
    message: `${what}: ${failureMessage(err)}`,
    nonRetryable: true,
    cause: err instanceof Error ? err : undefined,
  });
}
