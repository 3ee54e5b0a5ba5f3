/**
 * A turn's input as the workflow runs it: every default applied, the model included. `resolveTurn`
 * is the only producer of {@link ResolvedTurnInput}; the workflow calls it once, with the worker's
 * defaults the turn's start recorded, so replay never reads live config.
 *
 * The workflow bundle imports this, and Temporal's sandbox evaluates every module of the bundle
 * again for each workflow run, so the turn's schema (zod) stays out of it: the client and the
 * turn's start (a local activity) check the input against src/schemas/turn-input.ts.
 */
import type { ChatTurnInput } from '../schemas/turn-input';
import type { WorkerTurnDefaults } from './contracts';

/** The model of a turn that names none, on a worker whose config names none. */
export const DEFAULT_MODEL = 'claude-sonnet-4-6';
/** Claude calls of the tool loop (the formatter not counted); see docs/tool-loop.md. */
export const DEFAULT_MAX_STEPS = 5;
/** Tools offered per Claude request, unless the turn or the worker's `claude.maxToolsPerRequest` says otherwise. */
export const DEFAULT_MAX_TOOLS_PER_REQUEST = 15;
export const DEFAULT_MAX_TOKENS_PER_CALL = 4096;

/** The fields a resolved input always has. */
type Defaulted = 'model' | 'maxSteps' | 'maxTokensPerCall' | 'format' | 'loopPolicy' | 'maxToolsPerRequest';

/** What the workflow works with: the caller's input with every default applied. */
export type ResolvedTurnInput = Omit<ChatTurnInput, Defaulted> & Required<Pick<ChatTurnInput, Defaulted>>;

/**
 * The input with its defaults: the caller's value, else the worker's, else mcp-turns' own. The
 * schema declares no defaults, so this is the one place they live.
 */
export function resolveTurn(input: ChatTurnInput, worker: WorkerTurnDefaults): ResolvedTurnInput {
  return {
    ...input,
    question: input.question.trim(),
    model: input.model ?? worker.model ?? DEFAULT_MODEL,
    maxSteps: input.maxSteps ?? DEFAULT_MAX_STEPS,
    maxTokensPerCall: input.maxTokensPerCall ?? DEFAULT_MAX_TOKENS_PER_CALL,
    format: input.format ?? true,
    loopPolicy: input.loopPolicy ?? 'native',
    maxToolsPerRequest: input.maxToolsPerRequest ?? worker.maxToolsPerRequest ?? DEFAULT_MAX_TOOLS_PER_REQUEST,
    ...workerControls(input, worker),
  };
}

/** The worker's request controls (its config's `claude:`) for those the turn leaves unset. */
function workerControls(input: ChatTurnInput, worker: WorkerTurnDefaults): Pick<ChatTurnInput, 'effort' | 'stopSequences' | 'toolChoice' | 'cache'> {
  const effort = input.effort ?? worker.effort;
  const stopSequences = input.stopSequences ?? worker.stopSequences;
  const toolChoice = input.toolChoice ?? worker.toolChoice;
  const cache = input.cache ?? worker.cache;
  return {
    ...(effort !== undefined ? { effort } : {}),
    ...(stopSequences !== undefined ? { stopSequences } : {}),
    ...(toolChoice !== undefined ? { toolChoice } : {}),
    ...(cache !== undefined ? { cache } : {}),
  };
}
