/**
 * Who may talk to `serve`, checked before any route runs:
 * - the `Host` a request names must be one of the server's own names (its loopback names on its
 *   port, its bind address, `allowedHosts`): a web page that rebinds its own DNS name to 127.0.0.1
 *   names its own host, and is refused (403);
 * - an `Origin`, when a browser sends one, must be the server's own (http://<allowed host>) or in
 *   `allowedOrigins` (403 otherwise): no other page's script can approve a tool call;
 * - with sign-in configured (static tokens, OpenID JWTs or both), every route needs
 *   `Authorization: Bearer <token or JWT>` (401 otherwise), a static token compared in constant
 *   time, a JWT verified against its issuer's keys (src/serve/jwt-verifier.ts; 503 while the
 *   issuer's keys cannot be read), unless the route the router matched is declared open
 *   (`config: { open: true }`: the page's static files, `/openapi.json`, `/v1/info`, which hold
 *   nothing secret). The decision is the matched route's, so no spelling of a path (percent-encoded,
 *   absolute-form, trailing slash) reaches a closed route without a token. A CORS preflight
 *   (OPTIONS) carries no credentials and runs no route: it is open.
 * - who acts is the request's {@link Caller} (src/serve/caller.ts): the token's holder, the JWT's
 *   subject, or the local user without sign-in.
 *
 * Two hooks: `identify` (onRequest) checks Host and Origin and names the caller; the rate limit
 * then counts the request (per caller, or per client address without valid credentials);
 * `authenticate` (preParsing) refuses a closed route without valid credentials, so refused attempts
 * are counted too and their bodies are never parsed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { oneLine } from '../core/text';
import { authRequired, type ServeSettings, type ServeToken } from '../config/serve-settings';
import { LOCAL_CALLER, tokenCaller, type Caller } from './caller';
import { JwtVerifier, looksLikeJwt, OpenIdUnavailable } from './jwt-verifier';

/** How much of a header a refusal repeats. */
const ECHO_MAX = 100;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who the request's credentials name (its rate limit is theirs), or the local user without
     * sign-in configured; undefined without valid credentials (only an open route runs then).
     */
    caller: Caller | undefined;
    /** Why the request's credentials name nobody (with sign-in configured), and its status (401, or 503 while the issuer's keys cannot be read). */
    refusal: { status: 401 | 503; line: string } | undefined;
  }
  interface FastifyContextConfig {
    /** Served without a token (it holds nothing secret). */
    open?: boolean;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The token `presented` is, comparing against every token in constant time. */
export function tokenOf(tokens: readonly ServeToken[], presented: string): ServeToken | undefined {
  const wanted = digest(presented);
  let found: ServeToken | undefined;
  for (const t of tokens) if (timingSafeEqual(digest(t.token), wanted) && found === undefined) found = t;
  return found;
}

/** The credentials of an `Authorization: Bearer` header, if it has that form. */
export function bearerOf(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
}

/**
 * Who an `Authorization` header names among `tokens`: the token's name, or the line a 401 answers
 * with (`tokensName` says which tokens, e.g. "the codec server tokens").
 */
export function bearerCaller(tokens: readonly ServeToken[], authorization: string | undefined, tokensName: string): { name: string } | { refusal: string } {
  const bearer = bearerOf(authorization);
  const token = bearer !== undefined ? tokenOf(tokens, bearer) : undefined;
  if (token) return { name: token.name };
  return { refusal: bearer !== undefined ? `the bearer token is not one of ${tokensName}` : 'missing Authorization: Bearer <token>' };
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
  app.decorateRequest('caller', undefined);
  app.decorateRequest('refusal', undefined);
  const jwt = settings.jwt ? new JwtVerifier(settings.jwt) : undefined;
  app.addHook('onRequest', identifyCaller(settings, port, jwt));
  app.addHook('preParsing', authenticate(settings));
}

/** The 401 line of a request without `Authorization: Bearer`. */
function missingCredentials(settings: ServeSettings): { status: 401; line: string } {
  return { status: 401, line: `missing Authorization: Bearer <${settings.tokens.length ? 'token' : 'JWT'}>` };
}

/**
 * Who `bearer` names: the holder of a static token, else (when it has a JWT's shape and JWTs are
 * configured) the JWT's subject; else the refusal.
 */
async function callerOf(settings: ServeSettings, jwt: JwtVerifier | undefined, bearer: string | undefined): Promise<{ caller: Caller } | { refusal: { status: 401 | 503; line: string } }> {
  if (bearer === undefined) return { refusal: missingCredentials(settings) };
  const token = tokenOf(settings.tokens, bearer);
  if (token) return { caller: tokenCaller(token.name, token.role === 'admin') };
  if (jwt && looksLikeJwt(bearer)) {
    try {
      const verified = await jwt.verify(bearer);
      return 'caller' in verified ? verified : { refusal: { status: 401, line: verified.refusal } };
    } catch (err) {
      if (err instanceof OpenIdUnavailable) return { refusal: { status: 503, line: `sign-in is unavailable: ${err.message}` } };
      throw err;
    }
  }
  const accepted = [...(settings.tokens.length ? ['one of serve.tokens'] : []), ...(jwt ? [`a JWT from ${settings.jwt!.issuer}`] : [])];
  return { refusal: { status: 401, line: `the bearer token is not ${accepted.join(' or ')}` } };
}

/** The `onRequest` hook: Host and Origin (403), then who the request's credentials name; `port()` is the port listened on. */
function identifyCaller(settings: ServeSettings, port: () => number, jwt: JwtVerifier | undefined) {
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
    request.caller = undefined;
    request.refusal = undefined;
    if (!authRequired(settings)) {
      request.caller = LOCAL_CALLER;
      return;
    }
    const found = await callerOf(settings, jwt, bearerOf(request.headers.authorization));
    if ('caller' in found) request.caller = found.caller;
    else request.refusal = found.refusal;
  };
}

/** Whether the route a request matched is served without a token. */
function isOpen(request: FastifyRequest): boolean {
  return request.routeOptions.config?.open === true || request.method === 'OPTIONS';
}

/** The `preParsing` hook: a closed route needs valid credentials (401, or 503 while they cannot be checked). */
function authenticate(settings: ServeSettings) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.caller !== undefined || isOpen(request) || request.is404) return;
    const refusal = request.refusal ?? missingCredentials(settings);
    if (refusal.status === 401) reply.header('www-authenticate', 'Bearer');
    await reply.code(refusal.status).send({ error: refusal.line });
  };
}

/** The caller of a request on a closed route (the guard let it through, so there is one). */
export function callerOfRequest(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('no caller: the route is not behind the guard');
  return request.caller;
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
