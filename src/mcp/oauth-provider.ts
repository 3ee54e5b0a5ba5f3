/**
 * OAuth 2.1 for one remote MCP server, through the MCP SDK's own client auth: this is the SDK's
 * `OAuthClientProvider` (what to send, where to keep it), and the SDK's `auth()` does the rest —
 * protected resource metadata, authorization server metadata, dynamic client registration when the
 * server offers it, PKCE, the token requests and the refresh. The SDK's transports call `auth()`
 * themselves when a server answers 401 (or 403 `insufficient_scope`) and then repeat the request.
 *
 * Credentials are presented to one authorization server only: the SDK stamps what it stores with
 * the server's `issuer` and ignores what is stamped for another. A configured client goes to the
 * authorization server its `issuer` setting names (to any when the setting is absent), and is never
 * replaced by a registration.
 *
 * Two grants:
 *   - `client_credentials`: machine to machine; the worker fetches its own tokens (kept in memory
 *     unless a store is given) and fetches new ones when they expire.
 *   - `authorization_code` (with PKCE): a person authorizes once with `mcp-turns auth <server>`
 *     (src/mcp/oauth-authorization.ts); the worker then reads the tokens from the token store and
 *     refreshes them itself. A worker never starts an authorization: when a person is needed again
 *     (no tokens, a refresh token refused, a scope the grant lacks) the call fails saying so.
 *
 * A token that is about to expire is refreshed before it is sent, once for all the requests that
 * want it at that moment, so a busy connection does not answer a wave of 401s with a wave of refresh
 * requests (which a server that rotates refresh tokens would refuse after the first).
 *
 * Every token received is added to the server's {@link RuntimeSecrets}, so the redaction of tool
 * results, errors and logs covers it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  auth,
  AuthorizationServerMismatchError,
  computeScopeUnion,
  extractWWWAuthenticateParams,
  isStrictScopeSuperset,
  type FetchLike,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { ServerConfig } from './config-schema';
import { silentLogger, type McpLogger } from './logger';
import { runtimeSecrets, type RuntimeSecrets } from './redaction';
import { FileTokenStore, MemoryTokenStore, type OAuthRecord, type TokenStore } from './oauth-token-store';

/** A server's resolved `oauth` settings. */
export type OAuthSettings = NonNullable<ServerConfig['oauth']>;

/** A token is renewed when less than this share of its lifetime is left… */
const RENEW_AT_REMAINING_SHARE = 0.2;
/** …or less than this, whichever is sooner. */
const RENEW_AT_REMAINING_MS = 60_000;

/** How long a refresh answer is shared with late requests presenting the same refresh token. */
const SHARED_REFRESH_MS = 60_000;

/** The refresh token of a token request (`grant_type=refresh_token`), if `init` is one. */
function refreshTokenOf(init: RequestInit | undefined): string | undefined {
  if (init?.method !== 'POST' || !(init.body instanceof URLSearchParams)) return undefined;
  return init.body.get('grant_type') === 'refresh_token'
    ? (init.body.get('refresh_token') ?? undefined)
    : undefined;
}

/** A person must authorize (again) with `mcp-turns auth`; a worker cannot. */
export class AuthorizationRequiredError extends Error {
  override name = 'AuthorizationRequiredError';
}

/** The interactive side of the authorization code flow (only `mcp-turns auth` has one). */
export interface InteractiveAuthorization {
  /** The redirect URI the local listener receives the code on. */
  redirectUrl: string;
  /** The `state` sent with the authorization request; the redirect must carry it back. */
  state: string;
  /** Hands the authorization URL to the person (or whatever stands in for their browser). */
  openAuthorizationUrl(url: URL): Promise<void>;
}

/** The provider whose renewal runs the current `auth()` (its `tokens()` must not wait for that renewal). */
const renewingHere = new AsyncLocalStorage<McpOAuthProvider>();

