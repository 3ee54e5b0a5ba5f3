/**
 * The scenario file that scripts the stub model. The zod schema is the reference for every field.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SERVER_TOOL_NAMES } from './server-tools';

/** A citation of a web search result; the stub adds its `encrypted_index`. */
const CitationSchema = z
  .object({
    type: z.literal('web_search_result_location'),
    url: z.string(),
    title: z.string().nullable(),
    cited_text: z.string(),
  })
  .strict();

/** One result of a web search; the stub adds its `encrypted_content`. */
const WebSearchResultSchema = z
  .object({
    type: z.literal('web_search_result').optional(),
    url: z.string(),
    title: z.string(),
    /** Default: null. */
    page_age: z.string().nullable().optional(),
  })
  .strict();

/** The id of the `server_tool_use` block a server result answers; default: the first call it fits that has no result yet. */
const ToolUseId = z.string().regex(/^srvtoolu_[a-zA-Z0-9_]+$/).optional();

/** A server result block whose `content` is written as the API sends it. */
const resultBlock = <T extends string>(type: T) =>
  z.object({ type: z.literal(type), tool_use_id: ToolUseId, content: z.record(z.string(), z.unknown()) }).strict();

const BlockSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('text'),
      text: z.string(),
      /** Web search citations; the stub signs each (`encrypted_index`) and refuses an edited one. */
      citations: z.array(CitationSchema).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('tool_use'),
      name: z.string(),
      input: z.record(z.string(), z.unknown()),
      /** Fixed id; default: derived from scenario, step, index and question. */
      id: z.string().optional(),
    })
    .strict(),
  /** The stub signs it; a request that sends it back altered is refused. */
  z.object({ type: z.literal('thinking'), thinking: z.string() }).strict(),
  z.object({ type: z.literal('redacted_thinking') }).strict(),
  /** A call of a server tool (the API runs it); the id the stub makes signs the block and its result. */
  z
    .object({
      type: z.literal('server_tool_use'),
      name: z.enum(SERVER_TOOL_NAMES),
      input: z.record(z.string(), z.unknown()),
      /** Fixed id (then not signed); default: `srvtoolu_` and a hash and signatures. */
      id: z.string().regex(/^srvtoolu_[a-zA-Z0-9_]+$/).optional(),
      /** As the API writes it; default `{ type: 'direct' }`. */
      caller: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('web_search_tool_result'),
      tool_use_id: ToolUseId,
      content: z.union([
        z.array(WebSearchResultSchema),
        z.object({ type: z.literal('web_search_tool_result_error'), error_code: z.string() }).strict(),
      ]),
    })
    .strict(),
  resultBlock('web_fetch_tool_result'),
  resultBlock('code_execution_tool_result'),
  resultBlock('bash_code_execution_tool_result'),
  resultBlock('text_editor_code_execution_tool_result'),
  resultBlock('tool_search_tool_result'),
]);

const UsageSchema = z
  .object({
    input_tokens: z.number().int().min(0),
    output_tokens: z.number().int().min(0),
    cache_read_input_tokens: z.number().int().min(0).default(0),
    cache_creation_input_tokens: z.number().int().min(0).default(0),
  })
  .strict();

const StepSchema = z
  .object({
    content: z.array(BlockSchema).min(1),
    /**
     * Default: `tool_use` when the content has a tool_use, else `end_turn`. `pause_turn`: the API paused
     * its server tool loop; the client sends the content back as the last message to continue.
     */
    stopReason: z
      .enum(['end_turn', 'tool_use', 'max_tokens', 'pause_turn', 'refusal', 'model_context_window_exceeded', 'stop_sequence'])
      .optional(),
    usage: UsageSchema.optional(),
    /**
     * A request with a smaller max_tokens gets the content cut at its last tool_use (left with input
     * `{}`), stop `max_tokens`. An output request at this step (no replay: the step must be scripted)
     * gets the first half of its JSON text, stop `max_tokens`.
     */
    minMaxTokens: z.number().int().min(1).optional(),
    /** Milliseconds before answering; default: the scenario's. */
    latencyMs: z.number().int().min(0).optional(),
    /** Milliseconds between two deltas when the request streams; default: the scenario's `streamDelayMs`. */
    streamDelayMs: z.number().int().min(0).optional(),
  })
  .strict();

