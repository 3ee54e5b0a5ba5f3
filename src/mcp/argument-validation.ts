/**
 * Checking Claude's arguments against a tool's `inputSchema` before calling it, so a malformed call
 * costs no server round trip and Claude gets the exact problems back. MCP's default dialect is JSON
 * Schema 2020-12; schemas declaring draft-07 or older are compiled as draft-07.
 */
import type { ValidateFunction } from 'ajv';
import type { JsonSchemaObject } from '../core/contracts';
import { JsonSchemaValidators } from '../schemas/json-schema-validators';

/** The outcome: `ok`, or one line per problem (`/a must be number`). */
export type ArgumentCheck = { ok: true } | { ok: false; problems: string[] };

/** Compiles each schema once (per schema object) and checks arguments against it. */
export class ArgumentValidator {
  // Lenient on the schema itself: servers publish schemas with unknown keywords and formats, and a
  // schema we cannot use must not block the tool (the server validates too).
  private readonly validators = new JsonSchemaValidators();
  private readonly compiled = new WeakMap<object, ValidateFunction | null>();

  constructor(private readonly onUnusableSchema: (error: string) => void = () => undefined) {}

  /** Checks `args` against `schema`; a schema that does not compile accepts everything. */
  check(schema: JsonSchemaObject, args: Record<string, unknown>): ArgumentCheck {
    const validate = this.compile(schema);
    if (!validate || validate(args)) return { ok: true };
    const problems = (validate.errors ?? []).map((e) => {
      const extra =
        e.keyword === 'additionalProperties'
          ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})`
          : '';
      return `${e.instancePath || '(arguments)'} ${e.message ?? 'is invalid'}${extra}`;
    });
    return { ok: false, problems };
  }

  private compile(schema: JsonSchemaObject): ValidateFunction | null {
    const cached = this.compiled.get(schema);
    if (cached !== undefined) return cached;
    const compiled = this.validators.of(schema);
    if ('error' in compiled) this.onUnusableSchema(compiled.error);
    const fn = 'validate' in compiled ? compiled.validate : null;
    this.compiled.set(schema, fn);
    return fn;
  }
}
