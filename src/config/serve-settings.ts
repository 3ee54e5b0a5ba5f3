/**
 * `mcp-turns serve`'s settings: the `serve:` section of the config file (variables substituted, so
 * tokens can come from the environment as `${VAR}`), `MCP_TURNS_SERVE_TOKENS`
 * (`name:token,name:token:admin,…`), and the command's flags, flags winning. Every problem is one
 * line naming its key.
 *
 * The rules they carry:
 * - callers sign in with a static token (`serve.tokens`, each a `user` or an `admin`) or an OpenID
 *   provider's JWT (`serve.auth.jwt`), or both;
 * - a bind address other than loopback needs one of them;
 * - `limits` bound each caller's turns in flight and tokens per day (admins only by `limits.admins`),
 *   counted in Temporal (src/core/usage-ledger.ts), so every `serve` process shares them;
 * - the hosts a request may name (`Host`) and the origins a browser may call from (`Origin`, CORS)
 *   are the server's own loopback names on its port, plus those listed;
 * - bodies over `bodyLimitBytes` are refused (413); each token (or, without auth, each client
 *   address) may make `rateLimit.max` requests per `rateLimit.windowSeconds`;
 * - a streaming client (SSE) that takes none of what waits for it for `stalledStreamSeconds`
 *   (default 30) is dropped, and the subscription feeding it stops.
 */
import { z } from 'zod';
import { issueProblems } from '../schemas/issue-problems';
import type { UsageLimits } from '../core/usage-ledger';

export const DEFAULT_SERVE_PORT = 8787;
export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
export const DEFAULT_STALLED_STREAM_SECONDS = 30;
/** A token's name is recorded as the approver: it reads like an identity, not a secret. */
const TOKEN_NAME = /^[A-Za-z0-9._@-]{1,64}$/;
/** Shorter tokens are guessable. */
const MIN_TOKEN_LENGTH = 16;

/** What a caller may do: a `user` sees and acts on what it started; an `admin` on everything. */
export const ROLES = ['user', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const TokenSchema = z
  .object({
    name: z.string().regex(TOKEN_NAME, 'a name of 1-64 characters of A-Z a-z 0-9 . _ @ -'),
    token: z.string().min(MIN_TOKEN_LENGTH, `at least ${MIN_TOKEN_LENGTH} characters`),
    role: z.enum(ROLES).optional(),
  })
  .strict();

/** The signature algorithms a JWT may use: asymmetric ones only (`none` and HMAC never). */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export const DEFAULT_JWT_CLOCK_TOLERANCE_SECONDS = 30;

const JwtSchema = z
  .object({
    /** The issuer (`iss`); its keys come from `<issuer>/.well-known/openid-configuration`'s `jwks_uri`. */
    issuer: z.url(),
    /** The `aud` a token must name (one of them, when a list). */
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], { error: 'the audience a token must name (aud): a string or a list of them' }),
    /** The issuer's key set, when it publishes no discovery document. */
    jwksUrl: z.url().optional(),
    /** The claim that names the caller. @default sub */
    identityClaim: z.string().min(1).optional(),
    /** `claim` or `claim=value`: a caller whose claim is true, the value, or a list holding it (default value `admin`) is an admin. */
    adminClaim: z.string().regex(/^[^=\s]+(=[^=]+)?$/, 'claim or claim=value').optional(),
    algorithms: z.array(z.enum(JWT_ALGORITHMS)).min(1).optional(),
    clockToleranceSeconds: z.number().int().min(0).max(300).optional(),
  })
  .strict();

const LimitsSchema = z
  .object({
    turnsInFlight: z.number().int().min(1).optional(),
    tokensPerDay: z.number().int().min(1).optional(),
  })
  .strict();

const ServeSectionSchema = z
  .object({
    host: z.string().min(1).optional(),
    port: z.number().int().min(0).max(65535).optional(),
    tokens: z.array(TokenSchema).optional(),
    auth: z.object({ jwt: JwtSchema.optional() }).strict().optional(),
    /** Per caller: turns in flight and tokens per day (UTC); `admins` for admins, who are otherwise unlimited. */
    limits: LimitsSchema.extend({ admins: LimitsSchema.optional() }).strict().optional(),
    /** Origins allowed to call from a browser (CORS), e.g. `https://chat.example.com`. */
    allowedOrigins: z.array(z.url()).optional(),
    /** Host names (with port when not 80/443) requests may name, e.g. `chat.example.com`. */
    allowedHosts: z.array(z.string().min(1)).optional(),
    bodyLimitBytes: z.number().int().min(1024).optional(),
    rateLimit: z
      .object({ max: z.number().int().min(1), windowSeconds: z.number().int().min(1).optional() })
      .strict()
      .optional(),
    /** Seconds a streaming client may take none of what waits for it before it is dropped. */
    stalledStreamSeconds: z.number().int().min(1).optional(),
  })
  .strict();

