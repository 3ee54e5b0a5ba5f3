/**
 * The JSON Schema rules of structured outputs (`output_config.format.schema`), as the API has them.
 * A schema the SDK's `transformJSONSchema` made (it closes every object and moves what is not
 * supported into `description`) passes unless it is recursive or too complex. Returns the 400
 * message, or undefined when the API takes the schema:
 *
 * - it is a valid JSON Schema 2020-12 document (`$schema` naming another draft is accepted);
 * - only the supported keywords (SUPPORTED_KEYWORDS), `format` only with a supported format,
 *   `minItems` only 0 or 1;
 * - every object schema (`type: "object"`, or one with `properties`), at any depth, says
 *   `additionalProperties: false`;
 * - every `$ref` points inside the schema (`#` or `#/…`) and is not recursive: no `$ref` leads back
 *   to a schema it is inside of (itself, an ancestor, or through other `$ref`s);
 * - at most 24 levels of nesting (an object's properties, an array's items; a `$ref` counts as the
 *   schema it points to, `anyOf`/`allOf` add no level), 1000 properties, 5000 characters of enum
 *   values (a string counts its characters, another value its JSON).
 */
import { Ajv2020 } from 'ajv/dist/2020';
import { isRecord } from '../core/is-record';

const AT = 'output_config.format.schema';

export const SUPPORTED_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'allOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'default',
  'format',
  'minItems',
  '$schema',
]);

export const SUPPORTED_FORMATS: ReadonlySet<string> = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);

export const SCHEMA_LIMITS = { nesting: 24, properties: 1000, enumChars: 5000 } as const;

/** Checks schemas against the JSON Schema 2020-12 meta-schema. */
const metaSchema = new Ajv2020({ strict: false, validateSchema: false });

type Schema = Record<string, unknown>;

const escape = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** A subschema: where it is (a JSON pointer, `#/properties/a`), and whether it is an instance level deeper. */
interface Child {
  pointer: string;
  schema: unknown;
  /** An object's property or an array's items: one level of nesting more. */
  nests: boolean;
  /** A definition (`$defs`, `definitions`): it counts where a `$ref` uses it, not where it is written. */
  definition: boolean;
}

function children(schema: Schema, pointer: string): Child[] {
  const out: Child[] = [];
  const add = (key: string, value: unknown, nests: boolean, definition = false): void => {
    if (Array.isArray(value)) value.forEach((s, i) => out.push({ pointer: `${pointer}/${key}/${i}`, schema: s, nests, definition }));
  };
  const named = (key: string, nests: boolean, definition = false): void => {
    const value = schema[key];
    if (!isRecord(value)) return;
    for (const [name, s] of Object.entries(value)) out.push({ pointer: `${pointer}/${key}/${escape(name)}`, schema: s, nests, definition });
  };
  named('properties', true);
  if (isRecord(schema.items)) out.push({ pointer: `${pointer}/items`, schema: schema.items, nests: true, definition: false });
  else add('items', schema.items, true);
  add('anyOf', schema.anyOf, false);
  add('allOf', schema.allOf, false);
  named('$defs', false, true);
  named('definitions', false, true);
  return out;
}

