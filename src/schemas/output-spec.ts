/**
 * A turn's `output`: the JSON Schema its answer must match (src/core/output-spec.ts says how the
 * answer is written). The schema must be an object schema that compiles as JSON Schema 2020-12, so a
 * schema no answer could be checked against is refused before the turn starts, naming the problem.
 */
import { Ajv2020 } from 'ajv/dist/2020';
import { z } from 'zod';
import { MAX_OUTPUT_SCHEMA_BYTES, type OutputSpec } from '../core/output-spec';

const compiler = new Ajv2020({ strict: false, allErrors: false });

/**
 * What the compile said of the schemas checked lately, by their JSON: a batch's lines share one
 * schema, and compiling it once per line would cost seconds for thousands of lines.
 */
const checkedSchemas = new Map<string, string | undefined>();
const CHECKED_SCHEMAS_KEPT = 64;

/** Why `schema` cannot be an answer's schema, or undefined. */
export function outputSchemaProblem(schema: Record<string, unknown>): string | undefined {
  if (schema.type !== 'object') return 'the answer is a JSON object: the schema needs "type": "object" at its root';
  const json = JSON.stringify(schema);
  if (new TextEncoder().encode(json).length > MAX_OUTPUT_SCHEMA_BYTES) return `at most ${MAX_OUTPUT_SCHEMA_BYTES} bytes of JSON`;
  if (checkedSchemas.has(json)) return checkedSchemas.get(json);
  const problem = compileProblem(schema);
  if (checkedSchemas.size >= CHECKED_SCHEMAS_KEPT) checkedSchemas.delete(checkedSchemas.keys().next().value as string);
  checkedSchemas.set(json, problem);
  return problem;
}

function compileProblem(schema: Record<string, unknown>): string | undefined {
  const { $schema: _dialect, $id: _id, ...body } = schema;
  try {
    compiler.compile(body);
    return undefined;
  } catch (err) {
    return `not a valid JSON Schema 2020-12: ${(err as Error).message}`;
  } finally {
    // The compiled function is not kept: only whether it compiles is.
    compiler.removeSchema(body);
  }
}

export const OutputSpecSchema = z
  .object({
    /** The answer's JSON Schema (an object schema); the answer is validated against it as written. */
    schema: z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
      const problem = outputSchemaProblem(schema);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    /** What the answer is (`invoice`), for the instructions where structured outputs cannot be used. */
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, '1-64 characters of A-Z a-z 0-9 _ -').optional(),
    /** What the answer holds, for those instructions too. */
    description: z.string().max(2000, 'at most 2000 characters').optional(),
  })
  .strict() satisfies z.ZodType<OutputSpec>;
