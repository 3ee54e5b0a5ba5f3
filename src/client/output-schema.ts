/**
 * A turn's `output` as the client API takes it: the schema as JSON Schema, or as a zod schema, which
 * is turned into JSON Schema 2020-12 (`z.toJSONSchema`) before the turn starts; the result's
 * `output` is then typed as the schema's output. The worker validates the answer against the JSON
 * Schema, so refinements JSON Schema cannot say (`.refine`, transforms) are not checked there:
 * parse `result.output` with the schema where they matter.
 */
import { z } from 'zod';
import type { OutputSpec } from '../core/output-spec';
import type { ChatTurnResult } from '../core/turn-result';

/** An answer's schema: JSON Schema (an object schema) or a zod schema. */
export type OutputSchema = z.ZodType | Record<string, unknown>;

/** `output` as the client API takes it. */
export interface OutputRequest<S extends OutputSchema = OutputSchema> {
  schema: S;
  name?: string;
  description?: string;
}

/** What an answer of schema `S` is: the zod schema's output type, else `unknown`. */
export type OutputOf<S> = S extends z.ZodType ? z.output<S> : unknown;

/** A turn's result whose `output` is typed from the schema it was asked with. */
export type TypedChatTurnResult<T> = Omit<ChatTurnResult, 'output'> & { output?: T };

/** A value with `output` as the client API takes it, where the wire takes JSON Schema. */
export type WithOutputRequest<T extends { output?: OutputSpec }, S extends OutputSchema = OutputSchema> = Omit<T, 'output'> & { output?: OutputRequest<S> };

function isZodSchema(schema: OutputSchema): schema is z.ZodType {
  return schema instanceof z.ZodType;
}

/** The `output` a turn's input carries: a zod schema turned into JSON Schema 2020-12; JSON Schema as given. */
export function outputSpecOf(output: OutputRequest): OutputSpec {
  if (!isZodSchema(output.schema)) return output as OutputSpec;
  const { $schema: _dialect, ...schema } = z.toJSONSchema(output.schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
  return { ...output, schema };
}

/** `value` with its `output` as the wire takes it. */
export function withOutputSpec<T extends { output?: OutputRequest | OutputSpec }>(value: T): Omit<T, 'output'> & { output?: OutputSpec } {
  if (!value.output) return value as Omit<T, 'output'> & { output?: OutputSpec };
  return { ...value, output: outputSpecOf(value.output as OutputRequest) };
}
