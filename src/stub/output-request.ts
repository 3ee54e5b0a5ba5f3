/**
 * Output requests: the call that asks for a turn's answer as one JSON object (src/core/output-spec.ts).
 * A request is one when it has `output_config.format` (the structured path), or when it asks with
 * OUTPUT_ASK (the instructed path, whose schema is in the system prompt):
 *
 * - the **ask** is the user message that has a text block reading exactly OUTPUT_ASK, followed only
 *   by repair rounds: the assistant's JSON and a user message whose text begins with
 *   OUTPUT_REPAIR_ASK. Without such a message (a structured request of other code), the ask is the
 *   last message before the repair rounds;
 * - the **attempt** is the number of repair rounds (0 for the first call);
 * - the answer is the scenario's `output` for the attempt (an array gives one per attempt, the last
 *   repeating; an object is written as JSON, a string as it is), else the minimal instance of the
 *   request's schema (minimal-instance.ts), `{}` on the instructed path.
 */
import { OUTPUT_ASK, OUTPUT_REPAIR_ASK } from '../core/output-spec';
import { minimalInstance } from './minimal-instance';
import type { ParsedScenario } from './scenario';

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

const texts = (m: Message | undefined): string[] =>
  !m ? [] : typeof m.content === 'string' ? [m.content] : Array.isArray(m.content) ? m.content.filter((b) => b?.type === 'text').map((b) => String(b.text)) : [];

const asks = (m: Message | undefined): boolean => m?.role === 'user' && texts(m).includes(OUTPUT_ASK);
const repairs = (m: Message | undefined): boolean => m?.role === 'user' && texts(m).some((t) => t.startsWith(OUTPUT_REPAIR_ASK));

/** The request's `output_config.format.schema`, when it has one. */
export function formatSchemaOf(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const format = (body.output_config as { format?: { schema?: unknown } | null } | null | undefined)?.format;
  const schema = format?.schema;
  return schema && typeof schema === 'object' && !Array.isArray(schema) ? (schema as Record<string, unknown>) : undefined;
}

/** Index of the ask: the last message once the repair rounds after it are left out. */
export function outputAskIndex(messages: Message[]): number {
  let end = messages.length - 1;
  while (end >= 2 && repairs(messages[end]) && messages[end - 1]?.role === 'assistant') end -= 2;
  return end;
}

export function isOutputRequest(body: Record<string, unknown>): boolean {
  if (formatSchemaOf(body)) return true;
  const messages = body.messages as Message[];
  return asks(messages[outputAskIndex(messages)]);
}

/** The attempt: 0 for the first call, 1 for the first repair, … */
export const outputAttempt = (messages: Message[]): number => (messages.length - 1 - outputAskIndex(messages)) / 2;

/**
 * The value an output request is answered with: the scenario's `output` for the attempt (templates
 * not expanded yet), else the minimal instance of the request's schema (`{}` without one).
 */
export function outputValue(scenario: ParsedScenario, body: Record<string, unknown>, attempt: number): unknown {
  const scripted = scenario.output;
  if (scripted !== undefined) return Array.isArray(scripted) ? scripted[Math.min(attempt, scripted.length - 1)] : scripted;
  const schema = formatSchemaOf(body);
  return schema ? minimalInstance(schema) : {};
}

/** The answer's text: a string as it is, anything else as compact JSON. */
export const outputText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