/** Whether two issuers name the same authorization server (one trailing `/` aside, as the SDK compares them). */
function sameIssuer(a: string, b: string): boolean {
  const bare = (issuer: string): string => (issuer.endsWith('/') ? issuer.slice(0, -1) : issuer);
  return bare(a) === bare(b);
}

/** The SDK's `OAuthClientProvider` for one configured server; see the file comment. */
export class McpOAuthProvider implements OAuthClientProvider {
  readonly store: TokenStore;
  private readonly settings: OAuthSettings;
  private readonly secrets: RuntimeSecrets;
  private codeVerifierValue?: string;
  private renewing?: Promise<void>;
  private updating: Promise<void> = Promise.resolve();
  /** Refresh requests in flight or just answered, by refresh token (see {@link fetch}). */
  private readonly refreshes = new Map<
    string,
    Promise<{ status: number; statusText: string; headers: [string, string][]; body: string }>
  >();
  /** The tokens last handed to a request or to `auth()` (see {@link invalidateCredentials}). */
  private handedOut?: StoredOAuthTokens;
  /** Interactive only: tokens were received in this run. */
  private authorizedHere = false;

  constructor(
    private readonly server: Pick<ServerConfig, 'name' | 'url' | 'oauth'>,
    private readonly options: {
      interactive?: InteractiveAuthorization;
      log?: McpLogger;
      secrets?: RuntimeSecrets;
      now?: () => number;
    } = {},
  ) {
    if (!server.oauth || !server.url) throw new Error(`server ${server.name} has no oauth settings`);
    this.settings = server.oauth;
    this.secrets = options.secrets ?? runtimeSecrets(server as ServerConfig);
    this.secrets.add(this.settings.clientSecret);
    this.store =
      this.settings.store ??
      (this.settings.grant === 'client_credentials'
        ? new MemoryTokenStore()
        : new FileTokenStore(this.settings.tokenFile));
  }

  private get url(): string {
    return this.server.url!;
  }

