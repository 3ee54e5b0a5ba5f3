/**
 * The config file's optional top-level `claude:` section: worker-side settings for Claude calls.
 * Nothing here is recorded in workflow history, and the API key is never part of it (it comes from
 * ANTHROPIC_API_KEY).
 */
import { z } from 'zod';
import { DEFAULT_MODEL } from '../core/resolve-turn';
import { MAX_TOOLS_PER_REQUEST } from '../core/input-limits';
import { DEFAULT_CLAUDE_ERROR_POLICY, type ClaudeErrorPolicy } from './errors';
import { PricingOverridesSchema } from './pricing';
import { ServerToolsSchema } from '../schemas/server-tools';
import { legacySamplingFields, RequestControlDefaultsSchema } from '../schemas/request-controls';
import { API_MAX_BYTES, API_MAX_REQUESTS, DEFAULT_MESSAGE_BATCH_SETTINGS } from '../core/message-batches';

export const ClaudeConfigSchema = z
  .object({
    /** Model for turns that name none (sent to the workflow with the tool list). @default "claude-sonnet-4-6" */
    model: z.string().min(1).default(DEFAULT_MODEL),
    /** Tools loaded up front per Claude request for turns that set no `maxToolsPerRequest` of their own; the rest are found by tool search (sent to the workflow with the tool list). @default 15 */
    maxToolsPerRequest: z.number().int().min(1).max(MAX_TOOLS_PER_REQUEST).optional(),
    /** How turns that set none offer the tools beyond maxToolsPerRequest: deferred with a tool search tool (auto = regex, regex, bm25), or dropped (off). @default "auto" */
    toolSearch: z.enum(['auto', 'regex', 'bm25', 'off']).optional(),
    /** Tools every turn loads up front, before the others (tool patterns). */
    alwaysLoad: z.array(z.string().min(1)).optional(),
    /** Claude's own tools every turn is offered unless its toolset or its input turns them off (recorded with the tool list). */
    serverTools: ServerToolsSchema.optional(),
    /** `output_config.effort` of turns that set none: low, medium, high, xhigh, max (recorded with the tool list). */
    effort: RequestControlDefaultsSchema.effort,
    /** Stop sequences of turns that set none (recorded with the tool list). */
    stopSequences: RequestControlDefaultsSchema.stopSequences,
    /** The loop's `tool_choice` for turns that set none (recorded with the tool list). */
    toolChoice: RequestControlDefaultsSchema.toolChoice,
    /** The prompt cache's lifetime for turns that set none: `{ ttl: "5m" | "1h", conversationTtl? }` (recorded with the tool list). */
    cache: RequestControlDefaultsSchema.cache,
    ...legacySamplingFields,
    /** Stream responses: heartbeats on every event, and no SDK limit on long non-streamed calls. @default false */
    stream: z.boolean().default(false),
    /** `cache_control` on the last tool, the system prompt and the last user message (each step reads the conversation so far back from the cache). @default true */
    promptCaching: z.boolean().default(true),
    /** Claude calls one worker runs at once, on both queues together (src/claude/call-limiter.ts). @default 10 */
    maxConcurrentCalls: z.number().int().min(1).default(10),
    /** Claude calls started per second across the whole Claude queue (all workers); set, every call runs there (src/core/task-queues.ts). */
    rateLimitPerSecond: z.number().positive().optional(),
    /** Longest `retry-after` honoured before the next attempt. @default 60000 */
    retryAfterCapMs: z.number().int().min(0).default(DEFAULT_CLAUDE_ERROR_POLICY.retryAfterCapMs),
    /** Attempts at a call answered 429 without `retry-after` before the turn fails. @default 3 */
    maxSpendCapAttempts: z.number().int().min(1).default(3),
    /** Wait after a 429 without `retry-after` (spend cap). @default 30000 */
    noRetryAfterDelayMs: z.number().int().min(0).default(DEFAULT_CLAUDE_ERROR_POLICY.noRetryAfterDelayMs),
    /** Price overrides, USD per million tokens, by model id or prefix. */
    pricing: PricingOverridesSchema.optional(),
    /** How turns that use Message Batches (`batch --message-batches`) gather their requests and wait. */
    messageBatches: z
      .object({
        /** A Message Batch is sent with this many requests… @default 5000 */
        maxRequests: z.number().int().min(1).max(API_MAX_REQUESTS).default(DEFAULT_MESSAGE_BATCH_SETTINGS.maxRequests),
        /** …or once its first request has waited this long. @default 30000 */
        maxWaitMs: z.number().int().min(0).default(DEFAULT_MESSAGE_BATCH_SETTINGS.maxWaitMs),
        /** Request bytes in one Message Batch. @default 268435456 (the API's 256 MB) */
        maxBytes: z.number().int().min(1024).max(API_MAX_BYTES).default(DEFAULT_MESSAGE_BATCH_SETTINGS.maxBytes),
        /** First poll of a sent batch; each next one waits 1.5× longer… @default 10000 */
        pollInitialMs: z.number().int().min(10).default(DEFAULT_MESSAGE_BATCH_SETTINGS.pollInitialMs),
        /** …up to this. @default 60000 */
        pollMaxMs: z.number().int().min(10).default(DEFAULT_MESSAGE_BATCH_SETTINGS.pollMaxMs),
        /** The collector workflow ends after this long without requests. @default 600000 */
        idleMs: z.number().int().min(1000).default(DEFAULT_MESSAGE_BATCH_SETTINGS.idleMs),
      })
      .strict()
      .default(DEFAULT_MESSAGE_BATCH_SETTINGS),
  })
  .strict();

/** The `claude:` section with defaults applied. */
export type ClaudeConfig = z.output<typeof ClaudeConfigSchema>;
/** The `claude:` section as written in the file. */
export type ClaudeConfigInput = z.input<typeof ClaudeConfigSchema>;

/** A bad `claude:` section; `problems` has one line per issue, each starting with its path. */
export class ClaudeConfigError extends Error {
  override name = 'ClaudeConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid claude config: ${problems.join('; ')}`);
  }
}

/**
 * Validates the `claude:` section and applies defaults. `undefined` or `null` (an empty `claude:`
 * in YAML) gives the defaults. Throws {@link ClaudeConfigError} naming every bad key as
 * `claude.<path>`.
 */
export function resolveClaudeConfig(raw: unknown): ClaudeConfig {
  const parsed = ClaudeConfigSchema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  throw new ClaudeConfigError(describeConfigIssues(parsed.error, 'claude'));
}

/** One line per issue; unknown keys are listed by their own path. */
export function describeConfigIssues(error: z.ZodError, prefix: string): string[] {
  const at = (path: PropertyKey[]): string => [prefix, ...path.map(String)].filter(Boolean).join('.');
  return error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => `${at([...i.path, k])}: unknown key`)
      : [`${at(i.path)}: ${i.message}`],
  );
}

/** The retry delays of a config, for {@link toClaudeFailure}. */
export function claudeErrorPolicy(config: ClaudeConfig): ClaudeErrorPolicy {
  return { retryAfterCapMs: config.retryAfterCapMs, noRetryAfterDelayMs: config.noRetryAfterDelayMs };
}
