/**
 * The checks the Messages API (version 2026-10-21, what the SDK sends) makes on a request's controls:
 * the sampling fields it no longer takes, `tool_choice`, `stop_sequences` and `metadata`. Each
 * returns the 400 message naming the field, or undefined. `output_config` is checked in
 * validate-output-config.ts, `cache_control` in validate-cache-control.ts.
 */
import { isRecord } from '../core/is-record';
export const API_VERSION = '2026-10-21';

/** The API's limit on `metadata.user_id`. */
export const MAX_USER_ID_LENGTH = 256;

/** Sampling fields the API refuses whatever their value (null too). */
export const LEGACY_SAMPLING = ['temperature', 'top_p', 'top_k'] as const;

const TOOL_CHOICES = ['auto', 'any', 'tool', 'none'];
/** The fields each `tool_choice` type takes besides `type`. */
const TOOL_CHOICE_FIELDS: Record<string, readonly string[]> = {
  auto: ['disable_parallel_tool_use'],
  any: ['disable_parallel_tool_use'],
  tool: ['name', 'disable_parallel_tool_use'],
  none: [],
};

export function legacySamplingProblem(body: Record<string, unknown>): string | undefined {
  const field = LEGACY_SAMPLING.find((f) => f in body);
  return field && `${field}: this field is not supported in API version ${API_VERSION}`;
}

/**
 * `tool_choice`: `auto`, `any`, `tool` (naming a defined tool) or `none`; `disable_parallel_tool_use`
 * (a boolean) on all but `none`. `any` and `tool` force a tool call: they need tools, and the API
 * refuses them while thinking is on (`enabled` or `adaptive`).
 */
export function toolChoiceProblem(body: Record<string, unknown>, names: ReadonlySet<string>, toolCount: number): string | undefined {
  const choice = body.tool_choice;
  if (choice === undefined || choice === null) return undefined;
  if (!isRecord(choice)) return 'tool_choice: Input should be a valid dictionary';
  const type = choice.type;
  if (typeof type !== 'string' || !TOOL_CHOICES.includes(type)) {
    return `tool_choice: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: ${TOOL_CHOICES.map((t) => `'${t}'`).join(', ')}`;
  }
  const extra = Object.keys(choice).find((k) => k !== 'type' && !TOOL_CHOICE_FIELDS[type]!.includes(k));
  if (extra) return `tool_choice.${type}.${extra}: Extra inputs are not permitted`;
  if ('disable_parallel_tool_use' in choice && typeof choice.disable_parallel_tool_use !== 'boolean') {
    return `tool_choice.${type}.disable_parallel_tool_use: Input should be a valid boolean`;
  }
  if (type !== 'any' && type !== 'tool') return undefined;
  if (toolCount === 0) return `tool_choice: tool_choice of type '${type}' forces a tool call, which requires \`tools\` to be defined`;
  if (type === 'tool' && !names.has(typeof choice.name === 'string' ? choice.name : '')) {
    return `tool_choice.name: Tool '${String(choice.name)}' not found in the provided tools`;
  }
  const thinking = (body.thinking as { type?: unknown } | null | undefined)?.type;
  if (thinking === 'enabled' || thinking === 'adaptive') return 'Thinking may not be enabled when tool_choice forces tool use.';
  return undefined;
}

/** `stop_sequences`: a list of strings, each with something besides whitespace. */
export function stopSequencesProblem(body: Record<string, unknown>): string | undefined {
  const sequences = body.stop_sequences;
  if (sequences === undefined || sequences === null) return undefined;
  if (!Array.isArray(sequences)) return 'stop_sequences: Input should be a valid list';
  for (const [i, s] of sequences.entries()) {
    if (typeof s !== 'string') return `stop_sequences.${i}: Input should be a valid string`;
    if (!s.trim()) return `stop_sequences.${i}: each stop sequence must contain non-whitespace characters`;
  }
  return undefined;
}

/** `metadata`: only `user_id`, a string of at most 256 characters, or null. */
export function metadataProblem(body: Record<string, unknown>): string | undefined {
  if (!('metadata' in body)) return undefined;
  const metadata = body.metadata;
  if (!isRecord(metadata)) return 'metadata: Input should be a valid dictionary';
  const extra = Object.keys(metadata).find((k) => k !== 'user_id');
  if (extra) return `metadata.${extra}: Extra inputs are not permitted`;
  const userId = metadata.user_id;
  if (userId === undefined || userId === null) return undefined;
  if (typeof userId !== 'string') return 'metadata.user_id: Input should be a valid string';
  if (userId.length > MAX_USER_ID_LENGTH) return `metadata.user_id: String should have at most ${MAX_USER_ID_LENGTH} characters`;
  return undefined;
}