/** The schema at a local `$ref` (`#`, `#/$defs/a`), with its normalised pointer; undefined when it points nowhere. */
function resolve(root: Schema, ref: string): { pointer: string; schema: unknown } | undefined {
  if (ref !== '#' && !ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  const segments = ref === '#' ? [] : ref.slice(2).split('/');
  const normalised: string[] = [];
  for (const raw of segments) {
    let segment: string;
    try {
      segment = unescape(decodeURIComponent(raw));
    } catch {
      return undefined;
    }
    if (Array.isArray(node) && /^\d+$/.test(segment)) node = node[Number(segment)];
    else if (isRecord(node) && Object.hasOwn(node, segment)) node = node[segment];
    else return undefined;
    normalised.push(escape(segment));
  }
  return node === undefined ? undefined : { pointer: ['#', ...normalised].join('/'), schema: node };
}

const tooComplex = (why: string): string => `${AT}: schema is too complex (${why})`;

const isObjectSchema = (s: Schema): boolean => s.type === 'object' || 'properties' in s;

/** Why one schema node (not its subschemas) is refused, or undefined. */
function nodeProblem(s: Schema, at: string): string | undefined {
  const unsupported = Object.keys(s).find((k) => !SUPPORTED_KEYWORDS.has(k));
  if (unsupported) return `${AT}: '${unsupported}' is not supported in structured outputs (at ${at})`;
  if ('format' in s && !SUPPORTED_FORMATS.has(s.format as string)) {
    return `${AT}: format '${String(s.format)}' is not supported; use one of ${[...SUPPORTED_FORMATS].join(', ')} (at ${at})`;
  }
  if ('minItems' in s && s.minItems !== 0 && s.minItems !== 1) return `${AT}: minItems ${JSON.stringify(s.minItems)} is not supported, only 0 or 1 (at ${at})`;
  if (isObjectSchema(s) && s.additionalProperties !== false) {
    return `${AT}: For 'object' type, 'additionalProperties' must be explicitly set to false (at ${at})`;
  }
  return undefined;
}

export function outputSchemaProblem(schema: Schema): string | undefined {
  const { $schema: _dialect, ...body } = schema;
  let valid: boolean;
  try {
    valid = metaSchema.validateSchema(body) === true;
  } catch {
    valid = false;
  }
  if (!valid) return `${AT}: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12)`;

  // Every node of the document, in order: its own rules, and what it adds to the totals.
  const nodes = new Map<string, Schema>();
  let properties = 0;
  let enumChars = 0;
  // `levels`: nesting as written, from the root or from the definition the node is in. More than the
  // limit is refused here already (the count through `$ref`s, below, can only be higher).
  const stack: Array<{ pointer: string; schema: unknown; levels: number }> = [{ pointer: '#', schema, levels: 0 }];
  while (stack.length) {
    const { pointer, schema: s, levels } = stack.pop()!;
    if (!isRecord(s)) continue; // a boolean schema has no keywords to check
    if (levels > SCHEMA_LIMITS.nesting) return tooComplex(`more than ${SCHEMA_LIMITS.nesting} levels of nesting`);
    const problem = nodeProblem(s, pointer);
    if (problem) return problem;
    nodes.set(pointer, s);
    if (isRecord(s.properties)) properties += Object.keys(s.properties).length;
    if (Array.isArray(s.enum)) for (const v of s.enum) enumChars += typeof v === 'string' ? v.length : JSON.stringify(v).length;
    const below = children(s, pointer).map((c) => ({ pointer: c.pointer, schema: c.schema, levels: c.definition ? 0 : levels + (c.nests ? 1 : 0) }));
    stack.push(...below.reverse());
  }
  for (const [pointer, s] of nodes) {
    if (typeof s.$ref !== 'string') continue;
    const target = resolve(schema, s.$ref);
    if (!target || !(nodes.has(target.pointer) || typeof target.schema === 'boolean')) {
      return `${AT}: $ref '${s.$ref}' does not point to a schema in this document; only local references ('#/…') are supported (at ${pointer})`;
    }
  }

  const recursion = recursiveRef(schema, nodes);
  if (recursion) return `${AT}: recursive schemas are not supported ($ref '${recursion.ref}' at ${recursion.at})`;

  if (nesting(schema, nodes) > SCHEMA_LIMITS.nesting) return tooComplex(`more than ${SCHEMA_LIMITS.nesting} levels of nesting`);
  if (properties > SCHEMA_LIMITS.properties) return tooComplex(`${properties} properties in total; at most ${SCHEMA_LIMITS.properties}`);
  if (enumChars > SCHEMA_LIMITS.enumChars) return tooComplex(`${enumChars} characters of enum values in total; at most ${SCHEMA_LIMITS.enumChars}`);
  return undefined;
}

/**
 * The first `$ref` that leads back into a schema it is inside of, walking the document depth first
 * with each `$ref` followed: a schema reached again while it is still being walked is a cycle.
 */
function recursiveRef(root: Schema, nodes: Map<string, Schema>): { ref: string; at: string } | undefined {
  const walking = new Set<string>();
  const done = new Set<string>();
  const walk = (pointer: string): { ref: string; at: string } | undefined => {
    const s = nodes.get(pointer);
    if (!s || done.has(pointer)) return undefined;
    walking.add(pointer);
    if (typeof s.$ref === 'string') {
      const target = resolve(root, s.$ref)!.pointer;
      if (walking.has(target)) return { ref: s.$ref, at: pointer };
      const found = walk(target);
      if (found) return found;
    }
    for (const c of children(s, pointer)) {
      const found = walk(c.pointer);
      if (found) return found;
    }
    walking.delete(pointer);
    done.add(pointer);
    return undefined;
  };
  return walk('#');
}

/** Levels of nesting of the instances the schema describes (it has no recursion). */
function nesting(root: Schema, nodes: Map<string, Schema>): number {
  const memo = new Map<string, number>();
  const depth = (pointer: string): number => {
    const known = memo.get(pointer);
    if (known !== undefined) return known;
    const s = nodes.get(pointer);
    let d = 0;
    if (s) {
      if (typeof s.$ref === 'string') d = depth(resolve(root, s.$ref)!.pointer);
      for (const c of children(s, pointer)) if (!c.definition) d = Math.max(d, (c.nests ? 1 : 0) + depth(c.pointer));
    }
    memo.set(pointer, d);
    return d;
  };
  return depth('#');
}
