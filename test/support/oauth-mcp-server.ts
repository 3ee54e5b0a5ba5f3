/**
 * A real OAuth-protected MCP server on 127.0.0.1 for tests, built from the MCP SDK's server auth
 * helpers: protected resource metadata, authorization server metadata, dynamic client registration,
 * an authorization endpoint that approves at once (the person's consent stands in), PKCE-checked
 * code exchange, refresh with rotation (a refresh token works once), bearer checks on /mcp with a
 * strict expiry, and a client credentials grant. Access tokens live `accessTtlS` seconds, so tests
 * can cross many expiries. Every token issued is kept, so a test can scan for it.
 *
 * Tools: `echo {text}` and `token_echo {}`, which answers with the bearer token it was called with
 * (a server that echoes its credentials, to show the client redacts them).
 *
 * Two eras of MCP endpoint behind the same protected resource and authorization server:
 *   - `legacy`: a 2025 stateless streamable HTTP endpoint (the v1 SDK's transport);
 *   - `modern`: a 2026-07-28-only endpoint (the v2 SDK's `createMcpHandler` with
 *     `legacy: 'reject'`), which refuses the 2025 `initialize` handshake.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Response } from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpHandler, McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** What the server saw, for assertions. */
export interface OAuthServerStats {
  registrations: number;
  codeGrants: number;
  refreshGrants: number;
  /** Refresh tokens presented after they had been used (a client racing itself). */
  reusedRefreshTokens: number;
  clientCredentialGrants: number;
  /** Requests to /mcp refused because the access token had expired. */
  expiredTokenRefusals: number;
  toolCalls: number;
}

export interface OAuthMcpServer {
  /** The MCP endpoint (`…/mcp`). */
  url: string;
  stats: OAuthServerStats;
  /** Every access and refresh token issued so far. */
  issuedTokens(): string[];
  close(): Promise<void>;
}

const token = (): string => `tok-${randomBytes(18).toString('base64url')}`;

/** Which protocol era the MCP endpoint speaks (see the file comment). */
export type McpEra = 'legacy' | 'modern';