export type ServeSection = z.output<typeof ServeSectionSchema>;

export interface ServeToken {
  name: string;
  token: string;
  /** @default user */
  role?: Role;
}

/** Bearer JWTs from one OpenID provider. */
export interface JwtSettings {
  issuer: string;
  /** The audiences a token may name (one suffices). */
  audience: string[];
  jwksUrl?: string;
  identityClaim: string;
  adminClaim?: { claim: string; value: string };
  algorithms: string[];
  clockToleranceSeconds: number;
}

export interface ServeSettings {
  host: string;
  port: number;
  tokens: ServeToken[];
  /** OpenID JWTs, when configured. */
  jwt?: JwtSettings;
  /** Each caller's limits by role (none set: unlimited). */
  limits: { user: UsageLimits; admin: UsageLimits };
  allowedOrigins: string[];
  allowedHosts: string[];
  bodyLimitBytes: number;
  rateLimit: { max: number; windowSeconds: number };
  /** Seconds a streaming client may take none of what waits for it before it is dropped. */
  stalledStreamSeconds: number;
}

/** Settings that cannot be used; each problem one line, key first. */
export class ServeSettingsError extends Error {
  override name = 'ServeSettingsError';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

export interface ServeFlags {
  host?: string;
  port?: number;
}

/** Whether `host` is a loopback bind (only this machine can connect). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Whether callers must sign in (a token or a JWT). */
export function authRequired(settings: Pick<ServeSettings, 'tokens' | 'jwt'>): boolean {
  return settings.tokens.length > 0 || settings.jwt !== undefined;
}

/** How callers sign in, in a few words: `2 tokens (1 admin), OpenID JWTs from <issuer>`, or `none (loopback only)`. */
export function authSummary(settings: Pick<ServeSettings, 'tokens' | 'jwt'>): string {
  const admins = settings.tokens.filter((t) => t.role === 'admin').length;
  const parts = [
    ...(settings.tokens.length ? [`${settings.tokens.length} token${settings.tokens.length === 1 ? '' : 's'}${admins ? ` (${admins} admin)` : ''}`] : []),
    ...(settings.jwt ? [`OpenID JWTs from ${settings.jwt.issuer}`] : []),
  ];
  return parts.length ? parts.join(', ') : 'none (loopback only)';
}

/**
 * `name:token,name:token` from the environment variable `variable` (MCP_TURNS_SERVE_TOKENS,
 * MCP_TURNS_CODEC_TOKENS); with `roles`, an item may end `:admin` (or `:user`).
 */
export function tokensFromEnv(value: string | undefined, problems: string[], variable = 'MCP_TURNS_SERVE_TOKENS', { roles = false } = {}): ServeToken[] {
  if (!value?.trim()) return [];
  const tokens: ServeToken[] = [];
  for (const [i, item] of value.split(',').entries()) {
    const at = item.indexOf(':');
    const rest = item.slice(at + 1).trim();
    const role = roles ? ROLES.find((r) => rest.endsWith(`:${r}`)) : undefined;
    const token = role ? rest.slice(0, -role.length - 1) : rest;
    const parsed = TokenSchema.safeParse(at > 0 ? { name: item.slice(0, at).trim(), token, ...(role ? { role } : {}) } : {});
    if (at <= 0) problems.push(`${variable} item ${i + 1}: write name:token${roles ? ' or name:token:admin' : ''} (e.g. alice:<a long random token>)`);
    else if (!parsed.success)
      problems.push(`${variable} item ${i + 1} (${item.slice(0, at).trim()}): ${parsed.error.issues.map((x) => `${x.path.join('.')} ${x.message}`).join('; ')}`);
    else tokens.push(parsed.data);
  }
  return tokens;
}

/**
 * What is wrong with a set of tokens, one line each: a name given twice (each token names one
 * approver), or one token given two names (it would authenticate as the first).
 */
export function tokenProblems(tokens: readonly ServeToken[], key: string): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  const owners = new Map<string, string>();
  for (const t of tokens) {
    if (names.has(t.name)) problems.push(`${key}: the name ${t.name} is given twice (each token names one approver)`);
    names.add(t.name);
    const owner = owners.get(t.token);
    if (owner !== undefined && owner !== t.name) problems.push(`${key}: ${owner} and ${t.name} have the same token (each needs its own)`);
    owners.set(t.token, owner ?? t.name);
  }
  return problems;
}

