/**
 * The worker's config file. Two shapes that users already have are accepted:
 *
 *   - Claude Desktop / Claude Code `.mcp.json`: `{ "mcpServers": { name: { command, args, env } |
 *     { type: "http" | "sse", url, headers } } }`, with mcp-turns' extra keys in camelCase
 *     (allowedTools, excludeTools, timeoutMs, heartbeatTimeoutMs, retry.maximumAttempts, …);
 *   - design note 03's YAML: `mcp_servers: { name: { type: stdio | streamable-http | sse, command,
 *     args, env, url, authorization, allowed_tools, exclude_tools, … } }` in snake_case.
 *
 * Both are validated by the one snake_case schema below (camelCase keys are mapped to it, and error
 * paths mapped back), so the two shapes cannot drift apart. Unknown keys are errors.
 */
import { z } from 'zod';

const RetrySchema = z
  .object({
    maximum_attempts: z.number().int().min(1).max(100).default(3),
    initial_interval_ms: z.number().int().min(1).default(1000),
    backoff_coefficient: z.number().min(1).max(10).default(2),
    maximum_interval_ms: z.number().int().min(1).default(10_000),
  })
  .strict();

const BreakerSchema = z
  .object({
    /** Consecutive transport failures or timeouts that open the circuit. */
    failure_threshold: z.number().int().min(1).default(5),
    /** First wait before a half-open probe; doubles on each failed probe. */
    cooldown_ms: z.number().int().min(1).default(30_000),
    max_cooldown_ms: z.number().int().min(1).default(300_000),
  })
  .strict();

export const ServerSchema = z
  .object({
    type: z.enum(['stdio', 'streamable-http', 'sse', 'http']).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
    url: z.url().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    /** Sent as the Authorization header ("Bearer " is added to a bare token). */
    authorization: z.string().min(1).optional(),
    allowed_tools: z.array(z.string()).optional(),
    exclude_tools: z.array(z.string()).default([]),
    /** MCP request timeout; the activity's start-to-close is kept above it. */
    timeout_ms: z.number().int().min(100).max(3_600_000).default(30_000),
    connect_timeout_ms: z.number().int().min(100).default(15_000),
    heartbeat_timeout_ms: z.number().int().min(500).default(15_000),
    retry: RetrySchema.default(RetrySchema.parse({})),
    breaker: BreakerSchema.default(BreakerSchema.parse({})),
    /** Merged into every tool call's arguments inside the worker; never seen by Claude or history. */
    inject: z.record(z.string(), z.unknown()).default({}),
    max_result_bytes: z.number().int().min(1024).default(100 * 1024),
  })
  .strict()
  .superRefine((s, ctx) => {
    const transport = s.type === 'http' ? 'streamable-http' : (s.type ?? (s.url ? 'streamable-http' : 'stdio'));
    if (transport === 'stdio') {
      if (!s.command) ctx.addIssue({ code: 'custom', path: ['command'], message: 'required for a stdio server' });
      if (s.url) ctx.addIssue({ code: 'custom', path: ['url'], message: 'not allowed for a stdio server (use type: streamable-http or sse)' });
    } else {
      if (!s.url) ctx.addIssue({ code: 'custom', path: ['url'], message: `required for a ${transport} server` });
      if (s.command) ctx.addIssue({ code: 'custom', path: ['command'], message: `not allowed for a ${transport} server` });
    }
    if (s.breaker.max_cooldown_ms < s.breaker.cooldown_ms) {
      ctx.addIssue({ code: 'custom', path: ['breaker', 'max_cooldown_ms'], message: 'must be at least cooldown_ms' });
    }
  });

export const NAME = /^[A-Za-z0-9_-]{1,40}$/;
export const NAME_RULE = 'server names are 1-40 characters of A-Z a-z 0-9 _ -';

export const ConfigFileSchema = z
  .object({
    mcp_servers: z.record(z.string().regex(NAME, NAME_RULE), ServerSchema).optional(),
    /** Validated by src/claude/config.ts. */
    claude: z.unknown().optional(),
    /** Validated by src/worker/worker-tuning.ts. */
    worker: z.unknown().optional(),
  })
  .strict();

export type ServerFileEntry = z.output<typeof ServerSchema>;

const CAMEL_TO_SNAKE: Record<string, string> = {
  allowedTools: 'allowed_tools',
  excludeTools: 'exclude_tools',
  timeoutMs: 'timeout_ms',
  connectTimeoutMs: 'connect_timeout_ms',
  heartbeatTimeoutMs: 'heartbeat_timeout_ms',
  maxResultBytes: 'max_result_bytes',
  maximumAttempts: 'maximum_attempts',
  initialIntervalMs: 'initial_interval_ms',
  backoffCoefficient: 'backoff_coefficient',
  maximumIntervalMs: 'maximum_interval_ms',
  failureThreshold: 'failure_threshold',
  cooldownMs: 'cooldown_ms',
  maxCooldownMs: 'max_cooldown_ms',
};
const SNAKE_TO_CAMEL = Object.fromEntries(Object.entries(CAMEL_TO_SNAKE).map(([c, s]) => [s, c]));
/** Objects whose keys are data (env names, headers, injected argument names), not config keys. */
const OPAQUE = new Set(['env', 'headers', 'inject']);

/** Maps an `.mcp.json` server entry's camelCase keys to the schema's snake_case. */
export function camelEntryToSnake(entry: unknown): unknown {
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return entry;
  return Object.fromEntries(
    Object.entries(entry).map(([k, v]) => [
      CAMEL_TO_SNAKE[k] ?? k,
      OPAQUE.has(k) || Array.isArray(v) ? v : camelEntryToSnake(v),
    ]),
  );
}

export function snakeKeyToCamel(key: string): string {
  return SNAKE_TO_CAMEL[key] ?? key;
}