export async function startOAuthMcpServer(opts: {
  /** @default 'legacy' */
  era?: McpEra;
  accessTtlS: number;
  /** The `expires_in` told to clients, when it should differ from the real lifetime (a server that ends tokens early). */
  advertisedTtlS?: number;
  /** A pre-registered machine client for the client credentials grant. */
  machineClient?: { id: string; secret: string };
}): Promise<OAuthMcpServer> {
  const stats: OAuthServerStats = {
    registrations: 0,
    codeGrants: 0,
    refreshGrants: 0,
    reusedRefreshTokens: 0,
    clientCredentialGrants: 0,
    expiredTokenRefusals: 0,
    toolCalls: 0,
  };
  const clients = new Map<string, OAuthClientInformationFull>();
  const codes = new Map<string, { clientId: string; params: AuthorizationParams }>();
  const access = new Map<string, { clientId: string; scopes: string[]; expiresAt: number }>();
  const refresh = new Map<string, { clientId: string; scopes: string[] }>();
  const usedRefresh = new Set<string>();
  const issued: string[] = [];

  const issue = (clientId: string, scopes: string[], refreshable: boolean): OAuthTokens => {
    const accessToken = token();
    access.set(accessToken, { clientId, scopes, expiresAt: Date.now() + opts.accessTtlS * 1000 });
    issued.push(accessToken);
    const tokens: OAuthTokens = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: opts.advertisedTtlS ?? opts.accessTtlS,
      scope: scopes.join(' '),
    };
    if (refreshable) {
      const refreshToken = token();
      refresh.set(refreshToken, { clientId, scopes });
      issued.push(refreshToken);
      tokens.refresh_token = refreshToken;
    }
    return tokens;
  };

  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) => clients.get(id),
    registerClient: (client) => {
      stats.registrations++;
      const full = client as OAuthClientInformationFull;
      clients.set(full.client_id, full);
      return full;
    },
  };
  if (opts.machineClient) {
    clients.set(opts.machineClient.id, {
      client_id: opts.machineClient.id,
      client_secret: opts.machineClient.secret,
      redirect_uris: [],
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
  }

  const provider: OAuthServerProvider = {
    clientsStore,
    async authorize(client, params, res: Response) {
      const code = token();
      codes.set(code, { clientId: client.client_id, params });
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state !== undefined) target.searchParams.set('state', params.state);
      res.redirect(target.href);
    },
    async challengeForAuthorizationCode(_client, code) {
      const grant = codes.get(code);
      if (!grant) throw new InvalidGrantError('unknown authorization code');
      return grant.params.codeChallenge;
    },
    async exchangeAuthorizationCode(client, code) {
      const grant = codes.get(code);
      if (!grant || grant.clientId !== client.client_id)
        throw new InvalidGrantError('unknown authorization code');
      codes.delete(code);
      stats.codeGrants++;
      return issue(client.client_id, grant.params.scopes ?? [], true);
    },
    async exchangeRefreshToken(client, refreshToken) {
      const grant = refresh.get(refreshToken);
      if (!grant || grant.clientId !== client.client_id) {
        if (usedRefresh.has(refreshToken)) stats.reusedRefreshTokens++;
        throw new InvalidGrantError('refresh token unknown or already used');
      }
      refresh.delete(refreshToken);
      usedRefresh.add(refreshToken);
      stats.refreshGrants++;
      return issue(client.client_id, grant.scopes, true);
    },
    async verifyAccessToken(bearer): Promise<AuthInfo> {
      const grant = access.get(bearer);
      if (!grant) throw new InvalidTokenError('unknown token');
      if (grant.expiresAt <= Date.now()) {
        stats.expiredTokenRefusals++;
        throw new InvalidTokenError('token expired');
      }
      // In seconds, not rounded: the SDK's bearer check refuses a token whose expiresAt has passed.
      return {
        token: bearer,
        clientId: grant.clientId,
        scopes: grant.scopes,
        expiresAt: grant.expiresAt / 1000,
      };
    },
  };

  const app = express();
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const mcpUrl = new URL(`${base}/mcp`);

  // The SDK's token endpoint has no client credentials grant: this one answers it first.
  app.post('/token', express.urlencoded({ extended: false }), (req, res, next) => {
    const body = req.body as Record<string, string | undefined>;
    if (body.grant_type !== 'client_credentials') return next();
    // client_secret_basic or client_secret_post, whichever the client chose.
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = basic
      ? Buffer.from(basic, 'base64')
          .toString()
          .split(':')
          .map((part) => decodeURIComponent(part))
      : [body.client_id, body.client_secret];
    const client = id ? clients.get(id) : undefined;
    if (!client?.client_secret || client.client_secret !== secret) {
      res.status(401).json({ error: 'invalid_client', error_description: 'unknown client or wrong secret' });
      return;
    }
    stats.clientCredentialGrants++;
    res.json(issue(client.client_id, body.scope?.split(' ') ?? [], false));
  });
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: mcpUrl,
      scopesSupported: ['mcp:tools'],
      authorizationOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
    }),
  );

  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  const modern =
    opts.era === 'modern' ? createMcpHandler(() => modernMcpServer(stats), { legacy: 'reject' }) : undefined;
  if (modern) {
    // The v2 handler is web-standard: the request is handed over as it came, with the bearer check's result.
    app.post('/mcp', bearer, express.raw({ type: () => true, limit: '4mb' }), async (req, res) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      const answer = await modern.fetch(
        new Request(new URL(req.originalUrl, base), { method: 'POST', headers, body: req.body as Buffer }),
        { authInfo: req.auth },
      );
      res.status(answer.status);
      answer.headers.forEach((value, name) => res.setHeader(name, value));
      if (answer.body) for await (const chunk of answer.body) res.write(chunk);
      res.end();
    });
  } else {
    app.post('/mcp', bearer, express.json(), async (req, res) => {
      const mcp = new McpServer({ name: 'oauth-test', version: '1.0.0' });
      mcp.registerTool(
        'echo',
        { description: 'Echoes text', inputSchema: { text: z.string() } },
        ({ text }) => {
          stats.toolCalls++;
          return { content: [{ type: 'text', text }] };
        },
      );
      mcp.registerTool(
        'token_echo',
        { description: 'Answers with the bearer token it was called with' },
        (extra) => {
          stats.toolCalls++;
          return { content: [{ type: 'text', text: `your token is ${extra.authInfo?.token}` }] };
        },
      );
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
  }
  app.get('/mcp', (_req, res) => {
    res.status(405).end();
  });

  return {
    url: mcpUrl.href,
    stats,
    issuedTokens: () => [...issued],
    close: async () => {
      await modern?.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

/** The same two tools on a v2 server, one instance per request (the modern endpoint's factory). */
function modernMcpServer(stats: OAuthServerStats): ModernMcpServer {
  const mcp = new ModernMcpServer({ name: 'oauth-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  mcp.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string() } }, ({ text }) => {
    stats.toolCalls++;
    return { content: [{ type: 'text', text }] };
  });
  mcp.registerTool(
    'token_echo',
    { description: 'Answers with the bearer token it was called with' },
    (ctx) => {
      stats.toolCalls++;
      return { content: [{ type: 'text', text: `your token is ${ctx.http?.authInfo?.token}` }] };
    },
  );
  return mcp;
}
