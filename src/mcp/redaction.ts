/**
 * Keeping a server's configured secrets (env, headers, authorization, inject, URL credentials, the
 * OAuth client secret) and the OAuth tokens it obtains at run time inside the worker. mcp-turns itself never puts them into results, errors or logs; this guards the text
 * that comes back from elsewhere (a server echoing its token, an error quoting a header) before it
 * reaches workflow history or the log.
 */
import type { ServerConfig } from './config-schema';

/** Replaces each secret occurrence. */
export const REDACTED = '[redacted]';

/** Shorter values are too likely to be ordinary words or numbers to be replaced everywhere. */
const MIN_SECRET_LENGTH = 6;

/** Environment variable names whose values are credentials even inside tool results. */
const SECRET_NAME = /token|secret|passw|key|auth|credential|cookie|session/i;

function stringLeaves(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringLeaves(v, out);
}

/** Longest first, so a secret containing another is replaced whole. */
function redactionOrder(secrets: Iterable<string>): string[] {
  return [...new Set([...secrets].filter((s) => s.length >= MIN_SECRET_LENGTH))].sort(
    (a, b) => b.length - a.length,
  );
}

/**
 * Secrets a server's connection learns while it runs (OAuth access and refresh tokens): added as
 * they arrive, read live by that server's redactors.
 */
export class RuntimeSecrets {
  private readonly values = new Set<string>();
  /** Bumped on every new secret, so readers know when to re-sort. */
  version = 0;

  /** Remembers a secret (tokens are never forgotten: old ones may still be echoed). */
  add(secret: string | undefined): void {
    if (!secret || this.values.has(secret)) return;
    this.values.add(secret);
    this.version++;
  }

  /** Every secret remembered so far. */
  all(): Iterable<string> {
    return this.values;
  }
}

const runtimeSecretsByServer = new WeakMap<ServerConfig, RuntimeSecrets>();

/** The run-time secrets of one configured server (one set per config object, created on first use). */
export function runtimeSecrets(config: ServerConfig): RuntimeSecrets {
  let set = runtimeSecretsByServer.get(config);
  if (!set) runtimeSecretsByServer.set(config, (set = new RuntimeSecrets()));
  return set;
}

/** The values of `env`'s variables whose names say they are credentials (`CRM_TOKEN`, `DB_PASSWORD`). */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).flatMap(([k, v]) => (v !== undefined && SECRET_NAME.test(k) ? [v] : []));
}

/** Replaces known secret strings in text: fixed ones, and those a {@link RuntimeSecrets} adds later. */
export class Redactor {
  private readonly fixed: string[];
  private secrets: string[];
  private seenVersion = 0;

  constructor(
    secrets: Iterable<string>,
    private readonly live?: RuntimeSecrets,
  ) {
    this.fixed = redactionOrder(secrets);
    this.secrets = this.fixed;
  }

  private current(): string[] {
    if (this.live && this.live.version !== this.seenVersion) {
      this.seenVersion = this.live.version;
      this.secrets = redactionOrder([...this.fixed, ...this.live.all()]);
    }
    return this.secrets;
  }

  /** The text with every secret replaced by {@link REDACTED}. */
  redact(text: string): string {
    let out = text;
    for (const s of this.current()) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  /** True when there is nothing to redact (the common case: skip the work). */
  get empty(): boolean {
    return this.current().length === 0;
  }
}

/**
 * The two redactors of one server: `strict` for errors and logs (every configured value), and
 * `results` for tool output, which leaves out environment values with ordinary names (paths, log
 * levels) that tools legitimately mention. Both also replace the server's OAuth tokens
 * ({@link runtimeSecrets}) from the moment the connection receives them.
 */
export function serverRedactors(config: ServerConfig): { strict: Redactor; results: Redactor } {
  const always: string[] = [];
  for (const value of Object.values(config.headers)) {
    always.push(value);
    const token = /^\S+\s+(\S.*)$/.exec(value)?.[1]; // "Bearer abc" → also "abc"
    if (token) always.push(token);
  }
  stringLeaves(config.inject, always);
  if (config.oauth?.clientSecret) always.push(config.oauth.clientSecret);
  if (config.url) {
    try {
      const url = new URL(config.url);
      if (url.username) always.push(decodeURIComponent(url.username));
      if (url.password) always.push(decodeURIComponent(url.password));
      for (const v of url.searchParams.values()) always.push(v);
    } catch {
      // validated by the schema; nothing to add
    }
  }
  const env = Object.entries(config.env);
  const live = runtimeSecrets(config);
  return {
    strict: new Redactor([...always, ...env.map(([, v]) => v)], live),
    results: new Redactor([...always, ...env.filter(([k]) => SECRET_NAME.test(k)).map(([, v]) => v)], live),
  };
}
