/**
 * The checks the Messages API makes on `output_config` (`{ effort?, format? }`, nothing else; null is
 * the same as absent):
 *
 * - `effort`: one of the levels, and one the model takes (src/core/model-capabilities.ts; a model
 *   not known there takes any);
 * - `format`: exactly `{ type: "json_schema", schema }`, for a model with structured outputs (a model
 *   not known is accepted), the schema as validate-output-schema.ts has the rules;
 * - with `format`, no citations (a document or search result with citations enabled, a web fetch
 *   tool with citations enabled) and no prefill (a final assistant message).
 *
 * Returns the 400 message naming the field, or undefined.
 */
import { EFFORTS, type Effort } from '../core/request-controls';
import { effortProblem, modelCapabilities } from '../core/model-capabilities';
import { outputSchemaProblem } from './validate-output-schema';
import { isRecord } from '../core/is-record';

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

const quoted = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

export const CITATIONS_WITH_FORMAT = 'Citations are not supported together with structured outputs (output_config.format)';

/** Blocks whose `citations: { enabled: true }` asks for citations. */
const CITABLE = new Set(['document', 'search_result']);
const citing = (b: unknown): boolean => isRecord(b) && CITABLE.has(String(b.type)) && (b.citations as { enabled?: unknown } | null | undefined)?.enabled === true;

/** Where the request asks for citations: a citable block (in a message, or in a tool_result's content) or a web fetch tool. */
function citationsAt(body: Record<string, unknown>): string | undefined {
  const messages = body.messages as Message[];
  for (const [i, m] of messages.entries()) {
    if (typeof m.content === 'string') continue;
    for (const [j, b] of m.content.entries()) {
      if (citing(b)) return `messages.${i}.content.${j}.citations`;
      if (b?.type === 'tool_result' && Array.isArray(b.content)) {
        const k = (b.content as unknown[]).findIndex(citing);
        if (k !== -1) return `messages.${i}.content.${j}.content.${k}.citations`;
      }
    }
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : [];
  const fetch = tools.findIndex((t) => String(t.type).startsWith('web_fetch_') && (t.citations as { enabled?: unknown } | null | undefined)?.enabled === true);
  return fetch === -1 ? undefined : `tools.${fetch}.${String(tools[fetch]!.type)}.citations`;
}

function formatProblem(format: unknown, body: Record<string, unknown>): string | undefined {
  const at = 'output_config.format';
  if (!isRecord(format)) return `${at}: Input should be a valid dictionary`;
  if (format.type !== 'json_schema') return `${at}.type: Input should be 'json_schema'`;
  const extra = Object.keys(format).find((k) => k !== 'type' && k !== 'schema');
  if (extra) return `${at}.${extra}: Extra inputs are not permitted`;
  if (!('schema' in format)) return `${at}.schema: Field required`;
  if (!isRecord(format.schema)) return `${at}.schema: Input should be a valid dictionary`;
  const model = String(body.model);
  if (modelCapabilities(model)?.structuredOutputs === false) return `${at}: ${model} does not support structured outputs`;
  const schemaProblem = outputSchemaProblem(format.schema);
  if (schemaProblem) return schemaProblem;
  const citations = citationsAt(body);
  if (citations) return `${citations}: ${CITATIONS_WITH_FORMAT}`;
  const messages = body.messages as Message[];
  if (messages[messages.length - 1]!.role === 'assistant') {
    return `messages.${messages.length - 1}: a prefill (a final assistant message) is not supported together with structured outputs (output_config.format)`;
  }
  return undefined;
}

/** `body.messages` is a valid, non-empty list of messages (validate-request.ts checked it first). */
export function outputConfigProblem(body: Record<string, unknown>): string | undefined {
  const config = body.output_config;
  if (config === undefined || config === null) return undefined;
  if (!isRecord(config)) return 'output_config: Input should be a valid dictionary';
  const extra = Object.keys(config).find((k) => k !== 'effort' && k !== 'format');
  if (extra) return `output_config.${extra}: Extra inputs are not permitted`;
  if (config.effort != null) {
    if (!(EFFORTS as readonly unknown[]).includes(config.effort)) return `output_config.effort: Input should be ${quoted(EFFORTS)}`;
    const problem = effortProblem(String(body.model), config.effort as Effort);
    if (problem) return `output_config.effort: ${problem}`;
  }
  return config.format == null ? undefined : formatProblem(config.format, body);
}
