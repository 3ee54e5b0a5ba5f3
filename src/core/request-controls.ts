/**
 * What a turn's request controls do to its Claude requests. Sandbox-safe: the workflow decides per
 * call, the worker builds the request (src/claude/call-claude.ts).
 *
 * - `effort` → `output_config.effort` on every call of the turn.
 * - `stopSequences` → `stop_sequences` on the loop's calls (the answer's call must finish its JSON).
 * - `toolChoice` → `tool_choice` on the loop's first call, or on every one (`on: "every"`).
 * - `cache` → the `ttl` of the prompt-cache breakpoints.
 * - `userId` → `metadata.user_id` on every call.
 */
import type { ToolChoice } from '@anthropic-ai/sdk/resources/messages';

export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type Effort = (typeof EFFORTS)[number];

export const CACHE_TTLS = ['5m', '1h'] as const;
export type CacheTtl = (typeof CACHE_TTLS)[number];

export const MAX_STOP_SEQUENCES = 16;
export const MAX_USER_ID_LENGTH = 256;

/** Sampling fields the Messages API (version 2026-10-21) refuses on every model, whatever the value. */
export const LEGACY_SAMPLING_FIELDS = ['temperature', 'top_p', 'top_k', 'topP', 'topK'] as const;

export const LEGACY_SAMPLING_MESSAGE =
  'the Messages API (version 2026-10-21) no longer takes temperature, top_p or top_k on any model: remove it (effort sets how much the model puts into an answer)';

/** The prompt cache's lifetimes: the prefix's (tools, system) and the conversation's breakpoint. */
export interface CacheControls {
  ttl: CacheTtl;
  conversationTtl?: CacheTtl;
}

/** A turn's `toolChoice` as given: a word or a tool name, or the object form. */
export type ToolChoiceInput =
  | string
  | { type: 'auto' | 'any' | 'none' | 'tool'; name?: string; on?: 'first' | 'every'; disableParallelToolUse?: boolean };

/** A `toolChoice` in one form: the choice, the tool it names (as the caller wrote it), and when it applies. */
export interface LoopToolChoice {
  type: 'auto' | 'any' | 'none' | 'tool';
  /** With `type: "tool"`: the tool as the caller named it (`server__tool` or Claude's name). */
  name?: string;
  on: 'first' | 'every';
  disableParallelToolUse?: boolean;
}

export function loopToolChoiceOf(input: ToolChoiceInput): LoopToolChoice {
  if (typeof input === 'string') {
    return input === 'auto' || input === 'any' || input === 'none' ? { type: input, on: 'first' } : { type: 'tool', name: input, on: 'first' };
  }
  return {
    type: input.type,
    ...(input.name !== undefined ? { name: input.name } : {}),
    on: input.on ?? 'first',
    ...(input.disableParallelToolUse !== undefined ? { disableParallelToolUse: input.disableParallelToolUse } : {}),
  };
}

/** A choice that makes Claude call a tool: the API refuses it with extended thinking on. */
export function forcesToolUse(choice: LoopToolChoice): boolean {
  return choice.type === 'any' || choice.type === 'tool';
}

/**
 * The `tool_choice` of the loop's call at `step` (1-based), the tool named by its Claude name
 * (`claudeName`, resolved when the turn started); undefined: the API's default.
 */
export function toolChoiceForStep(choice: LoopToolChoice | undefined, step: number, claudeName?: string): ToolChoice | undefined {
  if (!choice || (choice.on === 'first' && step > 1)) return undefined;
  const parallel = choice.disableParallelToolUse !== undefined ? { disable_parallel_tool_use: choice.disableParallelToolUse } : {};
  switch (choice.type) {
    case 'tool':
      return { type: 'tool', name: claudeName ?? choice.name ?? '', ...parallel };
    case 'none':
      return { type: 'none' };
    default:
      return { type: choice.type, ...parallel };
  }
}
