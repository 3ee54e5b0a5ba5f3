/**
 * One Claude call of the loop, with the two cases where the same step is asked again: a reply cut
 * at max_tokens inside a tool_use (once, with twice the tokens, up to a ceiling), and a prompt that
 * does not fit the context window (again after each stage of compacting the prior history). When
 * nothing is left to compact, the step answers {@link CONTEXT_EXHAUSTED} (a prompt the API
 * refused as too long) or the reply whose stop reason says so; the turn then stops with
 * `context_window`.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, log } from '@temporalio/workflow';
import type { ClaudeCallOutput } from '../src/core/contracts';
import { CLAUDE_CALL_FAILED, ClaudeFailureType } from '../src/core/failure-types';
import { isCutInsideToolUse } from '../src/core/stop-rules';
import { failureMessage } from '../src/core/failure-message';
import type { Turn } from './turn-state';
import type { AskedAgain } from '../src/core/activity-types';

/** The largest max_tokens a raise after a cut tool_use asks for. */
const MAX_TOKENS_CEILING = 64_000;

/** The API refused the prompt as too long and nothing is left to compact. */
export const CONTEXT_EXHAUSTED = 'context-exhausted';

/**
 * Asks Claude for the turn's current step. Every answered call counts in the turn's usage, a reply
 * asked again included. A failure ends the turn: non-retryable, with the step and the cause.
 */
export async function askClaude(turn: Turn): Promise<ClaudeCallOutput | typeof CONTEXT_EXHAUSTED> {
  const { step, transcript } = turn;
  const compaction = turn.input.compaction ?? {};
  let maxTokens = turn.request.maxTokens;
  let raisedTokens = false;
  /** Why the call is asked again, recorded in its input (src/core/activity-types.ts). */
  let askedAgain: AskedAgain | undefined;
  for (;;) {
    let reply: ClaudeCallOutput;
    try {
      const request = { ...turn.request, maxTokens, step, ...turn.toolChoiceFor(step), ...(askedAgain ? { askedAgain } : {}), ...(turn.container ? { container: turn.container } : {}) };
      const segments = transcript.segments({ withTools: true });
      reply = await turn.claudeCalls.step(request, segments, `Claude · step ${step}`);
    } catch (err) {
      if (isCancellation(err)) throw err; // the turn was cancelled: it ends cancelled, not failed
      if (failureType(err) !== ClaudeFailureType.PromptTooLong) throw turnFailure(err, `Claude call failed at step ${step}`);
      if (transcript.compact(compaction)) {
        askedAgain = 'prompt-too-long';
        continue;
      }
      log.warn('the prompt does not fit the context window and nothing is left to compact', { step, error: failureMessage(err) });
      return CONTEXT_EXHAUSTED;
    }
    turn.addUsage(reply);
    if (reply.container) turn.container = reply.container;
    if (reply.stopReason === 'model_context_window_exceeded' && transcript.compact(compaction)) {
      askedAgain = 'context-window-full';
      continue;
    }
    if (isCutInsideToolUse(reply) && !raisedTokens && maxTokens < MAX_TOKENS_CEILING) {
      raisedTokens = true;
      askedAgain = 'cut-inside-tool-use';
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
    type: failureType(err) ?? CLAUDE_CALL_FAILED,
    message: `${what}: ${failureMessage(err)}`,
    nonRetryable: true,
    cause: err instanceof Error ? err : undefined,
  });
}
