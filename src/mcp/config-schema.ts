/**
 * The MCP servers of the worker's config file: the schema of a server entry, the single source of truth
 * for its keys, their defaults and the resolved {@link ServerConfig} type. The file around them is read
 * by src/config/config-file.ts.
 *
 * Two shapes are accepted, each with its own key spelling (one file uses one shape; keys of the
 * other spelling are refused with a hint, so a half-converted file is caught; the rules:
 * docs/mcp-client-rules.md, "The config file's servers"):
 *
 *   - Claude Desktop / Claude Code `.mcp.json`, camelCase:
 *     `{ "mcpServers": { name: { command, args, env, cwd } | { type: "http" | "sse", url, headers } } }`
 *     plus mcp-turns' keys `authorization, protocol, discoveryTtlMs, allowedTools, excludeTools, timeoutMs,
 *     maxTotalTimeoutMs, connectTimeoutMs, listTimeoutMs, heartbeatTimeoutMs, inputTimeoutMs, localActivity, retry { maximumAttempts, initialIntervalMs,
 *     backoffCoefficient, maximumIntervalMs }, breaker { failureThreshold, cooldownMs, maxCooldownMs },
 *     inject, maxResultBytes, maxBinaryBytes, oauth { grant, clientId, clientSecret, scope, issuer,
    clientMetadataUrl, clientName, redirectPort, tokenFile }`.
 *   - mcp-turns' own shape, YAML or JSON, snake_case: `mcp_servers: { name: { type: stdio | streamable-http | sse,
 *     command, args, env, cwd, url, headers, authorization, protocol, discovery_ttl_ms, allowed_tools, exclude_tools, timeout_ms,
 *     max_total_timeout_ms, connect_timeout_ms, list_timeout_ms, heartbeat_timeout_ms, input_timeout_ms, local_activity, retry {
 *     maximum_attempts, initial_interval_ms, backoff_coefficient, maximum_interval_ms }, breaker {
 *     failure_threshold, cooldown_ms, max_cooldown_ms }, inject, max_result_bytes, max_binary_bytes, oauth {
    grant, client_id, client_secret, scope, issuer, client_metadata_url, client_name, redirect_port,
    token_file } } }`.
 *
 * `type` takes `stdio`, `streamable-http`, `http` (= streamable-http, with the legacy SSE fallback)
 * or `sse` in both shapes; without it a server with `url` is streamable-http, one with `command` stdio.
 * Keys inside `env`, `headers` and `inject` are data and kept as written.
 *
 * `approval` says which of a server's tools wait for a person's approval before a call runs:
 * `always`, `never` (the default), or `{ always, never, timeout_ms }` (camelCase `timeoutMs`) with
 * tool name patterns (see {@link ApprovalSchema}).
 *
 * Both shapes are validated by the one snake_case schema below (camelCase keys are mapped to it and
 * error paths mapped back), so they cannot drift apart. Unknown keys are errors (typos are caught).
 */
import { z } from 'zod';
import { DEFAULT_INPUT_TIMEOUT_MS, TOOL_CALL_DEFAULTS } from '../core/tool-call-policy';
import { defaultTokenFile, type TokenStore } from './oauth-token-store';

/** The three transports a server is reached over. */
export type Transport = 'stdio' | 'streamable-http' | 'sse';

/** Defaults, in one place so the schema and its docs agree. */
export const SERVER_DEFAULTS = {
  ...TOOL_CALL_DEFAULTS,
  connectTimeoutMs: 15_000,
  /** How long a worker trusts what it learned of a server's protocol era before it asks again. */
  discoveryTtlMs: 600_000,
  /** The workflow gives listTools one minute per attempt; a hung server must not eat it all. */
  listTimeoutMs: 20_000,
  maxResultBytes: 100 * 1024,
  /** Image and blob data kept per result: never cut, dropped whole beyond this (Temporal's 2 MB payload limit). */
  maxBinaryBytes: 768 * 1024,
  breaker: { failureThreshold: 5, cooldownMs: 30_000, maxCooldownMs: 300_000 },
  localActivity: 'auto' as boolean | 'auto',
  /** The localhost port `mcp-turns auth` receives the authorization redirect on. */
  oauthRedirectPort: 33418,
} as const;

export const RetrySchema = z
  .object({
    /** Temporal attempts per tool call (1 = no retry). @default 3 */
    maximum_attempts: z.number().int().min(1).max(100).optional(),
    /** @default 1000 */
    initial_interval_ms: z.number().int().min(1).optional(),
    /** @default 2 */
    backoff_coefficient: z.number().min(1).max(10).optional(),
    /** @default 10000 */
    maximum_interval_ms: z.number().int().min(1).optional(),
  })
  .strict();

