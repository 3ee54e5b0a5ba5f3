/**
 * The defaults of a chat turn and the defaults-applied view of its input, without zod.
 *
 * Why a separate module: the workflow bundle imports this, and Temporal's sandbox evaluates every
 * module of the bundle again for each workflow run. zod alone cost ~20 ms of worker CPU and ~300 MB
 * of peak RSS per 300 concurrent turns (bench/batch-throughput), so the schema (turn-input.ts) is
 * checked by the client and by a local activity, and the workflow only applies these defaults.
 */
import type { ChatTurnInput, ChatTurnParams } from './turn-input';

export const DEFAULT_MODEL = 'claude-sonnet-4-6';
/** design note 01's MAX_THINKING_STEPS. */
export const DEFAULT_MAX_STEPS = 5;
export const DEFAULT_MAX_TOOLS_PER_REQUEST = 15;
export const DEFAULT_MAX_TOKENS_PER_CALL = 4096;

/** The one place defaults are applied (the zod schema declares none, so the two cannot drift). */
export function applyTurnDefaults(input: ChatTurnInput): ChatTurnParams {
  return {
    ...input,
    question: input.question.trim(),
    maxSteps: input.maxSteps ?? DEFAULT_MAX_STEPS,
    maxTokensPerCall: input.maxTokensPerCall ?? DEFAULT_MAX_TOKENS_PER_CALL,
    format: input.format ?? true,
    loopPolicy: input.loopPolicy ?? 'native',
    maxToolsPerRequest: input.maxToolsPerRequest ?? DEFAULT_MAX_TOOLS_PER_REQUEST,
  } as ChatTurnParams;
}
