/**
 * A turn's `output`: the JSON shape its answer takes. With it, the turn's last call writes a JSON
 * object instead of the response formatter's answer:
 *
 * - `structured`: with structured outputs (`output_config.format`), the caller's schema rewritten
 *   to what the API accepts (src/claude/output-format.ts): constrained decoding, so it parses.
 * - `instructed`: where structured outputs cannot be used (a model without them, a schema they
 *   cannot express, a request the API refuses with them), the schema goes in the instructions.
 *
 * Either way the answer is validated against the schema as the caller wrote it; an answer that does
 * not validate gets one repair call, and if that fails too the turn ends with `invalid_output`.
 */

/** The largest `output.schema` (its JSON, in UTF-8 bytes): it is recorded in the turn's history. */
export const MAX_OUTPUT_SCHEMA_BYTES = 64 * 1024;

export interface OutputSpec {
  /** The answer's JSON Schema: an object schema, JSON Schema 2020-12. */
  schema: Record<string, unknown>;
  /** What the answer is, for the instructions of the `instructed` path. */
  name?: string;
  description?: string;
}

/** How the answer was written (see the file comment). */
export type OutputPath = 'structured' | 'instructed';

/** How a turn's `output` came about: the result's `outputReport`. */
export interface OutputReport {
  path: OutputPath;
  /** Claude calls made for it: 1, or 2 with the repair. */
  calls: number;
  /** The first answer did not validate and the repair's did. */
  repaired: boolean;
  /** Why the last answer does not validate (the turn then stops with `invalid_output`). */
  problems?: string[];
  /** Claude refused to write it (the turn then stops with `refusal`). */
  refused?: true;
  /** Why the path was taken, what the repair was for. */
  notes: string[];
}

/**
 * The user text that asks for the answer, after the turn's transcript (both paths): the stub model
 * recognises an answer's request by it.
 */
export const OUTPUT_ASK = 'Now give your final answer to my question as one JSON object that follows the schema.';

/** Begins the user text of the repair call, which lists the problems of the answer before it. */
export const OUTPUT_REPAIR_ASK = 'That JSON does not match the schema:';