const BreakerSchema = z
  .object({
    /** Consecutive transport failures or timeouts that open the circuit. @default 5 */
    failure_threshold: z.number().int().min(1).optional(),
    /** Wait before the first half-open probe; doubles on each failed probe. @default 30000 */
    cooldown_ms: z.number().int().min(1).optional(),
    /** Longest wait between probes. @default 300000 */
    max_cooldown_ms: z.number().int().min(1).optional(),
  })
  .strict();

/**
 * Which tools of a server wait for a person's approval: `always` (every tool), `never`, or tool
 * name patterns on the tools' MCP names (`*` matches any run of characters): a tool needs
 * approval when it matches `always` and no pattern in `never`.
 */
export const ApprovalSchema = z.union(
  [
    z.enum(['always', 'never']),
    z
      .object({
        /** Tools whose calls wait for approval. @default ["*"] (every tool) */
        always: z.array(z.string().min(1)).optional(),
        /** Tools exempt from `always`. */
        never: z.array(z.string().min(1)).optional(),
        /** Without a decision in this time the call is denied; absent = wait as long as it takes. */
        timeout_ms: z.number().int().min(1000).optional(),
      })
      .strict(),
  ],
  { error: 'must be "always", "never" or an object of tool patterns (always, never) and a timeout' },
);

/** OAuth 2.1 for a remote server (src/mcp/oauth-provider.ts); tokens live in the worker's token store only. */
const OAuthSchema = z
  .object({
    /** `client_credentials` (machine to machine) or `authorization_code` (a person runs `mcp-turns auth` once). @default authorization_code */
    grant: z.enum(['client_credentials', 'authorization_code']).optional(),
    /** Required for client_credentials; for authorization_code a pre-registered client (else dynamic registration). */
    client_id: z.string().min(1).optional(),
    /** The client's secret (give it as `${VAR}`). Secret: worker-side only. */
    client_secret: z.string().min(1).optional(),
    /** Space-separated scopes; when absent the server's challenge or metadata decides. */
    scope: z.string().min(1).optional(),
    /** The authorization server the client is registered with; credentials are sent to no other. */
    issuer: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /** An https URL of a client ID metadata document, used as client_id where the server supports it. */
    client_metadata_url: z.url({ protocol: /^https$/, error: 'must be an https URL' }).optional(),
    /** Name shown to the person authorizing (dynamic registration). @default mcp-turns */
    client_name: z.string().min(1).optional(),
    /** authorization_code: the localhost port `mcp-turns auth` receives the redirect on (0 = any free port). @default 33418 */
    redirect_port: z.number().int().min(0).max(65_535).optional(),
    /** Where tokens are kept (mode 0600). @default <state dir>/oauth/<server>.json */
    token_file: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    if ((o.grant ?? 'authorization_code') !== 'client_credentials') return;
    for (const k of ['client_id', 'client_secret'] as const) {
      if (!o[k]) ctx.addIssue({ code: 'custom', path: [k], message: 'required for grant client_credentials' });
    }
    for (const k of ['client_metadata_url', 'redirect_port'] as const) {
      if (o[k] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [k], message: 'only for grant authorization_code' });
      }
    }
  });

const STDIO_ONLY = ['command', 'args', 'env', 'cwd'] as const;
const HTTP_ONLY = ['url', 'headers', 'authorization', 'oauth'] as const;

