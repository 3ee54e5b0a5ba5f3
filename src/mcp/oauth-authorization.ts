/**
 * The one step of OAuth a person does, behind `mcp-turns auth <server>`: the authorization code
 * flow with PKCE through the MCP SDK's `auth()`, with the redirect received on a localhost port.
 *
 *   1. The server is asked as a worker would ask it, without a token, to read its challenge
 *      (`WWW-Authenticate`: the protected resource metadata URL and the scope it wants). The
 *      client negotiates the protocol era, so a 2026-07-28-only server answers too; a server that
 *      refuses streamable HTTP is asked over legacy SSE.
 *   2. `auth()` discovers the authorization server, registers a client when none is configured
 *      and the server offers registration, and builds the authorization URL; the person opens it.
 *   3. The redirect arrives on `http://127.0.0.1:<redirect_port>/callback`; its `state` is checked
 *      and `auth()` exchanges the code (checking the `iss` it carries against the authorization
 *      server's issuer). The tokens go to the server's token store.
 *   4. A worker-side connection lists the server's tools with the stored tokens, as proof.
 *
 * For a client credentials server there is nothing for a person to do: the grant is tried once and
 * the tools listed, and nothing is stored.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  auth,
  Client,
  computeScopeUnion,
  extractWWWAuthenticateParams,
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type FetchLike,
  type Transport,
} from '@modelcontextprotocol/client';
import type { ServerConfig } from './config-schema';
import { silentLogger, type McpLogger } from './logger';
import { McpOAuthProvider } from './oauth-provider';
import { ServerConnection } from './server-connection';

/** How long a person has to finish in the browser. */
const DEFAULT_TIMEOUT_MS = 5 * 60_000;

/** Options of {@link authorizeServer}. */
export interface AuthorizeOptions {
  /** Hands the authorization URL to the person: print it, open a browser. */
  openUrl(url: URL): Promise<void> | void;
  /** Give up waiting for the redirect after this long. @default 300000 */
  timeoutMs?: number;
  log?: McpLogger;
}

/** What {@link authorizeServer} achieved. */
export interface AuthorizeResult {
  grant: 'client_credentials' | 'authorization_code';
  /** The scope granted, as the authorization server reported it. */
  scope?: string;
  /** Access token lifetime in seconds, when the server said. */
  expiresInS?: number;
  /** Whether a refresh token came with it (without one a person must authorize again at expiry). */
  refreshable: boolean;
  /** Tools the server listed with the new authorization. */
  tools: number;
  /** Where the tokens were stored (authorization code with the default store). */
  tokenFile?: string;
}

/** What a server's first refusal says: where its metadata is and which scope it wants. */
interface Challenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

/**
 * Asks the server as a worker would, without a token, and reads its first 401 or 403 challenge
 * (some servers let `initialize` through and refuse only `tools/list`). Streamable HTTP refused
 * with 400, 404 or 405 before any challenge is a legacy SSE server: it is asked over SSE.
 */
async function readChallenge(config: ServerConfig): Promise<Challenge | undefined> {
  let challenge: Challenge | undefined;
  const observe: FetchLike = async (input, init) => {
    const response = await fetch(input, init);
    if (!challenge && (response.status === 401 || response.status === 403)) {
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
      challenge = { resourceMetadataUrl, scope };
    }
    return response;
  };
  const url = new URL(config.url!);
  const options = { requestInit: { headers: config.headers }, fetch: observe };
  const ask = async (transport: Transport): Promise<void> => {
    const client = new Client(
      { name: 'mcp-turns', version: '0.1.0' },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    try {
      await client.connect(transport, { timeout: config.connectTimeoutMs });
      await client.listTools(undefined, { timeout: config.listTimeoutMs });
    } finally {
      await transport.close().catch(() => undefined);
    }
  };
  try {
    if (config.transport === 'sse') {
      await ask(new SSEClientTransport(url, options));
    } else {
      await ask(new StreamableHTTPClientTransport(url, options)).catch(async (err: unknown) => {
        const status = err instanceof SdkHttpError ? err.status : undefined;
        if (challenge || (status !== 400 && status !== 404 && status !== 405)) throw err;
        await ask(new SSEClientTransport(url, options));
      });
    }
  } catch {
    // The refusal is the point; its challenge was captured above.
  }
  return challenge;
}

/** What the redirect brought: the code, and the issuer that sent it (RFC 9207) when it names one. */
interface Redirected {
  code: string;
  iss?: string;
}

/** A one-shot listener for the authorization redirect on 127.0.0.1. */
async function listenForRedirect(
  port: number,
  state: string,
): Promise<{ redirectUrl: string; code: Promise<Redirected>; close(): void }> {
  let settle!: { resolve(redirected: Redirected): void; reject(err: Error): void };
  const code = new Promise<Redirected>((resolve, reject) => (settle = { resolve, reject }));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    const error = url.searchParams.get('error');
    const got = url.searchParams.get('code');
    const answer = (status: number, text: string): void => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
    };
    if (url.searchParams.get('state') !== state) {
      answer(400, 'mcp-turns: this redirect does not belong to the authorization in progress.');
      return;
    }
    if (error || !got) {
      const description = url.searchParams.get('error_description');
      answer(
        400,
        `mcp-turns: authorization failed: ${error ?? 'no code'}${description ? ` (${description})` : ''}`,
      );
      settle.reject(
        new Error(`authorization refused: ${error ?? 'no code'}${description ? ` (${description})` : ''}`),
      );
      return;
    }
    answer(200, 'mcp-turns: authorized. You can close this window.');
    settle.resolve({ code: got, iss: url.searchParams.get('iss') ?? undefined });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    redirectUrl: `http://127.0.0.1:${bound}/callback`,
    code,
    close: () => server.close(),
  };
}

