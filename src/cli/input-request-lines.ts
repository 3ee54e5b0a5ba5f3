/**
 * A call waiting for input (a server's questions, src/core/input-requests.ts) for the terminal: what
 * the server asks, each form's fields (name, type, whether required) or the URL to visit, and the
 * `respond` commands that answer or decline it.
 */
import type { PendingApproval } from '../client/approvals';
import type { InputRequest } from '../core/input-requests';
import { isRecord } from '../core/is-record';
import { oneLine } from '../core/text';
import { shellWord } from './approval-prompt';

/** One field of a form as a person reads it. */
export interface FormField {
  name: string;
  /** `integer`, `string (email)`, `one of "a", "b"`, `array of "x", "y"`. */
  type: string;
  required: boolean;
  /** Bounds, default, title or description, shortened. */
  note?: string;
}

/** What a type or a choice reads as. */
const NOTE_CHARS = 60;
const CHOICE_CHARS = 60;

function choices(field: Record<string, unknown>): unknown[] | undefined {
  if (Array.isArray(field.enum)) return field.enum;
  const alternatives = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : undefined;
  const consts = alternatives?.filter(isRecord).map((a) => a.const);
  return consts?.length && consts.every((c) => c !== undefined) ? consts : undefined;
}

function typeOf(field: Record<string, unknown>): string {
  const values = choices(field);
  if (values) return `one of ${oneLine(values.map((v) => JSON.stringify(v)).join(', '), CHOICE_CHARS)}`;
  const items = isRecord(field.items) ? field.items : undefined;
  const itemChoices = items && choices(items);
  if (itemChoices) return `array of ${oneLine(itemChoices.map((v) => JSON.stringify(v)).join(', '), CHOICE_CHARS)}`;
  const type = Array.isArray(field.type) ? field.type.join('|') : typeof field.type === 'string' ? field.type : 'any';
  return typeof field.format === 'string' ? `${type} (${field.format})` : type;
}

function noteOf(field: Record<string, unknown>): string | undefined {
  const bound = (low: unknown, high: unknown): string | undefined =>
    typeof low === 'number' && typeof high === 'number' ? `${low}..${high}` : typeof low === 'number' ? `>= ${low}` : typeof high === 'number' ? `<= ${high}` : undefined;
  const parts = [
    bound(field.minimum, field.maximum),
    bound(field.minLength, field.maxLength) && `length ${bound(field.minLength, field.maxLength)}`,
    field.default !== undefined ? `default ${JSON.stringify(field.default)}` : undefined,
    typeof field.title === 'string' ? field.title : typeof field.description === 'string' ? field.description : undefined,
  ].filter((p): p is string => typeof p === 'string' && p !== '');
  return parts.length ? oneLine(parts.join(' · '), NOTE_CHARS) : undefined;
}

/** The fields of a form's schema, in the schema's order. */
export function formFields(schema: Record<string, unknown>): FormField[] {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  return Object.entries(properties).map(([name, value]) => {
    const field = isRecord(value) ? value : {};
    const note = noteOf(field);
    return { name, type: typeOf(field), required: required.has(name), ...(note !== undefined ? { note } : {}) };
  });
}

/** A form's fields as aligned lines: `guests  integer  required  1..20`. */
function fieldLines(fields: FormField[], indent: string): string[] {
  if (!fields.length) return [`${indent}(no fields)`];
  const rows = fields.map((f) => [f.name, f.type, f.required ? 'required' : 'optional', f.note ?? '']);
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `${indent}${r.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join('  ')}`.trimEnd());
}

/** An example of the `--data` a round of questions takes: each form's fields, their values left out. */
export function dataTemplate(requests: readonly InputRequest[]): string {
  const forms = requests.filter((r): r is Extract<InputRequest, { mode: 'form' }> => r.mode === 'form');
  const fieldsOf = (schema: Record<string, unknown>): string => `{${formFields(schema).map((f) => `${JSON.stringify(f.name)}: …`).join(', ')}}`;
  return forms.length === 1 ? fieldsOf(forms[0]!.requestedSchema) : `{${forms.map((f) => `${JSON.stringify(f.key)}: ${fieldsOf(f.requestedSchema)}`).join(', ')}}`;
}

/**
 * The lines under a waiting call's row in `mcp-turns approvals`: `kind: input` and the server's
 * message, each form's fields or the URL, and the commands that answer and decline it.
 */
export function inputWaitLines(call: Pick<PendingApproval, 'turnId' | 'callId' | 'round' | 'requests' | 'requestsTruncated'>, connectionArgs: string[] = []): string[] {
  const requests = call.requests ?? [];
  const forms = requests.filter((r) => r.mode === 'form');
  const lines = [`  kind: input${call.round !== undefined && call.round > 1 ? ` (round ${call.round})` : ''}${call.requestsTruncated ? ' (questions shortened: too large for the listing)' : ''}`];
  for (const r of requests) {
    const key = requests.length > 1 ? `${r.key}: ` : '';
    if (r.mode === 'url') {
      lines.push(`    ${key}${oneLine(r.message, 200) || 'visit the URL'}`, `      visit: ${r.url}`);
    } else {
      lines.push(`    ${key}${oneLine(r.message, 200) || 'fill in the form'}`, ...fieldLines(formFields(r.requestedSchema), '      '));
    }
  }
  const tail = [call.turnId, call.callId, ...connectionArgs].map(shellWord).join(' ');
  if (forms.length) lines.push(`  answer:  mcp-turns respond ${tail} --data ${shellWord(dataTemplate(requests))}`);
  else lines.push(`  done:    mcp-turns respond ${tail} --done`);
  lines.push(`  decline: mcp-turns respond ${tail} --decline`);
  return lines;
}