/**
 * The settings from the config file's raw `serve:` section, the environment and the flags. Throws
 * {@link ServeSettingsError}.
 */
export function resolveServeSettings(section: unknown, flags: ServeFlags, env: NodeJS.ProcessEnv): ServeSettings {
  const problems: string[] = [];
  const parsed = ServeSectionSchema.optional().safeParse(section ?? undefined);
  if (!parsed.success) {
    for (const { at, message } of issueProblems(parsed.error.issues, ['serve'])) problems.push(`${at}: ${message}`);
  }
  const file = parsed.success ? (parsed.data ?? {}) : {};
  const tokens = [...(file.tokens ?? []), ...tokensFromEnv(env.MCP_TURNS_SERVE_TOKENS, problems, 'MCP_TURNS_SERVE_TOKENS', { roles: true })];
  problems.push(...tokenProblems(tokens, 'serve.tokens'));
  const jwt = file.auth?.jwt ? jwtSettings(file.auth.jwt) : undefined;
  for (const [key, url] of [['issuer', jwt?.issuer], ['jwksUrl', jwt?.jwksUrl]] as const) {
    if (url !== undefined && !secureUrl(url)) problems.push(`serve.auth.jwt.${key}: ${url} must be https (http only on this machine): keys read over plain HTTP could be anyone's`);
  }
  const host = flags.host ?? file.host ?? DEFAULT_SERVE_HOST;
  const port = flags.port ?? file.port ?? DEFAULT_SERVE_PORT;
  if (!isLoopbackHost(host) && !authRequired({ tokens, jwt })) {
    problems.push(
      `--host ${host}: serving beyond this machine needs auth: add serve.tokens to the config ` +
        '(tokens: [{ name: alice, token: "${ALICE_TOKEN}" }]), set MCP_TURNS_SERVE_TOKENS=name:token, or add serve.auth.jwt',
    );
  }
  if (problems.length) throw new ServeSettingsError(problems);
  return {
    host,
    port,
    tokens,
    ...(jwt ? { jwt } : {}),
    limits: { user: limitsOf(file.limits), admin: limitsOf(file.limits?.admins) },
    allowedOrigins: (file.allowedOrigins ?? []).map((o) => new URL(o).origin),
    allowedHosts: (file.allowedHosts ?? []).map((h) => h.toLowerCase()),
    bodyLimitBytes: file.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    rateLimit: { max: file.rateLimit?.max ?? 1200, windowSeconds: file.rateLimit?.windowSeconds ?? 60 },
    stalledStreamSeconds: file.stalledStreamSeconds ?? DEFAULT_STALLED_STREAM_SECONDS,
  };
}

/** Whether `url` is https, or http to a loopback host (false for what is not a URL). */
export function secureUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const u = new URL(url);
  return u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname));
}

function jwtSettings(section: z.output<typeof JwtSchema>): JwtSettings {
  const [claim, value] = section.adminClaim?.split('=') ?? [];
  return {
    issuer: section.issuer,
    audience: typeof section.audience === 'string' ? [section.audience] : section.audience,
    ...(section.jwksUrl ? { jwksUrl: section.jwksUrl } : {}),
    identityClaim: section.identityClaim ?? 'sub',
    ...(claim ? { adminClaim: { claim, value: value ?? 'admin' } } : {}),
    algorithms: section.algorithms ?? [...JWT_ALGORITHMS],
    clockToleranceSeconds: section.clockToleranceSeconds ?? DEFAULT_JWT_CLOCK_TOLERANCE_SECONDS,
  };
}

function limitsOf(section: { turnsInFlight?: number | undefined; tokensPerDay?: number | undefined } | undefined): UsageLimits {
  return {
    ...(section?.turnsInFlight !== undefined ? { turnsInFlight: section.turnsInFlight } : {}),
    ...(section?.tokensPerDay !== undefined ? { tokensPerDay: section.tokensPerDay } : {}),
  };
}
