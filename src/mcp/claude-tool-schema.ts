/**
 * A tool's input schema in the form the Messages API accepts, made from the schema the MCP server
 * publishes. The API refuses a whole request when one tool's `input_schema` has `oneOf`, `allOf` or
 * `anyOf` at its top level, is not `type: "object"`, or is not a valid JSON Schema 2020-12 document;
 * servers publish such schemas (a zod union serialises to a root `anyOf`). Claude sees the schema
 * made here; the worker checks Claude's arguments against the server's original schema.
 *
 * The rules:
 * - `allOf` branches, and a `$ref` at the top, are merged into one object: their properties
 *   together, required when any branch requires them.
 * - `anyOf` and `oneOf` become one object whose properties are the union of the branches'
 *   properties, required when every branch requires them; the branches are listed in the schema's
 *   `description`. Branches no object satisfies (`type: "string"`) are left out.
 * - A property that branches define differently becomes `allOf` (merged branches) or `anyOf`
 *   (alternatives) of the definitions, below the top level where the API accepts them;
 *   alternatives that are all constants become one `enum`.
 * - Nested `$ref`s stay, with the root's `$defs` and `definitions`; a local `$ref` that no longer
 *   points at the same schema after the rewrite is replaced by that schema.
 * - The properties the worker injects are removed: Claude never sees or sets them.
 * - A schema that no object satisfies, that refers to itself at the top, or that is still not
 *   valid JSON Schema 2020-12 cannot be offered: the tool is left out of the turn with the reason.
 */
import { Ajv2020 } from 'ajv/dist/2020';
import { canonicalJson } from '../core/canonical-json';
import type { JsonSchemaObject } from '../core/contracts';
import { isRecord } from '../core/is-record';

/** The schema to offer Claude, or why the tool cannot be offered. */
export type ClaudeInputSchema = { ok: true; schema: JsonSchemaObject } | { ok: false; reason: string };

/** Options of {@link claudeInputSchema}. */
export interface ClaudeSchemaOptions {
  /** Argument names the worker fills in itself (the server's `inject`): removed from the schema. */
  hidden?: readonly string[];
}

type Schema = boolean | Record<string, unknown>;

/** An object schema reduced to what Claude is told about its properties. */
interface ObjectShape {
  properties: Record<string, Schema>;
  required: string[];
  /** No properties beyond `properties` are allowed. */
  closed: boolean;
}

/** Root keywords the rewrite replaces; every other root keyword is kept as published. */
const REWRITTEN = new Set(['allOf', 'anyOf', 'oneOf', '$ref', 'type', 'properties', 'required', 'additionalProperties']);
/** Keywords that may accompany a constant without making it more than a constant. */
const CONSTANT_ANNOTATIONS = new Set(['type', 'title', 'description']);

/** A schema the rewrite cannot offer; the message says why. */
class UnusableSchema extends Error {}

const metaSchema = new Ajv2020({ strict: false, validateSchema: false });

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** True when `type` (absent, a name or a list of names) admits an object. */
function admitsObject(type: unknown): boolean {
  if (type === undefined) return true;
  return Array.isArray(type) ? type.includes('object') : type === 'object';
}

/**
 * The schema Claude is offered for a tool whose server publishes `original`, or the reason it
 * cannot be offered. Pure: `original` is not modified, and equal inputs give equal outputs.
 */
export function claudeInputSchema(original: unknown, opts: ClaudeSchemaOptions = {}): ClaudeInputSchema {
  const hidden = new Set(opts.hidden ?? []);
  try {
    if (original === undefined) return { ok: true, schema: { type: 'object' } };
    if (!isRecord(original)) throw new UnusableSchema('its input schema is not a JSON object');
    const rewrite = 'allOf' in original || 'anyOf' in original || 'oneOf' in original || '$ref' in original;
    const schema = rewrite ? rewritten(original, hidden) : asIs(original);
    hide(schema, hidden);
    const problem = metaSchemaProblem(schema);
    if (problem) throw new UnusableSchema(`its input schema is not valid JSON Schema 2020-12 (${problem})`);
    return { ok: true, schema: schema as JsonSchemaObject };
  } catch (err) {
    if (err instanceof UnusableSchema) return { ok: false, reason: err.message };
    throw err;
  }
}

/** A schema without top-level combinators: offered as published, `type` pinned to `object`. */
function asIs(original: Record<string, unknown>): Record<string, unknown> {
  if (!admitsObject(original.type)) throw new UnusableSchema(`its input schema describes ${JSON.stringify(original.type)}, not an object`);
  return { ...structuredClone(original), type: 'object' };
}

interface RewriteContext {
  root: Record<string, unknown>;
  hidden: Set<string>;
  /** Descriptions of the alternatives lifted to the top, in order. */
  notes: string[];
  /** `$ref`s being followed at the top (a repeat is a cycle). */
  following: string[];
  /** `allOf` / `anyOf` property schemas this rewrite made (extended, not nested, when merged again). */
  made: WeakSet<object>;
}

