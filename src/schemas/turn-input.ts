/**
 * The input of one chat turn. Server commands, URLs and credentials are worker-side config and are
 * deliberately absent: everything here is recorded in workflow history. The client and the turn's
 * start (a local activity) validate it here; the workflow imports only its types.
 */
import { z } from 'zod';
import type { ContentBlockParam } from '../core/contracts';
import { MAX_CONTEXT_BYTES, MAX_MODEL_LENGTH, MAX_TOOLS_PER_REQUEST } from '../core/input-limits';
import { issueMessage } from './issue-problems';
import { ServerToolsSchema } from './server-tools';
import { OutputSpecSchema } from './output-spec';
import { CacheControlsSchema, EffortSchema, legacySamplingFields, StopSequencesSchema, ToolChoiceSchema, UserIdSchema } from './request-controls';

/** Model ids as the Messages API (and Bedrock's, Vertex's) name them; the id is a search attribute too. */
const ModelSchema = z
  .string()
  .min(1)
  .max(MAX_MODEL_LENGTH, `at most ${MAX_MODEL_LENGTH} characters`)
  .regex(/^[A-Za-z0-9._:@/-]+$/, 'a model id: A-Z a-z 0-9 . _ : @ / - only');

/** Server names and tool patterns are shown in the turn's details in the Web UI: bounded. */
const NameSchema = z.string().min(1).max(200, 'at most 200 characters');
const NAMES_MAX = 200;

/** Any JSON value: a context's values. Recursive, so the OpenAPI document names it as a component (src/serve/serve-app.ts). */
export const JsonValueSchema = z.json();

/** A key of a turn's context: what a `${context.key}` template names. */
export const ContextKeySchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'context keys are 1-64 characters of A-Z a-z 0-9 _ -');

/**
 * A turn's context: a JSON object of non-secret values (tenant, user, conversation id) for its tools,
 * never sent to Claude. Keys are what `${context.key}` templates can name; it is recorded in history.
 */
const ContextSchema = z
  .record(ContextKeySchema, JsonValueSchema)
  .refine((c) => new TextEncoder().encode(JSON.stringify(c)).length <= MAX_CONTEXT_BYTES, `at most ${MAX_CONTEXT_BYTES} bytes of JSON`);

/** A content block of a prior message: any object with a string `type`, passed to Claude unchanged. */
const ContentBlockParamSchema = z.custom<ContentBlockParam>(
  (block) => typeof block === 'object' && block !== null && 'type' in block && typeof block.type === 'string',
  'a content block must be an object with a string "type"',
);

/** A prior message, as the Messages API takes it (`MessageParam`). */
const MessageParamSchema = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ContentBlockParamSchema)]),
});

