/**
 * Validators of JSON Schemas that others wrote (a tool's input schema, a server's question, a
 * caller's output schema), compiled once per distinct schema: JSON Schema 2020-12 with formats, or
 * draft-07 when the schema's `$schema` names draft-03 to -07 (unless a caller wants 2020-12 only);
 * every problem reported (`allErrors`), lenient on the schema itself (unknown keywords and formats
 * pass). `$id` is dropped (two servers' schemas may claim the same one) and `$schema` once the
 * dialect is picked. The most recent schemas are kept by their JSON, and ajv is told to forget the
 * others, since it keeps every schema it compiled until told so.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** A schema's validator, or why it does not compile. */
export type CompiledSchema = { validate: ValidateFunction } | { error: string };

/** Schemas kept compiled; the oldest beyond these are forgotten. */
const KEPT = 256;

const options = { allErrors: true, strict: false, validateSchema: false } as const;

export class JsonSchemaValidators {
  private readonly ajv2020 = addFormats(new Ajv2020(options));
  private readonly ajv07 = addFormats(new Ajv(options));
  private readonly compiled = new Map<string, { ajv: Ajv; body: object; compiled: CompiledSchema }>();

  /** @param dialects `declared`: draft-07 for a schema that names an older draft; `2020-12`: always that. */
  constructor(private readonly dialects: 'declared' | '2020-12' = 'declared') {}

  /** The validator of `schema` (compiled at its first use), or why it does not compile. */
  of(schema: Record<string, unknown>): CompiledSchema {
    const key = JSON.stringify(schema);
    const known = this.compiled.get(key);
    if (known) return known.compiled;
    const { $schema, $id: _id, ...body } = schema;
    const older = this.dialects === 'declared' && typeof $schema === 'string' && /draft-0[3-7]/.test($schema);
    const ajv = older ? this.ajv07 : this.ajv2020;
    let compiled: CompiledSchema;
    try {
      compiled = { validate: ajv.compile(body) };
    } catch (err) {
      compiled = { error: (err as Error).message };
    }
    if (this.compiled.size >= KEPT) {
      const [oldest, entry] = this.compiled.entries().next().value as [string, { ajv: Ajv; body: object }];
      this.compiled.delete(oldest);
      entry.ajv.removeSchema(entry.body);
    }
    this.compiled.set(key, { ajv, body, compiled });
    return compiled;
  }
}
