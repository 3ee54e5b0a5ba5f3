/**
 * The smallest instance of a JSON schema, what the stub answers an output request with when its
 * scenario scripts no `output`: an object with its required properties only, a string "" (or a
 * value of its `format`), a number or integer 0, a boolean false, null, an array [] (one item with
 * `minItems: 1`), the first value of an `enum` or the `const`. `$ref` is followed (within the
 * schema), `anyOf` takes its first branch, `allOf` merges its branches' objects, a `type` list its
 * first type. A schema it cannot make sense of (or nested deeper than it follows) gives null.
 */
import { isRecord } from '../core/is-record';

type Schema = Record<string, unknown>;

/** A value of each string format structured outputs take. */
const FORMAT_SAMPLES: Record<string, string> = {
  'date-time': '1970-01-01T00:00:00Z',
  time: '00:00:00Z',
  date: '1970-01-01',
  duration: 'P0D',
  email: 'a@example.com',
  hostname: 'example.com',
  uri: 'https://example.com',
  ipv4: '0.0.0.0',
  ipv6: '::',
  uuid: '00000000-0000-0000-0000-000000000000',
};

/** How deep it follows nested schemas and `$ref`s. */
const MAX_DEPTH = 64;

function resolveRef(root: Schema, ref: string): unknown {
  if (ref !== '#' && !ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref === '#' ? [] : ref.slice(2).split('/')) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = Array.isArray(node) ? node[Number(segment)] : isRecord(node) ? node[segment] : undefined;
  }
  return node;
}

export function minimalInstance(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!isRecord(schema) || !isRecord(root) || depth > MAX_DEPTH) return null;
  const below = (s: unknown): unknown => minimalInstance(s, root, depth + 1);
  if (typeof schema.$ref === 'string') return below(resolveRef(root, schema.$ref));
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.anyOf) && schema.anyOf.length) return below(schema.anyOf[0]);
  if (Array.isArray(schema.allOf) && schema.allOf.length) {
    const parts = schema.allOf.map(below);
    return parts.every(isRecord) ? Object.assign({}, ...parts) : parts[0];
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? (isRecord(schema.properties) ? 'object' : undefined));
  switch (type) {
    case 'object': {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as unknown[]).filter((k): k is string => typeof k === 'string') : [];
      return Object.fromEntries(required.map((k) => [k, below(properties[k])]));
    }
    case 'string':
      return FORMAT_SAMPLES[schema.format as string] ?? '';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return typeof schema.minItems === 'number' && schema.minItems >= 1 ? [below(schema.items)] : [];
    default:
      return null;
  }
}
