/**
 * One live connection to one MCP server, shared by every activity of the worker: opened lazily
 * (concurrent first use opens it once), re-opened after a crash or close with backoff, its tool
 * list cached (all pages) and refreshed as the server says: on `notifications/tools/list_changed`
 * in the legacy era, when the list's `ttlMs` runs out in the modern era.
 *
 * The protocol era is negotiated per server (`protocol: auto`): the connect asks with
 * `server/discover` (2026-07-28) and falls back to the `initialize` handshake (2025-11-25); what it
 * learns is kept per worker (src/mcp/era-verdicts.ts), so a reconnect skips the probe. On stdio the
 * probe runs on the server's own process (a silent server is a legacy one); a server that exits on
 * the unknown request is started again for the handshake. A modern-era server keeps no session: the
 * connection is a client and a transport, reused by every call. The client never answers a server's
 * request for input itself (`inputRequired: { autoFulfill: false }`).
 *
 * Legacy-era sessions: an HTTP or SSE session the server no longer knows is re-initialised; a
 * legacy SSE session ends with its event stream (a server restart), and the next request opens a
 * new one. A connect that fails says why: a stdio server's last stderr lines, or both the
 * streamable HTTP and the SSE fallback's errors.
 */
import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type ElicitRequest,
  type ElicitResult,
  type PriorDiscovery,
  type ProtocolEra,
  type Tool as McpTool,
  type Transport,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import { ListToolsResultSchema, ToolSchema } from '@modelcontextprotocol/core';
import { z } from 'zod';
import type { ServerConfig } from './config-schema';
import { workerEraVerdicts, type EraVerdicts } from './era-verdicts';
import type { McpLogger } from './logger';
import { McpOAuthProvider } from './oauth-provider';
import { LenientTransport, publishedInputSchema } from './lenient-transport';
import { LegacySseTransport } from './sse-transport';
import { ProcessGroupStdioTransport } from './stdio-transport';
import { traceMcpTransport } from '../tracing/mcp-transport-hook';

const CLIENT_INFO = { name: 'mcp-turns', version: '0.1.0' };
/** Reconnect backoff after failed connects: 250 ms doubling, at most this. */
const MAX_RECONNECT_BACKOFF_MS = 30_000;
/** A server paging forever (or repeating a cursor) is cut off here. */
const MAX_TOOL_PAGES = 100;
/** The longest a `server/discover` probe waits on stdio before the server is taken for a legacy one. */
const STDIO_PROBE_TIMEOUT_MS = 5_000;
/** A modern-era tool list is never kept longer than this, whatever its `ttlMs` says. */
const MAX_TOOLS_TTL_MS = 24 * 3_600_000;

/**
 * `tools/list` as servers answer it: the SDK's own result schema, except that a tool's input and
 * output schemas need only be JSON objects. The SDK requires `type: "object"` at their root and
 * refuses the whole list otherwise, while servers publish root `anyOf` schemas (a zod union); the
 * listing makes each schema acceptable to Claude or leaves that one tool out. A modern-era list
 * says how long it stays fresh (`ttlMs`).
 */
