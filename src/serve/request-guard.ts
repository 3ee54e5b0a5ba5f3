/**
 * Who may talk to `serve`, checked before any route runs:
 * - the `Host` a request names must be one of the server's own names (its loopback names on its
 *   port, its bind address, `allowedHosts`): a web page that rebinds its own DNS name to 127.0.0.1
 *   names its own host, and is refused (403);
 * - an `Origin`, when a browser sends one, must be the server's own (http://<allowed host>) or in
 *   `allowedOrigins` (403 otherwise): no other page's script can approve a tool call;
 * - with tokens configured, every route needs `Authorization: Bearer <token>` (401 otherwise),
 *   compared in constant time, unless the route the router matched is declared open
 *   (`config: { open: true }`: the page's static files, `/openapi.json`, `/v1/info`, which hold
 *   nothing secret). The decision is the matched route's, so no spelling of a path (percent-encoded,
 *   absolute-form, trailing slash) reaches a closed route without a token. A CORS preflight
 *   (OPTIONS) carries no credentials and runs no route: it is open. The token's name is who acts.
 *
 * Two hooks: `identify` (onRequest) checks Host and Origin and names the caller; the rate limit
 * then counts the request (per token, or per client address without a valid one); `authenticate`
 * (preParsing) refuses a closed route without a valid token, so refused attempts are counted too
 * and their bodies are never parsed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { oneLine } from '../core/text';
import type { ServeSettings, ServeToken } from '../config/serve-settings';

/** Who acts on a request without tokens configured (a loopback bind). */
export const LOCAL_ACTOR = 'local user';

/** How much of a header a refusal repeats. */
const ECHO_MAX = 100;

declare module 'fastify' {
  interface FastifyRequest {
    /** The token's name, or {@link LOCAL_ACTOR} when no token is configured; empty before `authenticate` passed. */
    actor: string;
    /** The name of the valid token the request presented, if any (its rate limit is the token's). */
    tokenName: string | undefined;
    /** Why the request's credentials do not name a token (with tokens configured). */
    refusal: string | undefined;
  }
  interface FastifyContextConfig {
    /** Served without a token (it holds nothing secret). */
    open?: boolean;
  }
}

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

/**
 * Installs the guard on `app`: both hooks, before any route is added. A route-level `onRequest`
 * hook (the rate limit's) runs between them.
 */
export function guardRequests(app: FastifyInstance, settings: ServeSettings, port: () => number): void {
  app.decorateRequest('actor', '');
  app.decorateRequest('tokenName', undefined);
  app.decorateRequest('refusal', undefined);
  app.addHook('onRequest', identifyCaller(settings, port));
  app.addHook('preParsing', authenticate(settings));
}

/** The `onRequest` hook: Host and Origin (403), then who the request's token names; `port()` is the port listened on. */
function identifyCaller(settings: ServeSettings, port: () => number) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const hosts = allowedHostsOf(settings, port());
    const host = (request.headers.host ?? '').toLowerCase();
    const bare = host.replace(/:(80|443)$/, '');
    if (!hosts.has(host) && !hosts.has(bare)) {
      await reply.code(403).send({ error: `Host ${oneLine(host, ECHO_MAX) || '(none)'} is not one of this server's names: add it to serve.allowedHosts` });
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !originAllowed(settings, hosts, origin)) {
      await reply.code(403).send({ error: `Origin ${oneLine(origin, ECHO_MAX)} may not call this server: add it to serve.allowedOrigins` });
      return;
    }
    request.actor = '';
    request.tokenName = undefined;
    request.refusal = undefined;
    if (settings.tokens.length === 0) return;
    const caller = bearerCaller(settings.tokens, request.headers.authorization, 'serve.tokens');
    if ('name' in caller) request.tokenName = caller.name;
    else request.refusal = caller.refusal;
  };
}

/** Whether the route a request matched is served without a token. */
function isOpen(request: FastifyRequest): boolean {
  return request.routeOptions.config?.open === true || request.method === 'OPTIONS';
}

/** The `preParsing` hook: a closed route needs a valid token (401); sets who acts. */
function authenticate(settings: ServeSettings) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (settings.tokens.length === 0) {
      request.actor = LOCAL_ACTOR;
      return;
    }
    if (request.tokenName !== undefined) {
      request.actor = request.tokenName;
      return;
    }
    if (isOpen(request) || request.is404) return;
    await reply.code(401).header('www-authenticate', 'Bearer').send({ error: request.refusal ?? 'missing Authorization: Bearer <token>' });
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