  private get log(): McpLogger {
    return this.options.log ?? silentLogger;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private get machineToMachine(): boolean {
    return this.settings.grant === 'client_credentials';
  }

  /** The stored record for this server (one stored for another URL counts as none). */
  private async record(): Promise<OAuthRecord> {
    const stored = await this.store.load();
    return stored?.url === this.url ? stored : { url: this.url };
  }

  /** Read-modify-write of the record, one at a time (concurrent saves would drop each other's changes). */
  private update(change: (r: OAuthRecord) => OAuthRecord): Promise<void> {
    const next = this.updating.then(async () => this.store.save(change(await this.record())));
    this.updating = next.catch(() => undefined);
    return next;
  }

  /** Where the authorization redirect goes; undefined for client credentials (no person, no redirect). */
  get redirectUrl(): string | undefined {
    if (this.machineToMachine) return undefined;
    return this.options.interactive?.redirectUrl ?? `http://127.0.0.1:${this.settings.redirectPort}/callback`;
  }

  get clientMetadataUrl(): string | undefined {
    return this.settings.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const secret = this.settings.clientSecret !== undefined;
    return {
      client_name: this.settings.clientName,
      redirect_uris: this.redirectUrl ? [this.redirectUrl] : [],
      grant_types: this.machineToMachine ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
      response_types: this.machineToMachine ? [] : ['code'],
      token_endpoint_auth_method: secret ? 'client_secret_basic' : 'none',
      ...(this.settings.scope ? { scope: this.settings.scope } : {}),
    };
  }

  /**
   * A configured client (id, secret) first; else one stored by registration. `ctx` names the
   * authorization server `auth()` is about to present the client to.
   */
  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<StoredOAuthClientInformation | undefined> {
    if (this.settings.clientId) {
      const bound = this.settings.issuer;
      // Refused here rather than left to the SDK, which would register a new client instead.
      if (bound && ctx && !sameIssuer(bound, ctx.issuer))
        throw new AuthorizationServerMismatchError(bound, ctx.issuer);
      const issuer = bound ?? ctx?.issuer;
      return {
        client_id: this.settings.clientId,
        ...(this.settings.clientSecret ? { client_secret: this.settings.clientSecret } : {}),
        ...(issuer ? { issuer } : {}),
      };
    }
    const stored = (await this.record()).clientInformation;
    if (!this.options.interactive) {
      if (!stored) throw this.authorizationRequired('it has no stored OAuth client');
      // A worker does not register: another authorization server needs a person to authorize there.
      if (stored.issuer && ctx && !sameIssuer(stored.issuer, ctx.issuer))
        throw this.authorizationRequired(
          `its stored OAuth client is for ${stored.issuer}, not ${ctx.issuer}`,
        );
      return stored;
    }
    // A registration made for another redirect URI (another port) cannot take this one's code.
    const uris = (stored as { redirect_uris?: string[] } | undefined)?.redirect_uris;
    if (stored && uris && this.redirectUrl && !uris.includes(this.redirectUrl)) return undefined;
    return stored;
  }

  /** The authorization request's `state` (only `mcp-turns auth` sends one). */
  state(): string {
    if (!this.options.interactive)
      throw this.authorizationRequired('its authorization server wants a person to authorize (again)');
    return this.options.interactive.state;
  }

  async saveClientInformation(info: StoredOAuthClientInformation): Promise<void> {
    // A configured client is not stored: it is read from the settings every time.
    if (this.settings.clientId) return;
    await this.update((r) => ({ ...r, clientInformation: info }));
  }

  /**
   * The tokens to send. Asked for a request (the transports pass no `ctx`), one about to expire is
   * renewed first (a refresh, or new client credentials), once for every caller that asks
   * meanwhile; if that fails the old one is sent and the server's 401 starts the SDK's own recovery.
   * Asked by `auth()` (which passes `ctx`), or by the `auth()` of a renewal, the stored tokens are
   * returned as they are: a renewal never waits for itself.
   */
  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    // A person authorizing wants a new grant, not the stored one refreshed.
    if (this.options.interactive && !this.authorizedHere) return undefined;
    const record = await this.record();
    const forRequest = !ctx && renewingHere.getStore() !== this;
    if (forRequest && record.tokens && this.expiresSoon(record)) {
      this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
      await this.renewing.catch(() => undefined);
      return this.handOut((await this.record()).tokens);
    }
    return this.handOut(record.tokens);
  }

  private handOut(tokens: StoredOAuthTokens | undefined): StoredOAuthTokens | undefined {
    this.handedOut = tokens;
    return tokens;
  }

  private expiresSoon(record: OAuthRecord): boolean {
    const lifetimeS = record.tokens?.expires_in;
    if (lifetimeS === undefined || record.tokensReceivedAt === undefined) return false;
    const lifetime = lifetimeS * 1000;
    const left = record.tokensReceivedAt + lifetime - this.now();
    return left < Math.min(RENEW_AT_REMAINING_MS, lifetime * RENEW_AT_REMAINING_SHARE);
  }

  private async renew(): Promise<void> {
    if (!this.machineToMachine && !(await this.record()).tokens?.refresh_token) return;
    const started = this.now();
    try {
      await renewingHere.run(this, () => auth(this, { serverUrl: this.url, fetchFn: this.fetch }));
      this.log.info('mcp oauth tokens renewed', { ms: this.now() - started });
    } catch (err) {
      this.log.warn('mcp oauth token renewal failed', { error: (err as Error).message });
      throw err;
    }
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    this.secrets.add(tokens.access_token);
    this.secrets.add(tokens.refresh_token);
    this.secrets.add(tokens.id_token);
    this.authorizedHere = true;
    await this.update((r) => {
      const covered = !isStrictScopeSuperset(r.pendingScope, tokens.scope);
      const pendingScope = covered || this.options.interactive ? undefined : r.pendingScope;
      return { ...r, tokens, tokensReceivedAt: this.now(), pendingScope };
    });
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (!this.options.interactive) {
      throw this.authorizationRequired('its authorization server wants a person to authorize (again)');
    }
    await this.options.interactive.openAuthorizationUrl(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.codeVerifierValue = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.codeVerifierValue)
      throw new Error('no PKCE code verifier: the authorization was not started here');
    return this.codeVerifierValue;
  }