const PublishedToolListSchema = ListToolsResultSchema.extend({
  tools: z.array(
    ToolSchema.extend({
      inputSchema: z.record(z.string(), z.unknown()),
      outputSchema: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
  ttlMs: z.number().optional(),
});

/** How the SDK's SSE transport reports a refused POST: `Error POSTing to endpoint (HTTP 404): …`. */
const SSE_POST_REFUSED = /^Error POSTing to endpoint \(HTTP (\d{3})\)/;

/** The HTTP status of a refused request, over streamable HTTP or the legacy SSE transport. */
function httpStatusOf(err: unknown): number | undefined {
  if (err instanceof SdkHttpError) return err.status;
  if (err instanceof Error) return Number(SSE_POST_REFUSED.exec(err.message)?.[1]) || undefined;
  return undefined;
}

/**
 * A POST refused because the server forgot our session: 404 per the spec, 400 mentioning the
 * session from some servers (the SDK's own legacy SSE example answers "No transport found for
 * sessionId"); over streamable HTTP or the legacy SSE transport.
 */
export function isStaleSession(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status === 404 || (status === 400 && /session/i.test((err as Error).message));
}

/** A server that speaks only the modern era refusing the legacy handshake (-32022, over HTTP a 400). */
function refusesLegacy(err: unknown): boolean {
  if (err instanceof ProtocolError) return err.code === ProtocolErrorCode.UnsupportedProtocolVersion;
  return err instanceof SdkHttpError && /-32022/.test(String((err.data as { text?: unknown }).text ?? err.message));
}

/**
 * A refusal that a session nobody initialised answers to everything (servers answer -32602 or
 * -32600 before `initialize`). Right after a reconnect it means the new session is not ready,
 * not that the request is wrong.
 */
function isUninitialisedRefusal(err: unknown): boolean {
  return (
    err instanceof ProtocolError &&
    (err.code === ProtocolErrorCode.InvalidParams || err.code === ProtocolErrorCode.InvalidRequest)
  );
}

/** The last lines a stdio server wrote to stderr, for the error of a connect that failed. */
const STDERR_TAIL_LINES = 5;
/** How long a failed connect waits for a dead stdio server's stderr to be read to its end. */
const STDERR_DRAIN_MS = 250;

/** Options of {@link ServerConnection.client}. */
export interface ConnectOptions {
  /** Try now even inside the reconnect backoff (a breaker probe must really try). */
  force?: boolean;
}

/** Options of {@link ServerConnection.tools}. */
export interface ToolsOptions extends ConnectOptions {
  /** A list past its freshness will do (looking up a tool to call); the default asks again. */
  stale?: boolean;
}

/** A tool list and until when it is fresh. */
interface ToolList {
  tools: McpTool[];
  expiresAt: number;
}

/** The connection to one configured server. */
export class ServerConnection {
  private current?: { client: Client; transport: Transport };
  private connecting?: Promise<Client>;
  /** The transport a connect in flight is opening (closed to abort that connect). */
  private opening?: Transport;
  private toolsCache?: Promise<ToolList>;
  private oauthProvider?: McpOAuthProvider;
  private connectFailures = 0;
  private nextConnectAt = 0;
  /** A session was dropped (lost, forgotten, abandoned): the next one replaces it. */
  private replacing = false;
  /** The client of a session that replaced a dropped one, until one of its requests is answered. */
  private unproven?: Client;
  /** Processes spawned over this connection's life (tests and status count them). */
  spawned = 0;
  /** Answers a server's `elicitation/create` during a live call (legacy era); declined without one. */
  onElicitation?: (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;

  constructor(
    readonly config: ServerConfig,
    private readonly log: McpLogger,
    private readonly now: () => number = Date.now,
    private readonly verdicts: EraVerdicts = workerEraVerdicts,
  ) {}

  /** True while a session is open. */
  get connected(): boolean {
    return this.current !== undefined;
  }

  /** The protocol era of the open connection. */
  get era(): ProtocolEra | undefined {
    return this.current?.client.getProtocolEra();
  }

  /** The stdio server's pid (also its process group id), while connected. */
  get pid(): number | undefined {
    const t = this.current?.transport;
    return t instanceof ProcessGroupStdioTransport ? t.pid : undefined;
  }

  /** The connected client, connecting first if needed; concurrent callers share one attempt. */
  async client(opts: ConnectOptions = {}): Promise<Client> {
    if (this.current) return this.current.client;
    this.connecting ??= this.connect(opts).finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(opts: ConnectOptions): Promise<Client> {
    const wait = this.nextConnectAt - this.now();
    if (wait > 0 && !opts.force) {
      throw new Error(`server ${this.config.name} is reconnecting (next try in ${Math.ceil(wait / 1000)} s)`);
    }
    const started = this.now();
    try {
      const opened = await this.open();
      this.connectFailures = 0;
      this.nextConnectAt = 0;
      this.current = opened;
      if (this.replacing) this.unproven = opened.client;
      this.replacing = false;
      const pid = opened.transport instanceof ProcessGroupStdioTransport ? opened.transport.pid : undefined;
      this.log.info('mcp server connected', {
        transport: this.config.transport,
        era: opened.client.getProtocolEra(),
        protocolVersion: opened.client.getNegotiatedProtocolVersion(),
        pid,
        ms: this.now() - started,
      });
      return opened.client;
    } catch (err) {
      this.connectFailures++;
      const backoff = Math.min(MAX_RECONNECT_BACKOFF_MS, 250 * 2 ** (this.connectFailures - 1));
      this.nextConnectAt = this.now() + backoff;
      this.log.warn('mcp server connect failed', {
        error: (err as Error).message,
        failures: this.connectFailures,
        backoffMs: backoff,
      });
      throw new Error(`connect to ${this.config.name} failed: ${(err as Error).message}`);
    }
  }

  /**
   * A new client over a new transport, its era negotiated (or taken from what the worker learned)
   * and the connection set up. A connect that fails with a remembered verdict forgets it and
   * negotiates afresh once. A verdict the `protocol` setting rules out (learned by another entry for
   * the same server) is not used.
   */
  private async open(): Promise<{ client: Client; transport: Transport }> {
    const prior = this.config.transport === 'sse' ? undefined : this.verdicts.get(this.config);
    if (!prior || !this.allows(prior)) return this.openNegotiated();
    try {
      return await this.openWith(prior);
    } catch (err) {
      this.verdicts.forget(this.config);
      this.log.info('mcp connect with the remembered protocol era failed; negotiating again', {
        era: prior.kind,
        error: (err as Error).message,
      });
      return this.openNegotiated();
    }
  }

  /** Connects without a remembered verdict, and remembers what the connect learned. */
  private async openNegotiated(): Promise<{ client: Client; transport: Transport }> {
    const opened = await this.openWith(undefined).catch(async (err: unknown) => {
      // A stdio server that exits on the unknown `server/discover` request is a legacy server, when
      // the era is negotiated (`protocol: auto`); a pinned 2026-07-28 never falls back.
      if (this.config.transport !== 'stdio' || this.config.protocol !== 'auto' || !probeClosed(err)) throw err;
      this.log.info('mcp stdio server closed on the server/discover probe; starting it again for initialize', {});
      return this.openWith({ kind: 'legacy' });
    });
    if (this.negotiates() && this.config.transport !== 'sse') {
      const discover = opened.client.getDiscoverResult();
      this.verdicts.remember(
        this.config,
        opened.client.getProtocolEra() === 'modern' && discover ? { kind: 'modern', discover } : { kind: 'legacy' },
      );
    }
    return opened;
  }

  /** Whether the `protocol` setting allows connecting in the era of this verdict. */
  private allows(prior: PriorDiscovery): boolean {
    const protocol = this.config.protocol;
    return protocol === 'auto' || (protocol === 'legacy') === (prior.kind === 'legacy');
  }

  /** Whether this server's era is negotiated (and so worth remembering). */
  private negotiates(): boolean {
    return this.config.protocol !== 'legacy';
  }

  private async openWith(prior: PriorDiscovery | undefined): Promise<{ client: Client; transport: Transport }> {
    const c = this.config;
    if (c.transport === 'stdio') {
      const transport = new ProcessGroupStdioTransport({
        command: c.command!,
        args: c.args,
        env: c.env,
        ...(c.cwd ? { cwd: c.cwd } : {}),
        onStderr: (line) => this.log.info('mcp server stderr', { line }),
      });
      this.spawned++;
      return this.initialize(transport, prior);
    }
    const url = new URL(c.url!);
    const options = { requestInit: { headers: c.headers }, ...this.oauth() };
    if (c.transport === 'sse') return this.initialize(this.sseTransport(url, options), { kind: 'legacy' });
    try {
      return await this.initialize(new StreamableHTTPClientTransport(url, options), prior);
    } catch (err) {
      // Servers that speak only the legacy HTTP+SSE transport refuse the initialize (or discover) POST.
      const status = httpStatusOf(err);
      if (status !== 400 && status !== 404 && status !== 405) throw err;
      if (c.protocol === '2026-07-28') throw err;
      this.log.info('streamable HTTP refused; falling back to SSE', { status });
      try {
        return await this.initialize(this.sseTransport(url, options), { kind: 'legacy' });
      } catch (fallback) {
        // Either may be the real cause (a server refusing initialize, or one that speaks only SSE).
        throw new Error(`streamable HTTP: ${(err as Error).message}; SSE fallback: ${(fallback as Error).message}`);
      }
    }
  }

  private sseTransport(url: URL, options: ConstructorParameters<typeof LegacySseTransport>[1]): LegacySseTransport {
    return new LegacySseTransport(url, options, (error) =>
      this.log.warn('mcp SSE stream lost: the session is gone; the next call opens a new one', { error: error.message }),
    );
  }

  /** A server with `oauth` settings: its transports' auth provider, one per connection (kept across reconnects). */
  private oauth(): { authProvider?: McpOAuthProvider; fetch?: McpOAuthProvider['fetch'] } {
    if (!this.config.oauth) return {};
    this.oauthProvider ??= new McpOAuthProvider(this.config, { log: this.log });
    return { authProvider: this.oauthProvider, fetch: this.oauthProvider.fetch };
  }

  /** How the client negotiates the era when no verdict is given. */
  private negotiation(): VersionNegotiationOptions {
    const c = this.config;
    if (c.protocol === 'legacy') return { mode: 'legacy' };
    const probe =
      c.transport === 'stdio' ? { probe: { timeoutMs: Math.min(STDIO_PROBE_TIMEOUT_MS, c.connectTimeoutMs) } } : {};
    return c.protocol === '2026-07-28' ? { mode: { pin: c.protocol }, ...probe } : { mode: 'auto', ...probe };
  }

  private async initialize(
    transport: Transport,
    prior: PriorDiscovery | undefined,
  ): Promise<{ client: Client; transport: Transport }> {
    const client = new Client(CLIENT_INFO, {
      // A server may ask the person (forms and URLs): in the modern era the turn asks durably.
      capabilities: { elicitation: { form: {}, url: {} } },
      versionNegotiation: this.negotiation(),
      inputRequired: { autoFulfill: false },
    });
    this.opening = transport;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer to the connect (discover or initialize) within ${this.config.connectTimeoutMs} ms`)),
        this.config.connectTimeoutMs,
      );
    });
    try {
      const traced = traceMcpTransport(new LenientTransport(transport), {
        server: this.config.name,
        transport: this.config.transport,
      });
      await Promise.race([
        client.connect(traced, { timeout: this.config.connectTimeoutMs, ...(prior ? { prior } : {}) }),
        timeout,
      ]);
    } catch (err) {
      await transport.close().catch(() => undefined);
      if (refusesLegacy(err)) {
        throw new Error(
          `the server speaks only the 2026-07-28 protocol and refused the 2025-11-25 handshake (set protocol: auto or 2026-07-28): ${(err as Error).message}`,
        );
      }
      if (this.config.protocol === '2026-07-28' && probeClosed(err)) {
        throw new Error(`${(err as Error).message} (the server may speak only 2025-11-25: set protocol: auto)`);
      }
      // A probe the server closed is retried with the handshake (see openNegotiated), which says why.
      if (probeClosed(err) || !(transport instanceof ProcessGroupStdioTransport)) throw err;
      throw await withStderr(err, transport);
    } finally {
      clearTimeout(timer);
      this.opening = undefined;
    }
    // The legacy era's questions arrive inside a live call: whoever runs the calls answers them.
    client.setRequestHandler('elicitation/create', (request, ctx) =>
      this.onElicitation ? this.onElicitation(request.params, ctx.mcpReq.signal) : { action: 'decline' },
    );
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      this.log.info('mcp tool list changed', {});
      this.toolsCache = undefined;
    });
    // Client.onclose, not transport.onclose: the SDK's own close handling (failing pending
    // requests with ConnectionClosed) must keep running.
    client.onclose = () => {
      if (this.current?.client !== client) return;
      this.log.warn('mcp server connection closed; the next call reconnects', {});
      this.drop();
    };
    client.onerror = (err) => this.log.debug('mcp transport error', { error: err.message });
    return { client, transport };
  }

  /**
   * Runs a request on the live client. When an HTTP or SSE server has forgotten our session, or a
   * session that just replaced a dropped one answers as if it was never initialised (-32602 or
   * -32600), the request was not executed: re-initialise once and repeat it. Other failures drop
   * the connection when it is no longer usable and are thrown.
   */
  async request<T>(
    fn: (client: Client) => Promise<T>,
    opts: ConnectOptions & { signal?: AbortSignal } = {},
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.client(opts);
      try {
        const result = await fn(client);
        if (this.unproven === client) this.unproven = undefined;
        return result;
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        if (isStaleSession(err) && attempt === 0) {
          this.log.info('mcp session expired; re-initialising', {});
          this.drop(client);
          continue;
        }
        if (this.unproven === client) {
          this.unproven = undefined;
          if (isUninitialisedRefusal(err) && attempt === 0 && client.getProtocolEra() === 'legacy') {
            this.log.info('mcp session refused a request right after a reconnect; re-initialising', {
              error: (err as Error).message,
            });
            this.drop(client);
            continue;
          }
        }
        if (connectionLost(err)) this.drop(client);
        throw err;
      }
    }
  }

  /**
   * Every tool of the server, following pagination; kept until the list changes (legacy era), its
   * `ttlMs` runs out (modern era) or we reconnect. With `stale`, a kept list past its freshness is
   * returned as is.
   */
  async tools(opts: ToolsOptions = {}): Promise<McpTool[]> {
    const cached = this.toolsCache;
    if (cached) {
      const list = await cached.catch(() => undefined);
      if (list && (opts.stale || list.expiresAt > this.now())) return list.tools;
      if (this.toolsCache !== cached) return this.tools(opts);
    }
    const fetching = this.fetchTools(opts);
    this.toolsCache = fetching;
    fetching.catch(() => {
      if (this.toolsCache === fetching) this.toolsCache = undefined;
    });
    return (await fetching).tools;
  }

  /** Forgets the cached tool list (the next {@link tools} asks the server). */
  invalidateTools(): void {
    this.toolsCache = undefined;
  }

  private async fetchTools(opts: ConnectOptions): Promise<ToolList> {
    const tools: McpTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    let ttlMs: number | undefined;
    let modern = false;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const params = cursor !== undefined ? { cursor } : {};
      const result = await this.request(async (c) => {
        modern = c.getProtocolEra() === 'modern';
        return c.request({ method: 'tools/list', params }, PublishedToolListSchema, { timeout: this.config.listTimeoutMs });
      }, opts);
      if (page === 0) ttlMs = result.ttlMs;
      for (const t of result.tools) {
        if (seen.has(t.name)) continue; // a server listing a tool twice: keep the first
        seen.add(t.name);
        tools.push({ ...t, inputSchema: publishedInputSchema(t.inputSchema) } as McpTool);
      }
      if (result.nextCursor === undefined || result.nextCursor === cursor) return { tools, expiresAt: this.expiry(modern, ttlMs) };
      cursor = result.nextCursor;
    }
    this.log.warn('mcp tools/list pagination cut off', { pages: MAX_TOOL_PAGES, tools: tools.length });
    return { tools, expiresAt: this.expiry(modern, ttlMs) };
  }

  /**
   * Until when a list is fresh: a legacy-era list until the server says it changed; a modern-era
   * one for its `ttlMs` (absent or 0: not reused for the next listing).
   */
  private expiry(modern: boolean, ttlMs: number | undefined): number {
    if (!modern) return Number.POSITIVE_INFINITY;
    return this.now() + Math.min(Math.max(0, ttlMs ?? 0), MAX_TOOLS_TTL_MS);
  }

  /**
   * Forgets the current connection (after a crash, a stale HTTP session, a failure, an open
   * circuit) and closes it in the background; the next request reconnects. With `only`, does
   * nothing if that client is no longer the current one (a concurrent caller already replaced it).
   */
  drop(only?: Client): void {
    if (!only && this.opening) {
      // A connect still in flight is abandoned too (a hung server must not come back half-open).
      void this.opening.close().catch(() => undefined);
    }
    const current = this.current;
    if (!current || (only && current.client !== only)) return;
    this.current = undefined;
    this.toolsCache = undefined;
    this.replacing = true;
    void current.transport.close().catch(() => undefined);
  }

  /** Closes the connection and waits until it is gone (a stdio server's whole group stopped). */
  async close(): Promise<void> {
    // A connect in flight would leave a process behind: abort it, then close whatever it opened.
    void this.opening?.close().catch(() => undefined);
    await this.connecting?.catch(() => undefined);
    const current = this.current;
    this.current = undefined;
    this.toolsCache = undefined;
    await current?.transport.close().catch(() => undefined);
  }
}

/** The era probe ended because the server closed the connection (not a verdict, not a timeout). */
function probeClosed(err: unknown): boolean {
  return err instanceof SdkError && err.code === SdkErrorCode.EraNegotiationFailed;
}

/**
 * Whether a failed request leaves the connection unusable. A JSON-RPC error or a timeout does not
 * (a slow tool must not kill a server other calls are using; the breaker handles dead-but-open
 * connections), nor does an HTTP error status other than a lost session; a closed connection, a
 * refused or reset socket, a dead process do.
 */
function connectionLost(err: unknown): boolean {
  if (err instanceof ProtocolError) return false;
  if (err instanceof SdkHttpError) return isStaleSession(err);
  if (err instanceof SdkError) {
    return err.code === SdkErrorCode.ConnectionClosed || err.code === SdkErrorCode.SendFailed || err.code === SdkErrorCode.NotConnected;
  }
  return true;
}

/**
 * The error of a stdio server that failed to start, with the last lines it wrote to stderr (a
 * traceback's last line says why), once its stderr has been read to the end or briefly waited for.
 */
async function withStderr(err: unknown, transport: ProcessGroupStdioTransport): Promise<unknown> {
  await transport.stderrDrained(STDERR_DRAIN_MS);
  const tail = transport.stderrTail(STDERR_TAIL_LINES);
  if (!tail.length) return err;
  return new Error(`${(err as Error).message}; server stderr: ${tail.join(' | ')}`);
}
