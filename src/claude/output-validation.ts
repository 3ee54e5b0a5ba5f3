/**
 * Reading and checking a turn's JSON answer: the text Claude wrote parsed as one JSON object (a
 * code fence around it is tolerated), then validated against the schema as the caller wrote it
 * (JSON Schema 2020-12, formats included), each problem one line naming where it is.
 */
import type { ValidateFunction } from 'ajv';
import { JsonSchemaValidators } from '../schemas/json-schema-validators';

export type AnswerCheck = { ok: true; value: Record<string, unknown> } | { ok: false; problems: string[] };

/** The schema as the caller wrote it, read as 2020-12 (the dialect of structured outputs). */
const validators = new JsonSchemaValidators('2020-12');

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const compiled = validators.of(schema);
  if ('error' in compiled) throw new Error(compiled.error);
  return compiled.validate;
}

/** The JSON object in `text`: the whole text, or the inside of one ```json fence. */
export function parseAnswerText(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  const trimmed = text.trim();
  if (!trimmed) return { ok: false, problem: 'the answer is empty' };
  const fenced = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  try {
    return { ok: true, value: JSON.parse(fenced ? fenced[1]! : trimmed) };
  } catch (err) {
    return { ok: false, problem: `the answer is not JSON (${(err as Error).message})` };
  }
}

/** `text` read as the answer and checked against `schema`. */
export function checkAnswer(text: string, schema: Record<string, unknown>): AnswerCheck {
  const parsed = parseAnswerText(text);
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] };
  const value = parsed.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, problems: ['the answer is not a JSON object'] };
  const validate = validatorOf(schema);
  if (validate(value)) return { ok: true, value: value as Record<string, unknown> };
  const problems = (validate.errors ?? []).map((e) => {
    const extra = e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})` : '';
    return `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${extra}`;
  });
  return { ok: false, problems };
}