/** One server entry as written (snake_case); see the file comment for the camelCase spelling. */
export const ServerEntrySchema = z
  .object({
    /** Transport; inferred from `url` / `command` when absent. `http` is streamable-http. */
    type: z.enum(['stdio', 'streamable-http', 'http', 'sse']).optional(),
    /** stdio: the program to spawn (in its own process group). */
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    /** stdio: added to a minimal inherited environment (HOME, PATH, …). Secret: worker-side only. */
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    /** streamable-http / sse endpoint. */
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /** Sent with every HTTP request. Secret: worker-side only. */
    headers: z.record(z.string().min(1), z.string()).optional(),
    /** Sent as the Authorization header; "Bearer " is added to a bare token. Secret. */
    authorization: z.string().min(1).optional(),
    /** OAuth 2.1 (client credentials or authorization code); excludes a static Authorization. */
    oauth: OAuthSchema.optional(),
    /** Only these tools are listed (and callable). */
    allowed_tools: z.array(z.string().min(1)).optional(),
    /** These tools are never listed (applied after allowed_tools). */
    exclude_tools: z.array(z.string().min(1)).optional(),
    /** MCP request timeout (idle time when the server sends progress). @default 30000 */
    timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
    /** Longest a call may run while progress keeps it alive. @default timeout_ms */
    max_total_timeout_ms: z
      .number()
      .int()
      .min(100)
      .max(24 * 3_600_000)
      .optional(),
    /**
     * The protocol era spoken: `auto` asks with `server/discover` (2026-07-28) and falls back to the
     * `initialize` handshake (2025-11-25); `legacy` only the handshake; `2026-07-28` only the modern
     * era. An `sse` server speaks the legacy era. @default auto
     */
    protocol: z.enum(['auto', 'legacy', '2026-07-28']).optional(),
    /** How long a worker reuses what it learned of the server's era (a discover result's own `ttlMs` may cut it). @default 600000 */
    discovery_ttl_ms: z.number().int().min(0).max(86_400_000).optional(),
    /** Spawn/connect plus `initialize`. @default 15000 */
    connect_timeout_ms: z.number().int().min(100).max(120_000).optional(),
    /** Whole `tools/list` (connect and every page); kept well under the workflow's 1-minute listTools activity. @default 20000 */
    list_timeout_ms: z.number().int().min(100).max(50_000).optional(),
    /**
     * How long a call waits for a person to answer the server's questions (an elicitation) before
     * declining them. @default 600000
     */
    input_timeout_ms: z.number().int().min(1000).max(30 * 24 * 3_600_000).optional(),
    /** Activity heartbeat timeout; progress and a periodic beat keep it alive. @default 15000 */
    heartbeat_timeout_ms: z.number().int().min(1000).optional(),
    /** Temporal retry policy of this server's calls. */
    retry: RetrySchema.optional(),
    /**
     * Which calls run as local activities (src/mcp/tool-speed.ts): `auto`, a tool's calls once its
     * recent ones in this worker were all quick; `true`, every call; `false`, none.
     * @default auto
     */
    local_activity: z.union([z.boolean(), z.literal('auto')]).optional(),
    /** Circuit breaker thresholds. */
    breaker: BreakerSchema.optional(),
    /** Merged into every call's arguments in the worker; hidden from the listed schema. Secret. */
    inject: z.record(z.string().min(1), z.unknown()).optional(),
    /** Size cap of a result's text (head and tail kept). @default 102400 */
    max_result_bytes: z.number().int().min(1024).optional(),
    /** Image and blob data (base64 characters) kept per result; never cut, extra ones dropped whole. @default 786432 */
    max_binary_bytes: z
      .number()
      .int()
      .min(0)
      .max(1536 * 1024)
      .optional(),
    /** Which tools wait for a person's approval before a call runs. @default never */
    approval: ApprovalSchema.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const transport = transportOf(s);
    const present = (k: string): boolean => (s as Record<string, unknown>)[k] !== undefined;
    if (transport === 'stdio') {
      if (!s.command)
        ctx.addIssue({ code: 'custom', path: ['command'], message: 'required for a stdio server' });
      for (const k of HTTP_ONLY.filter(present)) {
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message: 'not allowed for a stdio server (set type: streamable-http or sse)',
        });
      }
    } else {
      if (!s.url)
        ctx.addIssue({ code: 'custom', path: ['url'], message: `required for a ${transport} server` });
      for (const k of STDIO_ONLY.filter(present)) {
        ctx.addIssue({ code: 'custom', path: [k], message: `not allowed for a ${transport} server` });
      }
    }
    if (transport === 'sse' && s.protocol === '2026-07-28') {
      ctx.addIssue({
        code: 'custom',
        path: ['protocol'],
        message: 'an sse server speaks the legacy era only (use type: streamable-http for 2026-07-28)',
      });
    }
    if (s.authorization && Object.keys(s.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) {
      ctx.addIssue({
        code: 'custom',
        path: ['authorization'],
        message: 'conflicts with headers.Authorization (give one)',
      });
    }
    if (s.oauth && (s.authorization || Object.keys(s.headers ?? {}).some((h) => h.toLowerCase() === 'authorization'))) {
      ctx.addIssue({ code: 'custom', path: ['oauth'], message: 'conflicts with a static Authorization (give one)' });
    }
    const cooldown = s.breaker?.cooldown_ms ?? SERVER_DEFAULTS.breaker.cooldownMs;
    const maxCooldown =
      s.breaker?.max_cooldown_ms ?? Math.max(cooldown, SERVER_DEFAULTS.breaker.maxCooldownMs);
    if (maxCooldown < cooldown) {
      ctx.addIssue({
        code: 'custom',
        path: ['breaker', 'max_cooldown_ms'],
        message: 'must be at least cooldown_ms',
      });
    }
    if (
      s.max_total_timeout_ms !== undefined &&
      s.max_total_timeout_ms < (s.timeout_ms ?? SERVER_DEFAULTS.timeoutMs)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_total_timeout_ms'],
        message: 'must be at least timeout_ms',
      });
    }
  });

