/**
 * A turn's output schema as structured outputs take it (`output_config.format`), made with the
 * SDK's own `transformJSONSchema`: every object closed (`additionalProperties: false`), keywords
 * the API does not take moved into descriptions (the answer is still checked against them, by
 * src/claude/output-validation.ts). A schema the API cannot express (one that refers to itself, one
 * the SDK cannot transform) goes the `instructed` way instead, with the reason.
 */
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import type { OutputSpec } from '../core/output-spec';
import { isRecord } from '../core/is-record';

export type StructuredFormat = { ok: true; format: { type: 'json_schema'; schema: Record<string, unknown> } } | { ok: false; reason: string };

/** The `output_config.format` for `spec`, or why structured outputs cannot express it. */
export function structuredFormatOf(spec: OutputSpec): StructuredFormat {
  const { $id: _id, ...schema } = withDefs(spec.schema);
  const cycle = recursiveRef(schema);
  if (cycle) return { ok: false, reason: `the schema refers to itself (${cycle}), which structured outputs do not take` };
  try {
    return { ok: true, format: { type: 'json_schema', schema: transformJSONSchema(schema) } };
  } catch (err) {
    return { ok: false, reason: `structured outputs cannot express the schema: ${(err as Error).message}` };
  }
}

/**
 * A draft-07 schema's `definitions` as `$defs`, its references to them rewritten: the SDK's transform
 * keeps only `$defs`, and the API resolves only references into the document.
 */
function withDefs(schema: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(schema.definitions) || schema.$defs !== undefined) return schema;
  const { definitions, ...rest } = schema;
  const text = JSON.stringify({ ...rest, $defs: definitions }).replace(/"#\/definitions\//g, '"#/$defs/');
  return JSON.parse(text) as Record<string, unknown>;
}

/** A local `$ref` that leads back to where it is (directly or through other definitions), or undefined. */
function recursiveRef(root: Record<string, unknown>): string | undefined {
  const resolve = (ref: string): unknown => {
    if (ref === '#') return root;
    if (!ref.startsWith('#/')) return undefined;
    let at: unknown = root;
    for (const raw of ref.slice(2).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      at = isRecord(at) ? at[key] : undefined;
    }
    return at;
  };
  const walk = (node: unknown, open: Set<unknown>): string | undefined => {
    if (Array.isArray(node)) {
      for (const item of node) {
        const found = walk(item, open);
        if (found) return found;
      }
      return undefined;
    }
    if (!isRecord(node)) return undefined;
    if (open.has(node)) return 'a cycle';
    open.add(node);
    try {
      if (typeof node.$ref === 'string') {
        const target = resolve(node.$ref);
        if (target !== undefined && open.has(target)) return node.$ref;
        if (target !== undefined) {
          const found = walk(target, open);
          if (found) return found;
        }
      }
      for (const [key, value] of Object.entries(node)) {
        if (key === '$defs' || key === 'definitions') continue; // reached through their $refs
        const found = walk(value, open);
        if (found) return found;
      }
      return undefined;
    } finally {
      open.delete(node);
    }
  };
  return walk(root, new Set());
}
