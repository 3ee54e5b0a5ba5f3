/**
 * A tool module's `tools` export read into the one form the worker runs: {@link defineTool} results
 * (an array), or a record name → tool in the AI SDK's `tool()` shape, so tools written for the `ai`
 * package load unchanged. Input schemas of every kind (zod 3, zod 4, another Standard Schema, the AI
 * SDK's `jsonSchema()`, a plain JSON Schema) are read with the AI SDK's own `asSchema`, or checked
 * with ajv when they are plain JSON Schema.
 *
 * What a durable call honours of an AI SDK tool: `description`, `inputSchema`, `inputExamples`
 * (added to the description), `execute` (an async iterable's last value is the output),
 * `toModelOutput` (text, JSON, errors, text and image content), `needsApproval` (a function counts
 * as `true`: approval is decided before the call, from the tool alone), `onInputStart` and
 * `onInputAvailable` (called before `execute`). Not honoured, and said when a tool has them:
 * `onInputDelta` (the input is whole when the call starts), `strict`, `providerOptions`, and the
 * conversation in `messages` (the call runs apart from it: `messages` is empty). A provider-defined
 * tool, or one without `execute`, is left out with the reason.
 */
import { asSchema } from '@ai-sdk/provider-utils';
import type { ArgumentValidator } from '../mcp/argument-validation';
import type { JsonSchemaObject, ToolApproval } from '../core/contracts';
import type { McpCallResult } from '../mcp/result-conversion';
import { CODE_TOOL, type ToolContext, type ToolDefinition } from './define-tool';
import { mcpResultOf, modelOutputResult } from './tool-output';
import { isRecord } from '../core/is-record';

/** A tool's input checked: the value to call it with (parsed by its schema), or every problem. */
export type InputCheck = { ok: true; value: unknown } | { ok: false; problems: string[] };

/** One tool written in code, as the worker runs it. */
export interface CodeTool {
  /** Its own name (Claude sees `<module>__<name>`). */
  name: string;
  description?: string;
  /** Its input's JSON Schema as the tool states it (src/mcp/claude-tool-schema.ts makes Claude's form). */
  inputSchema: JsonSchemaObject;
  /** Checks (and parses) an input before the call. */
  check(input: unknown): Promise<InputCheck>;
  /** Runs it: the result as an MCP tool result. Throws what `execute` throws. */
  run(input: unknown, ctx: ToolContext): Promise<McpCallResult>;
  /** The tool asks for a person's approval of each call. */
  approval?: ToolApproval;
  /** What of its definition a durable call does not honour (said once when it loads). */
  notHonoured: string[];
}

/** A module's tools, and the problem with each entry that could not be read. */
export interface ReadTools {
  tools: CodeTool[];
  problems: string[];
}

type Issue = { path?: readonly (PropertyKey | { key: PropertyKey })[]; message: string };