const FaultSchema = z
  .object({
    step: z.number().int().min(0),
    status: z.number().int().min(400).max(599),
    /** How many matching requests fail; -1 = every one. */
    times: z.number().int().min(-1).default(1),
    retryAfter: z.number().min(0).optional(),
    retryAfterMs: z.number().min(0).optional(),
    shouldRetry: z.boolean().optional(),
    message: z.string().optional(),
    /** Which requests it hits: steps of the loop, the response formatter's calls, or output requests (an answer's JSON). */
    kind: z.enum(['step', 'formatter', 'output']).default('step'),
    /**
     * How a matching request of a Message Batch ends: `errored` (the error `status` gives, as a
     * per-request result) or `expired`. A request to /v1/messages gets `status` either way.
     */
    batchResult: z.enum(['errored', 'expired']).default('errored'),
  })
  .strict();

/**
 * One answer to an output request: an object is written as compact JSON, a string as it is (invalid
 * JSON, or JSON in a ```json fence, to exercise the repair).
 */
const OutputValueSchema = z.union([z.record(z.string(), z.unknown()), z.string()]);

export const ScenarioSchema = z
  .object({
    steps: z.array(StepSchema).min(1),
    /** The response_formatter input; an array gives one per attempt (the last repeats). */
    formatter: z.union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown())).min(1)]).optional(),
    /**
     * The answer to an output request (one with `output_config.format`, or asking with OUTPUT_ASK of
     * src/core/output-spec.ts); an array gives one per attempt (the first call, then each repair; the
     * last repeats). Default: the minimal instance of the request's schema (`{}` on the instructed path).
     */
    output: z.union([OutputValueSchema, z.array(OutputValueSchema).min(1)]).optional(),
    /** Forced tool_choice gets a 400, as some models answer. */
    formatterRefusesForcedTool: z.boolean().default(false),
    /** With tool_choice auto, answer this text instead of calling the formatter. */
    formatterAutoText: z.string().optional(),
    /** Milliseconds before answering, for a step without its own and for the formatter. */
    latencyMs: z.number().int().min(0).default(0),
    /**
     * Milliseconds between two consecutive deltas of a streamed answer (a word of text or thinking, a
     * few characters of a tool_use input's JSON), for a step without its own. 0: the whole answer at once.
     */
    streamDelayMs: z.number().int().min(0).default(0),
    /** `streamDelayMs` for the formatter's answer; default: the scenario's `streamDelayMs`. */
    formatterStreamDelayMs: z.number().int().min(0).optional(),
    /** Estimated input tokens above this → 400 "prompt is too long". */
    contextWindowTokens: z.number().int().min(1).optional(),
    /**
     * Play the scenario once per turn of a conversation: the step is the number of assistant
     * messages after the request's current question (its last user message without a tool_result),
     * and `{{question}}`, tool_use ids and faults key on that question. Default: the step counts
     * every assistant message and the question is the first message.
     */
    perTurn: z.boolean().default(false),
    faults: z.array(FaultSchema).default([]),
  })
  .strict();

export type Scenario = z.input<typeof ScenarioSchema>;
export type ParsedScenario = z.output<typeof ScenarioSchema>;
export type ScenarioStep = z.output<typeof StepSchema>;
export type ScenarioBlock = z.output<typeof BlockSchema>;
export type Fault = z.output<typeof FaultSchema>;

export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

export function parseScenario(raw: unknown, source: string): ParsedScenario {
  const parsed = ScenarioSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new ScenarioError(`${source}: ${problems.join('; ')}`);
}

/** Reads a scenario file (JSON or YAML); errors name the file and the path inside it. */
export function loadScenarioFile(file: string): Scenario {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ScenarioError(`${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(path.extname(file)) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new ScenarioError(`${file}: not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${(err as Error).message}`);
  }
  parseScenario(raw, file);
  return raw as Scenario;
}
