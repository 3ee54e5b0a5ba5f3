/**
 * Reading and checking a turn's JSON answer: the text Claude wrote parsed as one JSON object (a
 * code fence around it is tolerated), then validated against the schema as the caller wrote it
 * (JSON Schema 2020-12, formats included), each problem one line naming where it is.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

export type AnswerCheck = { ok: true; value: Record<string, unknown> } | { ok: false; problems: string[] };

const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
/** The validators of the schemas a worker has seen lately, by their JSON, with the schema ajv keeps them under. */
const compiled = new Map<string, { body: object; validate: ValidateFunction }>();
const COMPILED_KEPT = 256;

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return known.validate;
  const { $schema: _dialect, $id: _id, ...body } = schema;
  const validate = ajv.compile(body);
  if (compiled.size >= COMPILED_KEPT) {
    const [oldest, entry] = compiled.entries().next().value as [string, { body: object }];
    compiled.delete(oldest);
    ajv.removeSchema(entry.body); // ajv keeps every schema it compiled until told otherwise
  }
  compiled.set(key, { body, validate });
  return validate;
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
