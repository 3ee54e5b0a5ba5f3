/**
 * What a worker learned about each server's protocol era, kept for its next connect so a connect
 * skips the `server/discover` probe: `modern` with the server's discover result (the SDK adopts it
 * with no round trip), or `legacy` (the plain `initialize` handshake, no probe).
 *
 * Rules:
 *   - One verdict per server endpoint and authorization context (its headers, OAuth client, stdio
 *     environment: a fingerprint, never the values). A discover result the server marks
 *     `cacheScope: "public"` also serves other contexts of the same endpoint.
 *   - A verdict expires: a modern one when the discover result's `ttlMs` says (0 = not reused), and
 *     never later than the server's `discovery_ttl_ms`; a legacy one after `discovery_ttl_ms` (an
 *     upgraded server still answers `initialize`, so a legacy verdict would otherwise hold forever).
 *   - A connect that fails with a verdict forgets it, and the next connect probes.
 */
import { createHash } from 'node:crypto';
import type { PriorDiscovery } from '@modelcontextprotocol/client';
import type { ServerConfig } from './config-schema';

/** A discover result is never trusted longer than this, whatever the server says (the SDK's own cap). */
const MAX_VERDICT_MS = 24 * 3_600_000;

interface Kept {
  prior: PriorDiscovery;
  expiresAt: number;
}

/** Where the server is: the same endpoint under any credentials. */
function endpointOf(config: ServerConfig): string {
  return config.transport === 'stdio'
    ? JSON.stringify(['stdio', config.command, config.args, config.cwd ?? ''])
    : JSON.stringify([config.transport, config.url]);
}

/** Who asks: what the server may answer differently for (credentials, environment). */
function contextOf(config: ServerConfig): string {
  const o = config.oauth;
  return JSON.stringify([
    config.env,
    config.headers,
    o ? [o.grant, o.clientId ?? '', o.issuer ?? '', o.scope ?? '', o.clientMetadataUrl ?? ''] : null,
  ]);
}

const digest = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** See the file comment. One per worker process ({@link workerEraVerdicts}); tests make their own. */
export class EraVerdicts {
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The verdict to connect with, if a fresh one is known. */
  get(config: ServerConfig): PriorDiscovery | undefined {
    for (const key of this.keys(config)) {
      const kept = this.kept.get(key);
      if (!kept) continue;
      if (kept.expiresAt > this.now()) return kept.prior;
      this.kept.delete(key);
    }
    return undefined;
  }

  /** Keeps what a connect negotiated. */
  remember(config: ServerConfig, prior: PriorDiscovery): void {
    const ttl = Math.min(config.discoveryTtlMs, MAX_VERDICT_MS);
    if (prior.kind === 'legacy') {
      this.kept.set(this.keys(config).private, { prior, expiresAt: this.now() + ttl });
      return;
    }
    const hinted = prior.discover.ttlMs;
    const ms = typeof hinted === 'number' ? Math.min(Math.max(0, hinted), ttl) : ttl;
    if (ms <= 0) return;
    const keys = this.keys(config);
    const [key, other] = prior.discover.cacheScope === 'public' ? [keys.public, keys.private] : [keys.private, keys.public];
    this.kept.set(key, { prior, expiresAt: this.now() + ms });
    this.kept.delete(other);
  }

  /** Forgets every verdict of this server for this context (a connect with it failed). */
  forget(config: ServerConfig): void {
    for (const key of this.keys(config)) this.kept.delete(key);
  }

  private keys(config: ServerConfig): { private: string; public: string } & Iterable<string> {
    const endpoint = endpointOf(config);
    const keys = { private: digest(JSON.stringify([endpoint, contextOf(config)])), public: digest(endpoint) };
    return { ...keys, *[Symbol.iterator]() { yield keys.private; yield keys.public; } };
  }
}

/** The worker process's verdicts, shared by every pool and connection in it. */
export const workerEraVerdicts = new EraVerdicts();