function rewritten(root: Record<string, unknown>, hidden: Set<string>): Record<string, unknown> {
  const ctx: RewriteContext = { root, hidden, notes: [], following: [], made: new WeakSet() };
  const shape = shapeOf(root, ctx);
  if (!shape) throw new UnusableSchema('no JSON object satisfies its input schema (tool arguments are an object)');
  const out: Record<string, unknown> = { type: 'object' };
  for (const [key, value] of Object.entries(root)) if (!REWRITTEN.has(key)) out[key] = structuredClone(value);
  const description = [typeof root.description === 'string' ? root.description : '', ...ctx.notes].filter(Boolean).join('\n\n');
  if (description) out.description = description;
  out.properties = structuredClone(shape.properties);
  if (shape.required.length) out.required = [...shape.required];
  if (shape.closed) out.additionalProperties = false;
  return repointRefs(out, root);
}

/** What one (sub)schema at the top says about the arguments object; undefined when no object satisfies it. */
function shapeOf(schema: unknown, ctx: RewriteContext): ObjectShape | undefined {
  if (schema === true) return { properties: {}, required: [], closed: false };
  if (schema === false) return undefined;
  if (!isRecord(schema)) throw new UnusableSchema('its input schema has a branch that is not a schema');
  if (!admitsObject(schema.type)) return undefined;
  const parts: ObjectShape[] = [ownShape(schema)];
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    if (ctx.following.includes(ref)) throw new UnusableSchema(`its input schema refers to itself at the top level (${ref})`);
    const target = resolvePointer(ctx.root, ref);
    if (target === undefined) throw new UnusableSchema(`its input schema's top level refers to ${ref}, which it does not define`);
    ctx.following.push(ref);
    const shape = shapeOf(target, ctx);
    ctx.following.pop();
    if (!shape) return undefined;
    parts.push(shape);
  }
  for (const branch of Array.isArray(schema.allOf) ? schema.allOf : []) {
    const shape = shapeOf(branch, ctx);
    if (!shape) return undefined;
    parts.push(shape);
  }
  let merged = conjunction(parts, ctx);
  for (const kind of ['anyOf', 'oneOf'] as const) {
    const branches = schema[kind];
    if (!Array.isArray(branches)) continue;
    const alternatives = branches.flatMap((branch: unknown) => {
      const shape = shapeOf(branch, ctx);
      return shape ? [{ branch, shape }] : [];
    });
    if (!alternatives.length) return undefined;
    ctx.notes.push(describeAlternatives(kind, alternatives, ctx));
    merged = conjunction([merged, union(alternatives.map((a) => a.shape), ctx)], ctx);
  }
  return merged;
}

function ownShape(schema: Record<string, unknown>): ObjectShape {
  return {
    properties: isRecord(schema.properties) ? (schema.properties as Record<string, Schema>) : {},
    required: Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
    closed: schema.additionalProperties === false || schema.unevaluatedProperties === false,
  };
}

/** Every part holds: all their properties, required when any part requires them. */
function conjunction(parts: ObjectShape[], ctx: RewriteContext): ObjectShape {
  const properties: Record<string, Schema> = {};
  for (const part of parts) {
    for (const [key, schema] of Object.entries(part.properties)) {
      const known = properties[key];
      if (known === undefined || same(known, schema)) properties[key] = known ?? schema;
      else properties[key] = combined('allOf', known, schema, ctx);
    }
  }
  return {
    properties,
    required: [...new Set(parts.flatMap((p) => p.required))],
    closed: parts.some((p) => p.closed),
  };
}

/** One of the alternatives holds: every property any offers, required when all require it. */
function union(alternatives: ObjectShape[], ctx: RewriteContext): ObjectShape {
  const properties: Record<string, Schema> = {};
  const keys = [...new Set(alternatives.flatMap((a) => Object.keys(a.properties)))];
  for (const key of keys) {
    const defined: Schema[] = [];
    for (const a of alternatives) {
      const schema = a.properties[key];
      if (schema !== undefined && !defined.some((d) => same(d, schema))) defined.push(schema);
    }
    properties[key] = defined.length === 1 ? defined[0]! : (constants(defined) ?? defined.reduce((a, b) => combined('anyOf', a, b, ctx)));
  }
  const [first, ...rest] = alternatives;
  return {
    properties,
    required: (first?.required ?? []).filter((r) => rest.every((a) => a.required.includes(r))),
    closed: alternatives.every((a) => a.closed),
  };
}

/** `allOf` / `anyOf` of two property schemas, extending one this rewrite made rather than nesting it. */
function combined(kind: 'allOf' | 'anyOf', a: Schema, b: Schema, ctx: RewriteContext): Schema {
  if (isRecord(a) && ctx.made.has(a) && Array.isArray(a[kind])) return { ...a, [kind]: [...(a[kind] as Schema[]), b] };
  const out = { [kind]: [a, b] };
  ctx.made.add(out);
  return out;
}