  /** client_credentials asks for its grant itself; the authorization code grant is the SDK's default. */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.machineToMachine) return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope) params.set('scope', scope);
    return params;
  }

  /**
   * Forgets what the authorization server refused. Stored tokens are kept when they are not the ones
   * this process used: another worker (or `mcp-turns auth`) replaced them meanwhile.
   */
  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.codeVerifierValue = undefined;
      return;
    }
    await this.update((r) => {
      const next = { ...r };
      const tokensOurs = r.tokens?.access_token === this.handedOut?.access_token;
      if ((scope === 'all' || scope === 'tokens') && tokensOurs) {
        delete next.tokens;
        delete next.tokensReceivedAt;
      }
      if (scope === 'all' || scope === 'client') delete next.clientInformation;
      if (scope === 'all' || scope === 'discovery') delete next.discoveryState;
      return next;
    });
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.update((r) => ({ ...r, discoveryState: state }));
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.record()).discoveryState;
  }

  /** A scope a server demanded that the stored grant lacks (cleared by the next tokens). */
  async pendingScope(): Promise<string | undefined> {
    return (await this.record()).pendingScope;
  }

  /**
   * The fetch the server's transport (and so `auth()`) uses: the SDK's requests unchanged, except
   *   - a refresh is sent once per refresh token: every `auth()` presenting the same token (several
   *     requests refused with 401 at once, each starting its own `auth()`) gets the one answer, so a
   *     server that rotates refresh tokens never sees one twice;
   *   - a 403 `insufficient_scope` records the scope the server wants (with the scope already
   *     granted), so the next `mcp-turns auth` asks for both and the log says a person is needed.
   */
  readonly fetch: FetchLike = async (input, init) => {
    const refreshToken = refreshTokenOf(init);
    if (refreshToken !== undefined) return this.sharedRefresh(refreshToken, input, init);
    const response = await fetch(input, init);
    if (response.status === 403 && !this.machineToMachine) {
      const challenge = extractWWWAuthenticateParams(response);
      if (challenge.error === 'insufficient_scope' && challenge.scope) {
        let wanted: string | undefined;
        await this.update((r) => {
          wanted = computeScopeUnion(r.tokens?.scope, r.pendingScope, challenge.scope);
          return { ...r, pendingScope: wanted };
        });
        this.log.warn('mcp server wants a scope its authorization lacks; run mcp-turns auth', {
          scope: wanted,
        });
      }
    }
    return response;
  };

  private async sharedRefresh(
    refreshToken: string,
    input: string | URL,
    init?: RequestInit,
  ): Promise<Response> {
    let shared = this.refreshes.get(refreshToken);
    if (!shared) {
      shared = fetch(input, init).then(async (r) => ({
        status: r.status,
        statusText: r.statusText,
        headers: [...r.headers],
        body: await r.text(),
      }));
      this.refreshes.set(refreshToken, shared);
      const forget = (): void => void this.refreshes.delete(refreshToken);
      // Kept a while: an auth() that read the old token just before the new one was saved comes later.
      shared.then(() => setTimeout(forget, SHARED_REFRESH_MS).unref(), forget);
    }
    const answer = await shared;
    return new Response(answer.body, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
  }

  private authorizationRequired(why: string): AuthorizationRequiredError {
    return new AuthorizationRequiredError(
      `server ${this.server.name} needs a person to authorize it (${why}): run \`mcp-turns auth ${this.server.name}\` with the worker's config`,
    );
  }
}
