/**
 * Keeping a server's configured secrets (env, headers, authorization, inject, URL credentials) inside
 * the worker. mcp-turns itself never puts them into results, errors or logs; this guards the text
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

/** Replaces known secret strings in text. */
export class Redactor {
  private readonly secrets: string[];

  constructor(secrets: Iterable<string>) {
    // Longest first, so a secret containing another is replaced whole.
    this.secrets = [...new Set([...secrets].filter((s) => s.length >= MIN_SECRET_LENGTH))].sort(
      (a, b) => b.length - a.length,
    );
  }

  /** The text with every secret replaced by {@link REDACTED}. */
  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  /** True when there is nothing to redact (the common case: skip the work). */
  get empty(): boolean {
    return this.secrets.length === 0;
  }
}

/**
 * The two redactors of one server: `strict` for errors and logs (every configured value), and
 * `results` for tool output, which leaves out environment values with ordinary names (paths, log
 * levels) that tools legitimately mention.
 */
export function serverRedactors(config: ServerConfig): { strict: Redactor; results: Redactor } {
  const always: string[] = [];
  for (const value of Object.values(config.headers)) {
    always.push(value);
    const token = /^\S+\s+(\S.*)$/.exec(value)?.[1]; // "Bearer abc" → also "abc"
    if (token) always.push(token);
  }
  stringLeaves(config.inject, always);
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
  return {
    strict: new Redactor([...always, ...env.map(([, v]) => v)]),
    results: new Redactor([...always, ...env.filter(([k]) => SECRET_NAME.test(k)).map(([, v]) => v)]),
  };
}
