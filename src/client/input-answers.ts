/**
 * Checking a person's answer to a server's questions (src/core/input-requests.ts) before it is sent:
 * each form's content against the schema the server asked it with, so a bad answer costs no round
 * trip to the turn, nor a second question from the server, and the person learns at once which
 * field is wrong (src/schemas/json-schema-validators.ts: 2020-12 with formats, draft-07 when the
 * schema says so); a schema that does not compile accepts every answer (the server checks too).
 */
import type { ErrorObject } from 'ajv';
import { answerContents, type InputRequest } from '../core/input-requests';
import { isRecord } from '../core/is-record';
import { oneLine } from '../core/text';
import { JsonSchemaValidators } from '../schemas/json-schema-validators';

/** The servers' question schemas (a long-running `serve` answers many). */
const validators = new JsonSchemaValidators();

/** At most this many problems are named in the line; the rest are counted. */
const PROBLEMS_NAMED = 3;

/** `input.a.b`, `input["odd key"]`: where in the answer a JSON pointer points. */
function fieldPath(base: string, pointer: string): string {
  if (!pointer) return base;
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, key) => (/^[A-Za-z_$][\w$-]*$/.test(key) ? `${path}.${key}` : /^\d+$/.test(key) ? `${path}[${key}]` : `${path}[${JSON.stringify(key)}]`), base);
}

/** One problem as a person reads it: the field it is about, then what is wrong. */
function problemLine(base: string, e: ErrorObject): string {
  const at = fieldPath(base, e.instancePath);
  const params = e.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
  if (e.keyword === 'required' && params.missingProperty !== undefined) return `${fieldPath(at, `/${params.missingProperty}`)}: is required`;
  if (e.keyword === 'additionalProperties' && params.additionalProperty !== undefined)
    return `${fieldPath(at, `/${params.additionalProperty}`)}: is not a field of this form`;
  if (e.keyword === 'enum' && Array.isArray(params.allowedValues))
    return `${at}: must be one of ${oneLine(params.allowedValues.map((v) => JSON.stringify(v)).join(', '), 200)}`;
  return `${at}: ${e.message ?? 'is invalid'}`;
}

/**
 * Why `input` is no answer to `requests` (one line naming each field that is wrong and how, e.g.
 * `input.guests: must be >= 1`), or undefined when it is one. `input` undefined is the answer to a
 * round of URL questions only (the person says done). One form takes its content as `input`; several
 * take `{ [key]: content }` (src/core/input-requests.ts, answerContents).
 */
export function answerProblem(requests: readonly InputRequest[], input: unknown): string | undefined {
  const forms = requests.filter((r) => r.mode === 'form');
  if (!forms.length) {
    return input === undefined ? undefined : 'input: this call asks to visit a URL, not for values: answer without input once done, or decline';
  }
  if (input === undefined) return 'input: this call asks for values: give them, or decline';
  if (!isRecord(input)) return `input: must be an object${forms.length > 1 ? ` of the answers by question (${forms.map((f) => f.key).join(', ')})` : ''}`;
  const problems: string[] = [];
  if (forms.length > 1) {
    const keys = new Set(forms.map((f) => f.key));
    for (const extra of Object.keys(input).filter((k) => !keys.has(k))) problems.push(`${fieldPath('input', `/${extra}`)}: is not one of the questions (${[...keys].join(', ')})`);
  }
  const contents = answerContents(requests, input);
  for (const form of forms) {
    const base = forms.length > 1 ? fieldPath('input', `/${form.key}`) : 'input';
    if (forms.length > 1 && input[form.key] !== undefined && !isRecord(input[form.key])) {
      problems.push(`${base}: must be an object`);
      continue;
    }
    const compiled = validators.of(form.requestedSchema);
    if ('validate' in compiled && !compiled.validate(contents[form.key] ?? {})) problems.push(...(compiled.validate.errors ?? []).map((e) => problemLine(base, e)));
  }
  if (!problems.length) return undefined;
  const named = problems.slice(0, PROBLEMS_NAMED).join('; ');
  return problems.length > PROBLEMS_NAMED ? `${named}; and ${problems.length - PROBLEMS_NAMED} more` : named;
}