/** A server entry as written, after validation. */
export type ServerEntry = z.output<typeof ServerEntrySchema>;

function transportOf(s: Pick<ServerEntry, 'type' | 'url'>): Transport {
  if (s.type === 'http') return 'streamable-http';
  return s.type ?? (s.url !== undefined ? 'streamable-http' : 'stdio');
}

/** The Authorization header for a bare token or a full `Scheme value`. */
function authorizationHeader(value: string): string {
  return /\s/.test(value.trim()) ? value.trim() : `Bearer ${value.trim()}`;
}

/** An entry with defaults applied, as the worker uses it (secrets included: worker-side only). */
function resolveEntry(name: string, s: ServerEntry, stateDir: string) {
  const d = SERVER_DEFAULTS;
  const headers: Record<string, string> = { ...s.headers };
  if (s.authorization) headers.Authorization = authorizationHeader(s.authorization);
  const timeoutMs = s.timeout_ms ?? d.timeoutMs;
  const cooldownMs = s.breaker?.cooldown_ms ?? d.breaker.cooldownMs;
  return {
    /** The configured name; the prefix Claude sees (`name__tool`). */
    name,
    transport: transportOf(s),
    command: s.command,
    args: s.args ?? [],
    env: s.env ?? {},
    cwd: s.cwd,
    url: s.url,
    headers,
    /** undefined = every tool. */
    allowedTools: s.allowed_tools,
    excludeTools: s.exclude_tools ?? [],
    timeoutMs,
    maxTotalTimeoutMs: s.max_total_timeout_ms ?? timeoutMs,
    /** `auto`, `legacy` or `2026-07-28` (see the schema). */
    protocol: s.protocol ?? ('auto' as const),
    discoveryTtlMs: s.discovery_ttl_ms ?? d.discoveryTtlMs,
    connectTimeoutMs: s.connect_timeout_ms ?? d.connectTimeoutMs,
    listTimeoutMs: s.list_timeout_ms ?? d.listTimeoutMs,
    heartbeatTimeoutMs: s.heartbeat_timeout_ms ?? d.heartbeatTimeoutMs,
    inputTimeoutMs: s.input_timeout_ms ?? DEFAULT_INPUT_TIMEOUT_MS,
    localActivity: s.local_activity ?? d.localActivity,
    retry: {
      maximumAttempts: s.retry?.maximum_attempts ?? d.retry.maximumAttempts,
      initialIntervalMs: s.retry?.initial_interval_ms ?? d.retry.initialIntervalMs,
      backoffCoefficient: s.retry?.backoff_coefficient ?? d.retry.backoffCoefficient,
      maximumIntervalMs: s.retry?.maximum_interval_ms ?? d.retry.maximumIntervalMs,
    },
    breaker: {
      failureThreshold: s.breaker?.failure_threshold ?? d.breaker.failureThreshold,
      cooldownMs,
      maxCooldownMs: s.breaker?.max_cooldown_ms ?? Math.max(cooldownMs, d.breaker.maxCooldownMs),
    },
    /** Which tools wait for approval (src/mcp/approval-policy.ts applies it to the listing). */
    approval: resolveApproval(s.approval),
    inject: s.inject ?? {},
    maxResultBytes: s.max_result_bytes ?? d.maxResultBytes,
    maxBinaryBytes: s.max_binary_bytes ?? d.maxBinaryBytes,
    /** OAuth settings; undefined = no OAuth. Secret (client secret): worker-side only. */
    oauth: s.oauth && resolveOAuth(name, s.oauth, stateDir),
  };
}

/** An `oauth` block with defaults applied; `store` may be replaced by code (see {@link TokenStore}). */
function resolveOAuth(server: string, o: NonNullable<ServerEntry["oauth"]>, stateDir: string) {
  return {
    grant: o.grant ?? ('authorization_code' as const),
    clientId: o.client_id,
    clientSecret: o.client_secret,
    scope: o.scope,
    issuer: o.issuer,
    clientMetadataUrl: o.client_metadata_url,
    clientName: o.client_name ?? 'mcp-turns',
    redirectPort: o.redirect_port ?? SERVER_DEFAULTS.oauthRedirectPort,
    tokenFile: o.token_file ?? defaultTokenFile(server, stateDir),
    /** Where tokens are kept; a file store on `tokenFile` unless code sets another. */
    store: undefined as TokenStore | undefined,
  };
}

