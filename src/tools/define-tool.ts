/**
 * Tools written in code: what a tool module exports (`mcp-turns/tools`). Nothing here loads a worker,
 * Temporal or a schema library: a module of tools imports this and its own schema library only.
 *
 * A tool module exports `tools`: an array of {@link defineTool} results, or a record name → tool in
 * the AI SDK's `tool()` shape (src/tools/code-tool.ts reads both).
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** What a tool's `execute` gets besides its input. */
export interface ToolContext<Context extends Record<string, unknown> = Record<string, unknown>> {
  /** Claude's tool_use id of this call. */
  toolCallId: string;
  /** The turn's workflow id. */
  turnId: string;
  /** The turn's `context` (non-secret values the caller set: tenant, user…); `{}` when none. */
  context: Context;
  /** Aborts when the call is cancelled (the turn was cancelled) or runs past its timeout. */
  abortSignal: AbortSignal;
}

/** A content block of a tool's result, as MCP tools return them. */
export type ToolContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
  | { type: 'resource_link'; uri: string; name?: string; mimeType?: string };

/**
 * What `execute` returns: a string (Claude gets it as text), content blocks or an MCP-style result
 * (`isError: true` tells Claude the tool failed), or any other JSON value (Claude gets its JSON).
 */
export type ToolOutput = string | ToolContentBlock[] | { content: ToolContentBlock[]; isError?: boolean } | JsonValue | undefined;

/** A JSON Schema of the tool's input: an object schema. */
export type JsonObjectSchema = { type: 'object'; properties?: Record<string, unknown>; required?: readonly string[] } & Record<string, unknown>;

/** The input schema: a Standard Schema (zod 3.24+, zod 4, valibot, arktype…) or a JSON Schema. */
export type ToolInputSchema = StandardSchemaV1 | JsonObjectSchema;

/** The input `execute` gets for a schema: the schema's output type, or an object for a JSON Schema. */
export type ToolInput<S extends ToolInputSchema> = S extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<S> : Record<string, unknown>;

/** A tool's calls wait for a person's approval: `true`, or with a timeout after which the call is denied. */
export type ToolApprovalOption = boolean | { timeoutMs?: number };

export interface ToolDefinition<S extends ToolInputSchema = ToolInputSchema> {
  /** Claude sees `<module>__<name>`: 1-64 characters of A-Z a-z 0-9 _ - in all. */
  name: string;
  /** What the tool does, for Claude. */
  description?: string;
  inputSchema: S;
  /**
   * Runs the tool; its input has been checked against `inputSchema` (and parsed by it) first. It
   * returns a {@link ToolOutput}: any value is taken (one that is not text or content is its JSON).
   */
  execute: (input: ToolInput<S>, ctx: ToolContext) => unknown;
  /** Calls wait for a person's approval, on top of what the worker's config says. @default false */
  approval?: ToolApprovalOption;
}

/** Marks a {@link defineTool} result. */
export const CODE_TOOL = Symbol.for('mcp-turns.code-tool');

/** A tool defined with {@link defineTool}. */
export type DefinedTool<S extends ToolInputSchema = ToolInputSchema> = ToolDefinition<S> & { readonly [CODE_TOOL]: true };

/**
 * A tool written in code. Claude sees it as `<module>__<name>`, where the module is the name the
 * worker's config gives it (`toolModules: { crm: "./crm-tools.mjs" }`); each call runs as an activity
 * with that module's policies (approval, retry, timeout).
 */
export function defineTool<S extends ToolInputSchema>(definition: ToolDefinition<S>): DefinedTool<S> {
  return { ...definition, [CODE_TOOL]: true };
}

/**
 * Thrown by `execute` for a failure Claude should see at once, as an `is_error` result, without
 * the retries a thrown error otherwise gets (a customer that does not exist, say).
 */
export class ToolError extends Error {
  override name = 'ToolError';
  /** Lets a worker recognise it across copies of this package. */
  readonly [CODE_TOOL] = 'ToolError';
}
