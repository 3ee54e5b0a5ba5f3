/**
 * Who may talk to `serve`, checked before any route runs:
 * - the `Host` a request names must be one of the server's own names (its loopback names on its
 *   port, its bind address, `allowedHosts`): a web page that rebinds its own DNS name to 127.0.0.1
 *   names its own host, and is refused (403);
 * - an `Origin`, when a browser sends one, must be the server's own (http://<allowed host>) or in
 *   `allowedOrigins` (403 otherwise): no other page's script can approve a tool call;
 * - with tokens configured, `/v1/…` and `/api/…` need `Authorization: Bearer <token>` (401
 *   otherwise), compared in constant time; the token's name is who acts (the approver).
 * The page's static files, `/openapi.json` and `/v1/info` are open (they hold nothing secret).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServeSettings, ServeToken } from './serve-settings';

/** Who acts on a request without tokens configured (a loopback bind). */
export const LOCAL_ACTOR = 'local user';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token's name, or {@link LOCAL_ACTOR} when no token is configured. */
    actor: string;
  }
}

const OPEN_PATHS = new Set(['/openapi.json', '/v1/info']);

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The name of the token `presented` is, comparing against every token in constant time. */
export function tokenName(tokens: readonly ServeToken[], presented: string): string | undefined {
  const wanted = digest(presented);
  let found: string | undefined;
  for (const t of tokens) if (timingSafeEqual(digest(t.token), wanted) && found === undefined) found = t.name;
  return found;
}

/**
 * Who an `Authorization` header names among `tokens`: the token's name, or the line a 401 answers
 * with (`tokensName` says which tokens, e.g. "serve.tokens").
 */
export function bearerCaller(tokens: readonly ServeToken[], authorization: string | undefined, tokensName: string): { name: string } | { refusal: string } {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const name = match ? tokenName(tokens, match[1]!) : undefined;
  if (name) return { name };
  return { refusal: match ? `the bearer token is not one of ${tokensName}` : 'missing Authorization: Bearer <token>' };
}

/**
 * The host names (lower case, with port) requests may name: the loopback names on the port, the
 * bound address unless it is a wildcard, and the listed ones (lower case already).
 */
export function allowedHostsOf(settings: Pick<ServeSettings, 'host' | 'allowedHosts'>, port: number): Set<string> {
  const hosts = new Set<string>();
  for (const name of ['localhost', '127.0.0.1', '[::1]']) hosts.add(`${name}:${port}`);
  if (settings.host !== '0.0.0.0' && settings.host !== '::') hosts.add(`${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`);
  for (const h of settings.allowedHosts) hosts.add(h);
  return hosts;
}

/** The `onRequest` hook that applies the rules in the file comment; `port()` is the port listened on. */
export function requestGuard(settings: ServeSettings, port: () => number) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const hosts = allowedHostsOf(settings, port());
    const host = (request.headers.host ?? '').toLowerCase();
    const bare = host.replace(/:(80|443)$/, '');
    if (!hosts.has(host) && !hosts.has(bare)) {
      await reply.code(403).send({ error: `Host ${host || '(none)'} is not one of this server's names: add it to serve.allowedHosts` });
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !originAllowed(settings, hosts, origin)) {
      await reply.code(403).send({ error: `Origin ${origin} may not call this server: add it to serve.allowedOrigins` });
      return;
    }
    request.actor = LOCAL_ACTOR;
    const path = request.url.split('?')[0]!;
    if (settings.tokens.length === 0 || OPEN_PATHS.has(path) || !(path.startsWith('/v1/') || path.startsWith('/api/'))) return;
    const caller = bearerCaller(settings.tokens, request.headers.authorization, 'serve.tokens');
    if ('refusal' in caller) {
      await reply.code(401).header('www-authenticate', 'Bearer').send({ error: caller.refusal });
      return;
    }
    request.actor = caller.name;
  };
}

/** Whether a browser on `origin` may call: the server's own origin (one of `hosts`) or an allowed one. */
export function originAllowed(settings: ServeSettings, hosts: ReadonlySet<string>, origin: string): boolean {
  if (settings.allowedOrigins.includes(origin)) return true;
  try {
    const url = new URL(origin);
    return hosts.has(url.host.toLowerCase()) && (url.protocol === 'http:' || url.protocol === 'https:');
  } catch {
    return false;
  }
}