/** Alternatives that are each a constant (`const` or `enum`, perhaps typed) as one `enum`; else undefined. */
function constants(alternatives: Schema[]): Schema | undefined {
  const values: unknown[] = [];
  const types = new Set<unknown>();
  for (const a of alternatives) {
    if (!isRecord(a)) return undefined;
    if (Object.keys(a).some((k) => k !== 'const' && k !== 'enum' && !CONSTANT_ANNOTATIONS.has(k))) return undefined;
    if ('const' in a) values.push(a.const);
    else if (Array.isArray(a.enum)) values.push(...a.enum);
    else return undefined;
    types.add(a.type === undefined ? undefined : canonicalJson(a.type));
  }
  const distinct = values.filter((v, i) => values.findIndex((w) => same(v, w)) === i);
  const [type] = [...types];
  return types.size === 1 && type !== undefined ? { type: JSON.parse(type as string) as unknown, enum: distinct } : { enum: distinct };
}

/** The alternatives as a sentence per branch: its name, then its arguments (constants shown). */
function describeAlternatives(
  kind: 'anyOf' | 'oneOf',
  alternatives: Array<{ branch: unknown; shape: ObjectShape }>,
  ctx: RewriteContext,
): string {
  const head = kind === 'oneOf' ? 'The arguments take exactly one of these forms:' : 'The arguments take one or more of these forms:';
  const lines = alternatives.map(({ branch, shape }, i) => {
    const label = branchLabel(branch);
    const keys = [...new Set([...Object.keys(shape.properties), ...shape.required])].filter((k) => !ctx.hidden.has(k));
    const args = keys.map((key) => {
      const schema = shape.properties[key];
      const value = isRecord(schema) && 'const' in schema ? ` = ${JSON.stringify(schema.const)}` : '';
      return `${key}${value}${shape.required.includes(key) ? ' (required)' : ''}`;
    });
    return `${i + 1}. ${label ? `${label}: ` : ''}${args.length ? args.join(', ') : 'no arguments'}`;
  });
  return [head, ...lines].join('\n');
}

function branchLabel(branch: unknown): string | undefined {
  if (!isRecord(branch)) return undefined;
  for (const key of ['title', 'description'] as const) {
    if (typeof branch[key] === 'string' && branch[key]) return branch[key];
  }
  return typeof branch.$ref === 'string' ? decodeURIComponent(branch.$ref.split('/').pop() ?? '') || undefined : undefined;
}

/** Removes the injected argument names from the top level. */
function hide(schema: Record<string, unknown>, hidden: Set<string>): void {
  if (!hidden.size) return;
  if (isRecord(schema.properties)) for (const key of hidden) delete schema.properties[key];
  if (Array.isArray(schema.required)) {
    schema.required = schema.required.filter((r) => !hidden.has(r as string));
    if (!(schema.required as unknown[]).length) delete schema.required;
  }
}

/**
 * Local `$ref`s of the rewritten schema that no longer point at what they pointed at in the
 * original (they pointed into a rewritten part) replaced by that schema; a cycle among them cannot
 * be replaced and makes the schema unusable.
 */
function repointRefs(out: Record<string, unknown>, original: Record<string, unknown>): Record<string, unknown> {
  const visit = (node: unknown, inlining: string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => visit(n, inlining));
    if (!isRecord(node)) return node;
    const ref = node.$ref;
    if (typeof ref === 'string' && ref.startsWith('#')) {
      const before = resolvePointer(original, ref);
      const after = resolvePointer(out, ref);
      if (before !== undefined && (after === undefined || !same(before, after))) {
        if (inlining.includes(ref)) throw new UnusableSchema(`its input schema has a recursive reference (${ref}) into a part that had to be rewritten`);
        const { $ref: _ref, ...siblings } = node;
        const target = visit(structuredClone(before), [...inlining, ref]);
        const inlined = Object.keys(siblings).length ? { ...visitEntries(siblings, inlining), allOf: [target] } : target;
        return inlined;
      }
    }
    return visitEntries(node, inlining);
  };
  const visitEntries = (node: Record<string, unknown>, inlining: string[]): Record<string, unknown> =>
    Object.fromEntries(Object.entries(node).map(([k, v]) => [k, visit(v, inlining)]));
  return visit(out, []) as Record<string, unknown>;
}

/** The value a local JSON pointer reference (`#`, `#/$defs/a`) names in `root`; undefined otherwise. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  const pointer = decodeURIComponent(ref.slice(1));
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined; // an anchor: not followed
  let node: unknown = root;
  for (const token of pointer.slice(1).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isRecord(node)) node = Object.prototype.hasOwnProperty.call(node, key) ? node[key] : undefined;
    else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Why a schema fails the JSON Schema 2020-12 meta-schema (the dialect named by `$schema` aside). */
function metaSchemaProblem(schema: Record<string, unknown>): string | undefined {
  const { $schema: _dialect, ...body } = schema;
  try {
    if (metaSchema.validateSchema(body) === true) return undefined;
    return metaSchema.errorsText(metaSchema.errors, { dataVar: 'schema' });
  } catch (err) {
    return (err as Error).message;
  }
}