function timeout(ms: number, what: string): { promise: Promise<never>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not happen within ${Math.round(ms / 1000)} s`)),
      ms,
    );
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Proves the stored authorization works the way a worker uses it: a connection lists the tools. */
async function listToolsAsWorker(config: ServerConfig, log: McpLogger): Promise<number> {
  const connection = new ServerConnection(config, log);
  try {
    return (await connection.tools({ force: true })).length;
  } finally {
    await connection.close();
  }
}

/** Runs the step a person does for `config` (see the file comment) and proves it worked. */
export async function authorizeServer(
  config: ServerConfig,
  options: AuthorizeOptions,
): Promise<AuthorizeResult> {
  const settings = config.oauth;
  if (!settings || !config.url) throw new Error(`server ${config.name} has no oauth settings`);
  const log = options.log ?? silentLogger;
  const serverUrl = config.url;

  if (settings.grant === 'client_credentials') {
    const provider = new McpOAuthProvider(config, { log });
    const result = await auth(provider, { serverUrl, fetchFn: provider.fetch });
    if (result !== 'AUTHORIZED') throw new Error(`client credentials for ${config.name} were not accepted`);
    const tokens = await provider.tokens();
    return {
      grant: settings.grant,
      scope: tokens?.scope,
      expiresInS: tokens?.expires_in,
      refreshable: false,
      tools: await listToolsAsWorker(config, log),
    };
  }

  const state = randomBytes(24).toString('base64url');
  const redirect = await listenForRedirect(settings.redirectPort, state);
  redirect.code.catch(() => undefined); // a refusal before anyone waits must not go unhandled
  const limit = timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'the authorization redirect');
  try {
    let opened = false;
    const provider = new McpOAuthProvider(config, {
      log,
      interactive: {
        redirectUrl: redirect.redirectUrl,
        state,
        openAuthorizationUrl: async (url) => {
          opened = true;
          await options.openUrl(url);
        },
      },
    });
    // Discovered afresh: the server may have moved to another authorization server since the
    // metadata was stored, and `auth()` would otherwise keep going to the old one (SEP-2352).
    await provider.invalidateCredentials('discovery');
    const challenge = await readChallenge(config);
    const scope = computeScopeUnion(challenge?.scope, await provider.pendingScope(), settings.scope);
    const request = {
      serverUrl,
      resourceMetadataUrl: challenge?.resourceMetadataUrl,
      scope,
      fetchFn: provider.fetch,
    };
    let result = await auth(provider, request);
    if (result === 'REDIRECT') {
      if (!opened) throw new Error('the authorization URL was never produced');
      const { code, iss } = await Promise.race([redirect.code, limit.promise]);
      result = await auth(provider, { ...request, authorizationCode: code, iss });
    }
    if (result !== 'AUTHORIZED') throw new Error(`authorization of ${config.name} did not complete`);
    const tokens = await provider.tokens();
    return {
      grant: settings.grant,
      scope: tokens?.scope,
      expiresInS: tokens?.expires_in,
      refreshable: tokens?.refresh_token !== undefined,
      tools: await listToolsAsWorker(config, log),
      ...(settings.store ? {} : { tokenFile: settings.tokenFile }),
    };
  } finally {
    limit.cancel();
    redirect.close();
  }
}
