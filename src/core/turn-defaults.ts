/**
 * The defaults of a chat turn and the defaults-applied view of its input, without zod.
 *
 * The workflow bundle imports this, and Temporal's sandbox evaluates every module of the bundle
 * again for each workflow run, so the turn's schema (zod) stays out of it: the client and the
 * turn's start (a local activity) check the input, and the workflow only applies these defaults.
 */
import type { ChatTurnInput, ResolvedTurnInput } from '../schemas/turn-input';

export const DEFAULT_MODEL = 'claude-sonnet-4-6';
/** Claude calls of the tool loop (the formatter not counted); see docs/tool-loop.md. */
export const DEFAULT_MAX_STEPS = 5;
export const DEFAULT_MAX_TOOLS_PER_REQUEST = 15;
export const DEFAULT_MAX_TOKENS_PER_CALL = 4096;

/** The one place defaults are applied (the zod schema declares none, so the two cannot drift). */
export function applyTurnDefaults(input: ChatTurnInput): ResolvedTurnInput {
  return {
    ...input,
    question: input.question.trim(),
    maxSteps: input.maxSteps ?? DEFAULT_MAX_STEPS,
    maxTokensPerCall: input.maxTokensPerCall ?? DEFAULT_MAX_TOKENS_PER_CALL,
    format: input.format ?? true,
    loopPolicy: input.loopPolicy ?? 'native',
    maxToolsPerRequest: input.maxToolsPerRequest ?? DEFAULT_MAX_TOOLS_PER_REQUEST,
  } as ResolvedTurnInput;
}
