/**
 * A turn's `output`: the JSON Schema its answer must match (src/core/output-spec.ts says how the
 * answer is written). The schema must be an object schema that compiles as JSON Schema 2020-12, so a
 * schema no answer could be checked against is refused before the turn starts, naming the problem.
 */
import { Ajv2020 } from 'ajv/dist/2020';
import { z } from 'zod';
import { MAX_OUTPUT_SCHEMA_BYTES, type OutputSpec } from '../core/output-spec';

const compiler = new Ajv2020({ strict: false, allErrors: false });

/** Why `schema` cannot be an answer's schema, or undefined. */
export function outputSchemaProblem(schema: Record<string, unknown>): string | undefined {
  if (schema.type !== 'object') return 'the answer is a JSON object: the schema needs "type": "object" at its root';
  if (new TextEncoder().encode(JSON.stringify(schema)).length > MAX_OUTPUT_SCHEMA_BYTES) return `at most ${MAX_OUTPUT_SCHEMA_BYTES} bytes of JSON`;
  const { $schema: _dialect, $id: _id, ...body } = schema;
  try {
    compiler.compile(body);
  } catch (err) {
    return `not a valid JSON Schema 2020-12: ${(err as Error).message}`;
  }
  return undefined;
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
