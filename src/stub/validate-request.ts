/**
 * Checks a Messages API request the way the real API does, so tests catch transcripts and tool
 * definitions Claude would refuse. Returns the 400 message, or undefined when the request is valid.
 * Server tools (definitions, deferred tools, server tool blocks) are checked in
 * validate-server-tools.ts, the request's controls (sampling, `tool_choice`, `stop_sequences`,
 * `metadata`) in validate-request-controls.ts, `cache_control` in validate-cache-control.ts and
 * `output_config` in validate-output-config.ts.
 */
import { Ajv2020 } from 'ajv/dist/2020';
import { thinkingSignature, redactedData } from './signatures';
import { cacheControlProblem } from './validate-cache-control';
import { outputConfigProblem } from './validate-output-config';
import { legacySamplingProblem, metadataProblem, stopSequencesProblem, toolChoiceProblem } from './validate-request-controls';
import { deferredToolsProblem, serverBlocksProblem, toolDefinitionProblem } from './validate-server-tools';

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Checks schemas against the JSON Schema 2020-12 meta-schema, as the API does for every input_schema. */
const metaSchema = new Ajv2020({ strict: false, validateSchema: false });

/**
 * Why the API refuses a custom tool's `input_schema`, or undefined when it accepts it. The API
 * refuses top-level combinators before it looks at `type` (a root `anyOf` without `type` is
 * reported as the combinator), and requires a valid JSON Schema 2020-12 document; `$schema`
 * naming an older draft is accepted.
 */
export function inputSchemaProblem(schema: unknown, index: number): string | undefined {
  const at = `tools.${index}.custom.input_schema`;
  if (schema === undefined) return `${at}: Field required`;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return `${at}: Input should be a valid dictionary`;
  const s = schema as Record<string, unknown>;
  if ('oneOf' in s || 'allOf' in s || 'anyOf' in s) {
    return `${at}: input_schema does not support oneOf, allOf, or anyOf at the top level`;
  }
  if (s.type !== 'object') return `${at}.type: Input should be 'object'`;
  const { $schema: _dialect, ...body } = s;
  let valid: boolean;
  try {
    valid = metaSchema.validateSchema(body) === true;
  } catch {
    valid = false;
  }
  if (!valid) {
    return (
      `${at}: JSON schema is invalid. It must match JSON Schema draft 2020-12 ` +
      '(https://json-schema.org/draft/2020-12). Learn more about tool use at https://docs.claude.com/en/docs/tool-use.'
    );
  }
  return undefined;
}

function blocks(m: Message): Block[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
}

export function validateRequest(body: Record<string, unknown>, opts: { countTokens?: boolean } = {}): string | undefined {
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!opts.countTokens && (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)) {
    return 'max_tokens: Field required (a positive integer)';
  }
  const sampling = legacySamplingProblem(body);
  if (sampling) return sampling;
  const messages = body.messages as Message[] | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  for (const [i, m] of messages.entries()) {
    if (m?.role !== 'user' && m?.role !== 'assistant') return `messages.${i}.role: must be "user" or "assistant"`;
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return `messages.${i}.content: must be a string or a list of blocks`;
    if (Array.isArray(m.content) && m.content.length === 0 && !(m.role === 'assistant' && i === messages.length - 1)) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
  }
  if (messages[0]!.role !== 'user') return 'messages.0.role: the first message must use the "user" role';

  const tools = (body.tools ?? []) as Array<Record<string, unknown>>;
  if (!Array.isArray(tools)) return 'tools: must be a list';
  const names = new Set<string>();
  for (const [i, t] of tools.entries()) {
    if (t.type && t.type !== 'custom') {
      const problem = toolDefinitionProblem(t, i);
      if (problem) return problem;
      if (typeof t.name !== 'string') continue; // a toolset
      if (names.has(t.name)) return `tools: Tool names must be unique. Duplicate: ${t.name}`;
      names.add(t.name);
      continue;
    }
    if (typeof t.name !== 'string' || !TOOL_NAME.test(t.name)) {
      return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
    }
    if (names.has(t.name)) return `tools: Tool names must be unique. Duplicate: ${t.name}`;
    names.add(t.name);
    const schemaProblem = inputSchemaProblem(t.input_schema, i);
    if (schemaProblem) return schemaProblem;
  }

  const deferred = deferredToolsProblem(tools);
  if (deferred) return deferred;

  const controls = toolChoiceProblem(body, names, tools.length) ?? stopSequencesProblem(body) ?? metadataProblem(body) ?? cacheControlProblem(body);
  if (controls) return controls;
  const output = outputConfigProblem(body);
  if (output) return output;

  const serverBlocks = serverBlocksProblem(messages, tools);
  if (serverBlocks) return serverBlocks;

  for (const [i, m] of messages.entries()) {
    if (m.role !== 'assistant') continue;
    const content = blocks(m);
    for (const [j, b] of content.entries()) {
      if (b.type === 'thinking' && b.signature !== thinkingSignature(String(b.thinking))) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
      if (b.type === 'redacted_thinking' && (typeof b.data !== 'string' || !redactedData.verify(b.data))) {
        return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
      }
    }
    const uses = content.filter((b) => b.type === 'tool_use').map((b) => String(b.id));
    const next = messages[i + 1];
    if (!uses.length) {
      if (next?.role === 'user' && blocks(next).some((b) => b.type === 'tool_result')) {
        return `messages.${i + 1}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: the previous message has no \`tool_use\` blocks`;
      }
      continue;
    }
    if (!next) continue; // a final assistant message (prefill) may end in tool_use only for continuation
    const nextBlocks = next.role === 'user' ? blocks(next) : [];
    const results = nextBlocks.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id));
    const missing = uses.filter((id) => !results.includes(id));
    if (missing.length) {
      return (
        `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message.'
      );
    }
    const extra = results.filter((id) => !uses.includes(id));
    if (extra.length) {
      return `messages.${i + 1}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${extra.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    const firstOther = nextBlocks.findIndex((b) => b.type !== 'tool_result');
    const lastResult = nextBlocks.map((b) => b.type).lastIndexOf('tool_result');
    if (firstOther !== -1 && firstOther < lastResult) {
      return `messages.${i + 1}.content.${firstOther}: \`tool_result\` blocks must come first in the user message, before any other content`;
    }
  }
  return undefined;
}
