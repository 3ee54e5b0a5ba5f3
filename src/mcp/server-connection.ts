/**
 * One live connection to one MCP server, shared by every activity of the worker: opened lazily
 * (concurrent first use opens it once), re-opened after a crash or close with backoff, with its tool
 * list cached and refreshed on `notifications/tools/list_changed`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig } from './config';
import type { McpLogger } from './logger';
import { GroupStdioTransport } from './stdio-transport';

const CLIENT_INFO = { name: 'mcp-turns', version: '0.1.0' };
const MAX_BACKOFF_MS = 30_000;

export class ServerConnection {
  private client?: Client;
  private transport?: Transport;
  private connecting?: Promise<Client>;
  private toolsCache?: Promise<McpTool[]>;
  private connectFailures = 0;
  private nextConnectAt = 0;
  /** Processes spawned over this connection's life (tests count them). */
  spawned = 0;

  constructor(
    readonly config: ServerConfig,
    private readonly log: McpLogger,
  ) {}

  get connected(): boolean {
    return this.client !== undefined;
  }

  get pid(): number | undefined {
    return this.transport instanceof GroupStdioTransport ? this.transport.pid : undefined;
  }

  /** The connected client, connecting first if needed. */
  async get(): Promise<Client> {
    if (this.client) return this.client;
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    const wait = this.nextConnectAt - Date.now();
    if (wait > 0) throw new Error(`server ${this.config.name} is reconnecting (next try in ${Math.ceil(wait / 1000)} s)`);
    try {
      const client = await this.open();
      this.connectFailures = 0;
      return client;
    } catch (err) {
      this.connectFailures++;
      this.nextConnectAt = Date.now() + Math.min(MAX_BACKOFF_MS, 250 * 2 ** (this.connectFailures - 1));
      throw new Error(`connect to ${this.config.name} failed: ${(err as Error).message}`);
    }
  }

  private async open(): Promise<Client> {
    const c = this.config;
    const attempt = async (transport: Transport): Promise<Client> => {
      const client = new Client(CLIENT_INFO, { capabilities: {} });
      const timer = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no answer to initialize within ${c.connectTimeoutMs} ms`)), c.connectTimeoutMs).unref(),
      );
      try {
        await Promise.race([client.connect(transport), timer]);
      } catch (err) {
        await transport.close().catch(() => undefined);
        throw err;
      }
      return client;
    };
    let client: Client;
    let transport: Transport;
    if (c.transport === 'stdio') {
      transport = new GroupStdioTransport({
        command: c.command!,
        args: c.args,
        env: c.env,
        ...(c.cwd ? { cwd: c.cwd } : {}),
        onStderr: (line) => this.log.info(`[${c.name}] ${line}`, { server: c.name }),
      });
      this.spawned++;
      client = await attempt(transport);
    } else if (c.transport === 'sse') {
      transport = new SSEClientTransport(new URL(c.url!), { requestInit: { headers: c.headers } });
      client = await attempt(transport);
    } else {
      transport = new StreamableHTTPClientTransport(new URL(c.url!), { requestInit: { headers: c.headers } });
      try {
        client = await attempt(transport);
      } catch (err) {
        // Servers that speak only the legacy HTTP+SSE transport refuse the initialize POST.
        const status = err instanceof StreamableHTTPError ? err.code : undefined;
        if (status !== 400 && status !== 404 && status !== 405) throw err;
        this.log.info('streamable HTTP refused; falling back to SSE', { server: c.name, status });
        transport = new SSEClientTransport(new URL(c.url!), { requestInit: { headers: c.headers } });
        client = await attempt(transport);
      }
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.log.info('tool list changed', { server: c.name });
      this.toolsCache = undefined;
    });
    transport.onclose = () => {
      if (this.client === client) {
        this.log.warn('connection closed; the next call reconnects', { server: c.name });
        this.drop();
      }
    };
    this.client = client;
    this.transport = transport;
    this.log.info('connected', { server: c.name, transport: c.transport, pid: this.pid });
    return client;
  }

  /** Forgets the current connection (after a crash, a stale HTTP session, or a close). */
  drop(): void {
    const transport = this.transport;
    this.client = undefined;
    this.transport = undefined;
    this.toolsCache = undefined;
    void transport?.close().catch(() => undefined);
  }

  /** Every tool of the server, following pagination; cached until the list changes. */
  async tools(): Promise<McpTool[]> {
    this.toolsCache ??= this.fetchTools().catch((err: unknown) => {
      this.toolsCache = undefined;
      throw err;
    });
    return this.toolsCache;
  }

  private async fetchTools(): Promise<McpTool[]> {
    const client = await this.get();
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: this.config.timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  async close(): Promise<void> {
    const transport = this.transport;
    const client = this.client;
    this.client = undefined;
    this.transport = undefined;
    await client?.close().catch(() => undefined);
    await transport?.close().catch(() => undefined);
  }
}