/** The schema declares no defaults: `resolveTurn` (src/core/resolve-turn.ts) applies them, in the workflow. */
export const ChatTurnInputSchema = z
  .object({
    /** The user's question for this turn. */
    question: z.string().trim().min(1, 'question must not be empty'),
    /** Prior conversation (`result.messages` of the previous turn), sent to Claude before the question. */
    history: z.array(MessageParamSchema).optional(),
    /** System prompt. */
    system: z.string().optional(),
    /** Configured MCP server and tool module names to use; default all (or the toolset's). */
    servers: z.array(NameSchema).max(NAMES_MAX).optional(),
    /** A tool set of the worker's config (`toolsets`): its servers and allow/deny lists; `servers` and `tools` narrow it further. */
    toolset: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a toolset name: 1-64 characters of A-Z a-z 0-9 _ -').optional(),
    /**
     * Non-secret values for the turn's tools (tenant, user, conversation id): a code tool's
     * `ctx.context`, an MCP server's `inject` templates (`${context.tenant}`). Never sent to Claude;
     * recorded in the turn's history, so secrets do not belong here.
     */
    context: ContextSchema.optional(),
    /**
     * Claude's own tools, run by the API: `web_search`, `web_fetch`, `code_execution`, each `true`,
     * its options, or `false` (off, over the worker's or the toolset's). See docs/tools.md.
     */
    serverTools: ServerToolsSchema.optional(),
    /**
     * Tools beyond `maxToolsPerRequest`: sent deferred with a tool search tool Claude finds them
     * with (`auto`: regex, `regex`, `bm25`), or dropped (`off`). @default the worker's, else "auto"
     */
    toolSearch: z.enum(['auto', 'regex', 'bm25', 'off']).optional(),
    /** Tools always loaded up front, before the others (`server__tool`, bare name or `server__*`). */
    alwaysLoad: z.array(NameSchema).max(NAMES_MAX).optional(),
    /** Tool allow/deny lists by `server__tool`, bare tool name, or `server__*`. */
    tools: z
      .object({ allow: z.array(NameSchema).max(NAMES_MAX).optional(), deny: z.array(NameSchema).max(NAMES_MAX).optional() })
      .strict()
      .optional(),
    /** Claude model id. @default "claude-sonnet-4-6" */
    model: ModelSchema.optional(),
    /** Claude calls in the tool loop (the formatter not counted). @default 5 */
    maxSteps: z.number().int().min(1).max(100).optional(),
    /** Tool calls in the turn. */
    maxToolCalls: z.number().int().min(1).optional(),
    /** Token budget for the whole turn: every input token (cached or not) and output token of every call; checked after each tool round. */
    maxTokens: z.number().int().min(1).optional(),
    /** max_tokens of each Claude call. @default 4096 */
    maxTokensPerCall: z.number().int().min(1).max(128_000).optional(),
    /** Run the forced response formatter at the end. @default true */
    format: z.boolean().optional(),
    /**
     * `native`: loop until Claude stops calling tools; `gather-then-format`: a gathering loop that
     * goes on only while Claude writes NEED MORE DATA (docs/tool-loop.md).
     */
    loopPolicy: z.enum(['native', 'gather-then-format']).optional(),
    /** Tools loaded up front per Claude request after allow/deny (the rest: `toolSearch`). @default the worker's `claude.maxToolsPerRequest`, else 15 */
    maxToolsPerRequest: z.number().int().min(1).max(MAX_TOOLS_PER_REQUEST).optional(),
    /**
     * Stream the turn as it is written (`subscribe`): Claude's text, tool calls, approvals and the
     * answer. `{ reasoning: true }` streams thinking too. Off, a turn writes exactly what it did
     * without streaming. @default false
     */
    stream: z.union([z.boolean(), z.object({ reasoning: z.boolean().optional() }).strict()]).optional(),
    /**
     * Every Claude call of the turn (the loop's and the formatter's) goes through Anthropic's
     * Message Batches API: half the price, answered within 24 h, and the turn waits without holding
     * a worker. Such a turn does not stream. `deadlineMs`: a request not answered in this time is
     * sent once more in a new Message Batch, then fails the turn. @default deadlineMs 86400000 (24 h)
     */
    messageBatches: z.object({ deadlineMs: z.number().int().min(1000).optional() }).strict().optional(),
    /** Extended thinking budget; when set, thinking blocks are kept and sent back unchanged. */
    thinking: z.object({ budgetTokens: z.number().int().min(1024) }).strict().optional(),
    /** How prior history is compacted when the conversation does not fit the model's context window. */
    compaction: z
      .object({
        /** Turns at the end of the prior history that are compacted last. @default 2 */
        keepRecentTurns: z.number().int().min(0).optional(),
        /** Replace older tool results with a marker before dropping turns. @default true */
        replaceToolResults: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /**
     * Tool calls that wait for a person's approval before they run, on top of those the worker's
     * config names (a turn can add requirements, never remove them).
     */
    approval: z
      .object({
        /** `server__tool`, bare tool name, or `server__*`. */
        tools: z.array(NameSchema).min(1).max(NAMES_MAX),
        /** Without a decision in this time the call is denied. */
        timeoutMs: z.number().int().min(1).optional(),
      })
      .strict()
      .optional(),
    /**
     * The answer's JSON shape: the turn ends in a JSON object matching `schema` (the result's
     * `output`) instead of the response formatter's answer (docs/structured-output.md).
     */
    output: OutputSpecSchema.optional(),
    /** How much the model puts into its answers (`output_config.effort`): low, medium, high, xhigh, max. @default the worker's, else the API's */
    effort: EffortSchema.optional(),
    /** Strings that end a loop call where Claude writes them; the turn then stops with `stop_sequence`. @default the worker's */
    stopSequences: StopSequencesSchema.optional(),
    /** The loop's `tool_choice`: `auto`, `any`, `none` or a `server__tool`, for its first call (or `on: "every"` call). @default the worker's */
    toolChoice: ToolChoiceSchema.optional(),
    /** The prompt cache's lifetime: `{ ttl: "5m" | "1h", conversationTtl? }`. @default the worker's, else 5m */
    cache: CacheControlsSchema.optional(),
    /** The end user's opaque id, sent as `metadata.user_id`; `serve` sets it from its caller. */
    userId: UserIdSchema.optional(),
    ...legacySamplingFields,
  })
  .strict();

/** What callers pass (defaults optional); `resolveTurn` gives the workflow's view. */
export type ChatTurnInput = z.input<typeof ChatTurnInputSchema>;

export class ChatTurnInputError extends Error {
  override name = 'ChatTurnInputError';
  constructor(readonly problems: string[]) {
    super(`invalid chat turn input: ${problems.join('; ')}`);
  }
}

/**
 * Checks a turn's input against its schema: the input with `question` trimmed, or an error naming
 * every bad field. The client checks before it starts a turn; the turn's start checks again, since
 * a turn can be started without the client.
 */
export function parseChatTurnInput(input: unknown): ChatTurnInput {
  const parsed = ChatTurnInputSchema.safeParse(input);
  if (!parsed.success) throw new ChatTurnInputError(turnInputProblems(parsed.error));
  return parsed.data;
}

/** Each problem of a turn's input as `field.path: message`. */
export function turnInputProblems(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${issueMessage(i)}`);
}