/** Problems of a failed Standard Schema / zod validation, one line each: `path: message`. */
function problemsOf(error: unknown): string[] {
  const e = error as { issues?: Issue[]; cause?: unknown; message?: string } | undefined;
  const cause = e?.cause as { issues?: Issue[] } | Issue[] | undefined;
  const issues = e?.issues ?? (Array.isArray(cause) ? cause : cause?.issues);
  if (!issues?.length) return [e?.message ?? String(error)];
  return issues.map((i) => {
    const path = (i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
    return `${path || '(arguments)'}: ${i.message}`;
  });
}

/** A plain JSON Schema: not a Standard Schema, not the AI SDK's `jsonSchema()`, not a function. */
function isPlainJsonSchema(schema: unknown): schema is Record<string, unknown> {
  return isRecord(schema) && !('~standard' in schema) && !(Symbol.for('vercel.ai.schema') in schema);
}

/** The schema's JSON Schema and its check. Throws when the schema cannot be read. */
function readSchema(schema: unknown, validator: ArgumentValidator): Pick<CodeTool, 'inputSchema' | 'check'> {
  if (isPlainJsonSchema(schema)) {
    const json = schema as JsonSchemaObject;
    return {
      inputSchema: json,
      check: async (input) => {
        const args = isRecord(input) ? input : {};
        const result = validator.check(json, args);
        return result.ok ? { ok: true, value: args } : { ok: false, problems: result.problems };
      },
    };
  }
  const read = asSchema(schema as Parameters<typeof asSchema>[0]);
  const { $schema: _dialect, ...json } = (read.jsonSchema ?? {}) as Record<string, unknown>;
  return {
    inputSchema: json as JsonSchemaObject,
    check: async (input) => {
      if (!read.validate) return { ok: true, value: input };
      const result = await read.validate(input);
      return result.success ? { ok: true, value: result.value } : { ok: false, problems: problemsOf(result.error) };
    },
  };
}

function approvalOf(option: unknown): ToolApproval | undefined {
  if (option === true || typeof option === 'function') return {};
  if (isRecord(option) && typeof option.timeoutMs === 'number') return { timeoutMs: option.timeoutMs };
  if (isRecord(option)) return {};
  return undefined;
}

/** Reads one {@link defineTool} result. */
function definedTool(def: ToolDefinition, validator: ArgumentValidator): CodeTool {
  const approval = approvalOf(def.approval);
  return {
    name: def.name,
    ...(def.description !== undefined ? { description: def.description } : {}),
    ...readSchema(def.inputSchema, validator),
    run: async (input, ctx) => mcpResultOf(await def.execute(input as never, ctx)),
    ...(approval ? { approval } : {}),
    notHonoured: [],
  };
}

/** An AI SDK `tool()`, loosely: the fields read here. */
interface AiSdkTool {
  type?: string;
  description?: string;
  inputSchema?: unknown;
  /** AI SDK 4's name for `inputSchema`. */
  parameters?: unknown;
  inputExamples?: { input: unknown }[];
  needsApproval?: unknown;
  strict?: unknown;
  providerOptions?: unknown;
  onInputStart?: (options: unknown) => unknown;
  onInputDelta?: unknown;
  onInputAvailable?: (options: unknown) => unknown;
  execute?: (input: unknown, options: unknown) => unknown;
  toModelOutput?: (options: unknown) => unknown;
}

/** The last value of an async iterable (the AI SDK's final output of a streaming tool), or the value. */
async function finalOutput(value: unknown): Promise<unknown> {
  if (value && typeof value === 'object' && Symbol.asyncIterator in value) {
    let last: unknown;
    for await (const item of value as AsyncIterable<unknown>) last = item;
    return last;
  }
  return value;
}

/** Reads one AI SDK tool named `name`; a string when it cannot run here. */
function aiSdkTool(name: string, t: AiSdkTool, validator: ArgumentValidator): CodeTool | string {
  if (t.type === 'provider' || t.type === 'provider-defined') return `${name}: a provider-defined tool runs at the model's provider, not in the worker`;
  if (typeof t.execute !== 'function') return `${name}: has no execute function`;
  const execute = t.execute;
  const schema = readSchema(t.inputSchema ?? t.parameters ?? { type: 'object', properties: {} }, validator);
  const examples = (t.inputExamples ?? []).map((e) => JSON.stringify(e.input));
  const description = [t.description, examples.length ? `Examples of input:\n${examples.join('\n')}` : undefined].filter(Boolean).join('\n\n');
  const notHonoured = [
    ...(t.onInputDelta ? ['onInputDelta (the input is whole when the call starts)'] : []),
    ...(t.strict !== undefined ? ['strict'] : []),
    ...(t.providerOptions !== undefined ? ['providerOptions'] : []),
    ...(typeof t.needsApproval === 'function' ? ['needsApproval as a function (every call waits for approval)'] : []),
  ];
  const approval = approvalOf(t.needsApproval);
  return {
    name,
    ...(description ? { description } : {}),
    ...schema,
    run: async (input, ctx) => {
      const options = { toolCallId: ctx.toolCallId, messages: [], abortSignal: ctx.abortSignal, experimental_context: ctx.context };
      await t.onInputStart?.(options);
      await t.onInputAvailable?.({ ...options, input });
      const output = await finalOutput(await execute(input, options));
      if (t.toModelOutput) return modelOutputResult(await t.toModelOutput({ toolCallId: ctx.toolCallId, input, output }));
      return mcpResultOf(typeof output === 'string' ? output : (output ?? null));
    },
    ...(approval ? { approval } : {}),
    notHonoured,
  };
}

/** True for a {@link defineTool} result, or an object of the same shape (a tool module may build its own). */
function isDefinedTool(v: unknown): v is ToolDefinition {
  return isRecord(v) && (CODE_TOOL in v || (typeof v.name === 'string' && typeof v.execute === 'function'));
}

/**
 * The tools of a module's `tools` export (see the file comment); each entry that cannot be read is a
 * problem, and the others stay.
 */
export function readCodeTools(exported: unknown, validator: ArgumentValidator): ReadTools {
  const tools: CodeTool[] = [];
  const problems: string[] = [];
  const add = (label: string, make: () => CodeTool | string): void => {
    try {
      const tool = make();
      if (typeof tool === 'string') problems.push(tool);
      else if (tools.some((t) => t.name === tool.name)) problems.push(`${label}: a second tool named ${tool.name}`);
      else tools.push(tool);
    } catch (err) {
      problems.push(`${label}: ${(err as Error).message}`);
    }
  };
  if (Array.isArray(exported)) {
    exported.forEach((entry, i) => {
      const label = isRecord(entry) && typeof entry.name === 'string' ? entry.name : `tools[${i}]`;
      add(label, () => (isDefinedTool(entry) ? definedTool(entry, validator) : `${label}: not a tool (make it with defineTool from mcp-turns/tools)`));
    });
  } else if (isRecord(exported)) {
    for (const [name, entry] of Object.entries(exported)) {
      add(name, () => {
        if (!isRecord(entry)) return `${name}: not a tool`;
        return isDefinedTool(entry) && CODE_TOOL in entry ? definedTool({ ...entry, name }, validator) : aiSdkTool(name, entry as AiSdkTool, validator);
      });
    }
  } else {
    problems.push('exports no tools (export const tools = [defineTool(…)], or a record of AI SDK tools)');
  }
  return { tools, problems };
}