/** The approval policy with defaults applied: patterns of tools that need approval and those exempt. */
export function resolveApproval(a: ServerEntry['approval']): { always: string[]; never: string[]; timeoutMs?: number } {
  if (a === undefined || a === 'never') return { always: [], never: [] };
  if (a === 'always') return { always: ['*'], never: [] };
  return {
    always: a.always ?? ['*'],
    never: a.never ?? [],
    ...(a.timeout_ms !== undefined ? { timeoutMs: a.timeout_ms } : {}),
  };
}

/** 1-40 characters, so `name__tool` leaves room in Claude's 64-character tool names. */
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;
export const SERVER_NAME_RULE = 'server names are 1-40 characters of A-Z a-z 0-9 _ -';

/**
 * The servers section (`mcp_servers`, or `mcpServers` mapped to snake_case): entries by name, resolved
 * to {@link ServerConfig}s in the order written. OAuth token files default to `<stateDir>/oauth/`
 * (the state directory).
 */
export function mcpServersSchema(stateDir: string) {
  return z
    .record(z.string().regex(SERVER_NAME, SERVER_NAME_RULE), ServerEntrySchema)
    .transform((servers) => Object.entries(servers).map(([name, entry]) => resolveEntry(name, entry, stateDir)));
}

/** One MCP server as the worker uses it: defaults applied, secrets included (worker-side only). */
export type ServerConfig = ReturnType<typeof resolveEntry>;

const CAMEL_TO_SNAKE: Readonly<Record<string, string>> = {
  allowedTools: 'allowed_tools',
  excludeTools: 'exclude_tools',
  timeoutMs: 'timeout_ms',
  maxTotalTimeoutMs: 'max_total_timeout_ms',
  connectTimeoutMs: 'connect_timeout_ms',
  discoveryTtlMs: 'discovery_ttl_ms',
  listTimeoutMs: 'list_timeout_ms',
  heartbeatTimeoutMs: 'heartbeat_timeout_ms',
  inputTimeoutMs: 'input_timeout_ms',
  localActivity: 'local_activity',
  maxResultBytes: 'max_result_bytes',
  maxBinaryBytes: 'max_binary_bytes',
  maximumAttempts: 'maximum_attempts',
  initialIntervalMs: 'initial_interval_ms',
  backoffCoefficient: 'backoff_coefficient',
  maximumIntervalMs: 'maximum_interval_ms',
  failureThreshold: 'failure_threshold',
  cooldownMs: 'cooldown_ms',
  maxCooldownMs: 'max_cooldown_ms',
  clientId: 'client_id',
  clientSecret: 'client_secret',
  clientMetadataUrl: 'client_metadata_url',
  clientName: 'client_name',
  redirectPort: 'redirect_port',
  tokenFile: 'token_file',
};
const SNAKE_TO_CAMEL: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(CAMEL_TO_SNAKE).map(([c, s]) => [s, c]),
);
/** Objects whose keys are data (variable names, header names, argument names), not config keys. */
const OPAQUE = new Set(['env', 'headers', 'inject']);

/**
 * Maps one `.mcp.json` server entry's camelCase keys to the schema's snake_case. A snake_case key
 * there is reported (with its camelCase spelling) rather than silently accepted.
 */
export function camelEntryToSnake(entry: unknown, path: string[], problems: string[]): unknown {
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return entry;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) {
    if (SNAKE_TO_CAMEL[k] !== undefined) {
      problems.push(`${[...path, k].join('.')}: unknown key (${path[0] ?? 'mcpServers'} uses ${SNAKE_TO_CAMEL[k]})`);
      continue;
    }
    out[CAMEL_TO_SNAKE[k] ?? k] =
      OPAQUE.has(k) || Array.isArray(v) ? v : camelEntryToSnake(v, [...path, k], problems);
  }
  return out;
}

/** How a schema path segment is spelled in the file it came from. */
export function keyAsWritten(path: readonly string[], index: number, camel: boolean): string {
  const key = path[index] ?? '';
  if (!camel || index < 2 || OPAQUE.has(path[index - 1] ?? '')) return key;
  return SNAKE_TO_CAMEL[key] ?? key;
}

/** For a snake_case file holding a camelCase key: the spelling it meant. */
export function snakeSpelling(key: string): string | undefined {
  return CAMEL_TO_SNAKE[key];
}
