/**
 * The 2026-07-28 revision's rule for `x-mcp-header` (SEP-2243). Over streamable HTTP a client copies
 * a tool's annotated arguments into `Mcp-Param-<Name>` headers; the SDK does this from the listed
 * definition that a call passes. A client MUST leave out a tool whose annotations break the rule.
 * The SDK applies the rule only in its own `listTools()`, which the worker does not use (see
 * server-connection.ts), and does not export it. The checks below are the same as the SDK's.
 */
import { isRecord } from '../core/is-record';

/** RFC 9110 `token`: the characters a header name may hold. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The property types a header may carry (`number` is excluded by the revision). */
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);
/** Keywords whose subschemas cannot be reached through `properties` alone; an annotation there is invalid. */
const UNREACHABLE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
];
/** Those of them whose value maps names to subschemas (the others hold one subschema or a list). */
const SCHEMA_MAPS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/**
 * Why a tool's `x-mcp-header` annotations break the rule, or undefined when they keep it (or when
 * it has none). Each annotation must be a non-empty RFC 9110 token and unique across the tool,
 * ignoring case. It must sit on a `string`, `integer` or `boolean` property that is reached from
 * the root through `properties` only.
 */
export function invalidParamHeaders(inputSchema: unknown): string | undefined {
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isRecord(node)) return undefined;
    const where = path.join('.') || 'the root';
    if ('x-mcp-header' in node) {
      const name = node['x-mcp-header'];
      if (!reachable || !path.length)
        return `x-mcp-header on ${where}: only a property reached through properties alone may carry one`;
      if (typeof name !== 'string' || !TOKEN.test(name))
        return `x-mcp-header ${JSON.stringify(name)} on ${where} is not a valid header name`;
      if (typeof node.type !== 'string' || !HEADER_TYPES.has(node.type)) {
        return `x-mcp-header on ${where}, a ${JSON.stringify(node.type ?? 'untyped')} property: only string, integer and boolean properties may carry one`;
      }
      const other = seen.get(name.toLowerCase());
      if (other !== undefined)
        return `x-mcp-header ${name} on ${where} repeats ${other} (header names ignore case)`;
      seen.set(name.toLowerCase(), name);
    }
    const children: Array<[unknown, string, boolean]> = isRecord(node.properties)
      ? Object.entries(node.properties).map(([key, child]) => [child, key, reachable])
      : [];
    for (const keyword of UNREACHABLE) {
      const sub = node[keyword];
      const branches = Array.isArray(sub)
        ? sub
        : SCHEMA_MAPS.has(keyword) && isRecord(sub)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) children.push([branch, `<${keyword}>`, false]);
    }
    for (const [child, key, childReachable] of children) {
      const fault = visit(child, [...path, key], childReachable);
      if (fault) return fault;
    }
    return undefined;
  };
  return visit(inputSchema, [], true);
}
