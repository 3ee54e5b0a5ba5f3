/**
 * What a Claude model takes, where a turn's input depends on it: the effort levels, structured
 * outputs (`output_config.format`), and whether it thinks only adaptively (a `thinking` budget is
 * then refused, and so is a forced `tool_choice`). From Anthropic's models overview as of 2026-10.
 * A model not known here (a new one, a stub's scenario name) is not checked: the API decides.
 * Sandbox-safe: the client and the turn's start check inputs with it, the turn picks its answer's path.
 */
import type { Effort } from './request-controls';

export interface ModelCapabilities {
  /** Effort levels the model takes; empty: it takes no `effort`. */
  efforts: readonly Effort[];
  /** The model answers in a JSON schema with `output_config.format`. */
  structuredOutputs: boolean;
}

const ALL: readonly Effort[] = ['low', 'medium', 'high', 'xhigh', 'max'];
const TO_MAX: readonly Effort[] = ['low', 'medium', 'high', 'max'];
const BASIC: readonly Effort[] = ['low', 'medium', 'high'];
const NONE: readonly Effort[] = [];

/** By model id prefix, longest first wins; ids are matched after platform decorations are stripped. */
const CAPABILITIES: ReadonlyArray<readonly [prefix: string, caps: ModelCapabilities]> = [
  ['claude-fable-5', { efforts: ALL, structuredOutputs: true }],
  ['claude-mythos-5', { efforts: ALL, structuredOutputs: true }],
  ['claude-opus-5', { efforts: ALL, structuredOutputs: true }],
  ['claude-sonnet-5', { efforts: ALL, structuredOutputs: true }],
  ['claude-haiku-5', { efforts: BASIC, structuredOutputs: true }],
  ['claude-opus-4-8', { efforts: ALL, structuredOutputs: true }],
  ['claude-opus-4-7', { efforts: ALL, structuredOutputs: true }],
  ['claude-opus-4-6', { efforts: TO_MAX, structuredOutputs: true }],
  ['claude-sonnet-4-6', { efforts: TO_MAX, structuredOutputs: true }],
  ['claude-opus-4-5', { efforts: BASIC, structuredOutputs: true }],
  ['claude-sonnet-4-5', { efforts: NONE, structuredOutputs: true }],
  ['claude-haiku-4-5', { efforts: NONE, structuredOutputs: true }],
  ['claude-opus-4-1', { efforts: NONE, structuredOutputs: true }],
  ['claude-opus-4-0', { efforts: NONE, structuredOutputs: false }],
  ['claude-sonnet-4-0', { efforts: NONE, structuredOutputs: false }],
  ['claude-opus-4', { efforts: NONE, structuredOutputs: false }],
  ['claude-sonnet-4', { efforts: NONE, structuredOutputs: false }],
];

/** Claude 3 models, whose ids put the version before the family (`claude-3-5-sonnet`). */
const CLAUDE_3: ModelCapabilities = { efforts: NONE, structuredOutputs: false };

/** The bare Claude model id inside a Bedrock (`us.anthropic.claude-…-v1:0`) or Vertex (`claude-…@2025…`) id. */
function bareModelId(model: string): string {
  const id = model.trim().toLowerCase();
  const at = id.indexOf('claude-');
  return at > 0 ? id.slice(at) : id;
}

/** What `model` takes, or undefined for a model not known here. */
export function modelCapabilities(model: string): ModelCapabilities | undefined {
  const id = bareModelId(model);
  if (id.startsWith('claude-3-')) return CLAUDE_3;
  let best: readonly [string, ModelCapabilities] | undefined;
  for (const entry of CAPABILITIES) {
    const [prefix] = entry;
    const rest = id.slice(prefix.length);
    // A prefix covers a dated or suffixed id, not another minor version (claude-opus-4 ≠ claude-opus-4-9).
    if (id.startsWith(prefix) && (rest === '' || /^[-@:[.]/.test(rest)) && !/^-\d{1,2}(?:$|[-@:[.])/.test(rest)) {
      if (!best || prefix.length > best[0].length) best = entry;
    }
  }
  return best?.[1];
}

/** Why `model` does not take `effort`, or undefined when it does (or the model is not known here). */
export function effortProblem(model: string, effort: Effort): string | undefined {
  const caps = modelCapabilities(model);
  if (!caps || caps.efforts.includes(effort)) return undefined;
  return caps.efforts.length
    ? `${model} does not take effort "${effort}": use one of ${caps.efforts.join(', ')}`
    : `${model} takes no effort setting: remove it, or choose a model that does (claude-opus-4-5 and later, claude-sonnet-4-6 and later)`;
}
