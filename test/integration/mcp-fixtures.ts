/**
 * Helpers for the MCP integration tests: real npm servers over HTTP, the process table, a recording
 * logger, and an in-process streamable HTTP MCP server (built on the SDKs' server classes) whose
 * behaviour the tests steer: paginated tools/list, a tool list that changes, sessions it forgets
 * (answering 404 as the spec says), protocol errors, progress and cancellation; it records the
 * notifications it is sent and the requests the client aborts. It serves one protocol era: legacy
 * (v1 SDK, sessions) or modern (2026-07-28, v2 SDK, no sessions).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  createMcpHandler,
  ProtocolError,
  Server as ModernServer,
  type CallToolResult as ModernCallToolResult,
  type McpHttpHandler,
  type Tool as ModernTool,
} from '@modelcontextprotocol/server';
import type { McpLogger } from '../../src/mcp';
import { EVERYTHING, MODERN, type McpEra } from '../support/mcp-servers';

export { EVERYTHING, MODERN };
export const MEMORY = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
export const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

/** A node server from `args` on `port`, once it says on stderr that it listens. */
function startHttpChild(
  args: string[],
  port: number,
  label: string,
  env: NodeJS.ProcessEnv = {},
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (/listening on port|running on port/i.test(err)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${label} exited ${code}: ${err}`)));
  });
}

/** server-everything over HTTP (`streamableHttp` serves /mcp, `sse` serves /sse) on `port`. */
export function startEverythingHttp(
  port: number,
  mode: 'streamableHttp' | 'sse' = 'streamableHttp',
): Promise<ChildProcess> {
  return startHttpChild([EVERYTHING, mode], port, `everything ${mode}`);
}

/**
 * The modern-only fixture (test/support/modern-mcp-server.js) over HTTP on a free port, with its
 * URL (POST /mcp); with countFile, every call appends a line to it.
 */
export function startModernHttp(countFile?: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MODERN, 'http'], {
      env: { ...process.env, PORT: '0', ...(countFile ? { COUNT_FILE: countFile } : {}) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const port = /listening on port (\d+)/.exec(err)?.[1];
      if (port) resolve({ child, url: `http://127.0.0.1:${port}/mcp` });
    });
    child.once('exit', (code) => reject(new Error(`modern http exited ${code}: ${err}`)));
  });
}

/** Kills a child we started and waits for it. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

export interface ProcessRow {
  pid: number;
  ppid: number;
  pgid: number;
  stat: string;
  args: string;
}

/** The live (non-zombie) processes, from `ps`. */
export function processTable(): ProcessRow[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,pgid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .flatMap((m) =>
      m ? [{ pid: Number(m[1]), ppid: Number(m[2]), pgid: Number(m[3]), stat: m[4]!, args: m[5]! }] : [],
    )
    .filter((p) => !p.stat.startsWith('Z'));
}

export interface LogLine {
  level: keyof McpLogger;
  message: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps every line (tests assert on what was and was not logged). */
export function recordingLogger(): { logger: McpLogger; lines: LogLine[]; all(): string } {
  const lines: LogLine[] = [];
  const at =
    (level: keyof McpLogger) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      lines.push({ level, message, fields });
  return {
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    lines,
    all: () => lines.map((l) => `${l.level} ${l.message} ${JSON.stringify(l.fields)}`).join('\n'),
  };
}

/** The text of a tool result. */
export function textOf(out: { content: Array<{ type: string; text?: string }> }): string {
  return out.content.map((c) => c.text ?? '').join('\n');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Controls of the in-process test server. */
export interface TestServer {
  url: string;
  port: number;
  /** Calls received, by tool name. */
  calls: Array<{ tool: string; args: Record<string, unknown> }>;
  /** tools/list requests received (one per page). */
  listRequests: Array<{ cursor?: string }>;
  /** Request ids of calls whose handler saw its request cancelled. */
  cancelled: string[];
  /** The methods of the JSON-RPC notifications the client sent, in order. */
  notifications: string[];
  /** The method of each HTTP request the client went away from before its answer ended (`GET` for a stream). */
  abortedRequests: string[];
  /** Authorization headers received. */
  authorizations: Set<string>;
  /** Sessions initialised so far (always 0 in the modern era, which has no sessions). */
  sessions(): number;
  /** Adds a tool and tells every session (modern: every `subscriptions/listen` stream) the list changed. */
  addTool(tool: Tool): Promise<void>;
  /** Forgets every session (as a restarted server does): later requests get 404. A no-op in the modern era. */
  forgetSessions(): void;
  close(): Promise<void>;
}

const schema = (properties: Record<string, object> = {}, required: string[] = []): Tool['inputSchema'] => ({
  type: 'object',
  properties,
  required,
});

/** What a tools/call handler needs of either SDK's request context. */
interface CallContext {
  signal: AbortSignal;
  requestId: string | number;
  /** Sends a progress notification, when the client asked for progress. */
  progress(progress: number, total: number): Promise<void> | undefined;
}

/**
 * An in-process streamable HTTP MCP server of the era `era` (default legacy). Tools: `t1`…`t5`
 * (listed `pageSize` per page), `echo_args` (answers its arguments as JSON), `refuse` (JSON-RPC
 * invalid params), `crash` (JSON-RPC internal error), `fails` (a tool-level `isError`), `slow`
 * (`{ ms }`: progress every 100 ms, stops when cancelled). In the modern era a tools/list result
 * carries `ttlMs: toolsTtlMs` (default 0: the SDK's, not to be reused).
 */
export async function startTestServer(
  opts: { pageSize?: number; port?: number; era?: McpEra; toolsTtlMs?: number } = {},
): Promise<TestServer> {
  const pageSize = opts.pageSize ?? 2;
  const tools: Tool[] = [
    ...[1, 2, 3, 4, 5].map((n) => ({ name: `t${n}`, description: `tool ${n}`, inputSchema: schema() })),
    {
      name: 'echo_args',
      description: 'answers its arguments',
      inputSchema: schema({ message: { type: 'string' }, token: { type: 'string' } }, ['message', 'token']),
    },
    { name: 'refuse', inputSchema: schema() },
    { name: 'crash', inputSchema: schema() },
    { name: 'fails', inputSchema: schema() },
    { name: 'slow', inputSchema: schema({ ms: { type: 'number' } }, ['ms']) },
  ];
  const calls: TestServer['calls'] = [];
  const listRequests: TestServer['listRequests'] = [];
  const cancelled: string[] = [];
  const notifications: string[] = [];
  const abortedRequests: string[] = [];
  const authorizations = new Set<string>();

  const listTools = (cursor: string | undefined): { tools: Tool[]; nextCursor?: string } => {
    listRequests.push(cursor !== undefined ? { cursor } : {});
    const start = cursor ? Number(Buffer.from(cursor, 'base64url').toString()) : 0;
    const page = tools.slice(start, start + pageSize);
    const next =
      start + pageSize < tools.length
        ? Buffer.from(String(start + pageSize)).toString('base64url')
        : undefined;
    return { tools: page, ...(next ? { nextCursor: next } : {}) };
  };

  /** Answers tools/call; `error` makes the SDK's JSON-RPC error for a code. */
  const callTool = async (
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext,
    error: (code: number, message: string) => Error,
  ): Promise<CallToolResult> => {
    calls.push({ tool: name, args });
    switch (name) {
      case 'echo_args':
        return { content: [{ type: 'text', text: JSON.stringify(args) }] };
      case 'refuse':
        throw error(ErrorCode.InvalidParams, 'refused: these arguments can never work');
      case 'crash':
        throw error(ErrorCode.InternalError, 'internal trouble');
      case 'fails':
        return { isError: true, content: [{ type: 'text', text: 'the tool failed at tool level' }] };
      case 'slow': {
        const ms = Number(args.ms);
        for (let t = 0; t < ms && !ctx.signal.aborted; t += 100) {
          await sleep(100);
          // Progress cannot reach a client that went away (modern HTTP: its aborted request was the stream).
          await Promise.resolve(ctx.progress(t + 100, ms)).catch((err: unknown) => {
            if (!ctx.signal.aborted) throw err;
          });
        }
        if (ctx.signal.aborted) {
          cancelled.push(String(ctx.requestId));
          return { content: [{ type: 'text', text: 'cancelled' }] };
        }
        return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
      }
      default:
        if (tools.some((t) => t.name === name)) return { content: [{ type: 'text', text: `${name} ran` }] };
        throw error(ErrorCode.InvalidParams, `Tool ${name} not found`);
    }
  };

  const record: Recorder = {
    request(req) {
      if (req.headers.authorization) authorizations.add(req.headers.authorization);
    },
    message(message) {
      if (message.method !== undefined && message.id === undefined) notifications.push(message.method);
    },
    aborted: (what) => abortedRequests.push(what),
  };
  const served = opts.era === 'modern' ? serveModern(listTools, callTool, record, opts.toolsTtlMs) : serveLegacy(listTools, callTool, record);
  await new Promise<void>((resolve) => served.httpServer.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (served.httpServer.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    calls,
    listRequests,
    cancelled,
    notifications,
    abortedRequests,
    authorizations,
    sessions: served.sessions,
    async addTool(tool) {
      tools.push(tool);
      await served.toolsChanged();
    },
    forgetSessions: served.forgetSessions,
    async close() {
      await served.close();
      served.httpServer.closeAllConnections();
      await new Promise<void>((resolve) => served.httpServer.close(() => resolve()));
    },
  };
}

/** The era-specific half of the test server: its HTTP server and session controls. */
interface Served {
  httpServer: http.Server;
  sessions(): number;
  toolsChanged(): Promise<void>;
  forgetSessions(): void;
  /** Closes what the era keeps open (sessions, listen streams); the HTTP server is closed after. */
  close(): Promise<void>;
}
type ListTools = (cursor: string | undefined) => { tools: Tool[]; nextCursor?: string };
type CallTool = (
  name: string,
  args: Record<string, unknown>,
  ctx: CallContext,
  error: (code: number, message: string) => Error,
) => Promise<CallToolResult>;

/** What the server records of every HTTP request, for the tests to assert on. */
interface Recorder {
  request(req: http.IncomingMessage): void;
  /** Each JSON-RPC message a POST carried. */
  message(message: { method?: string; id?: unknown }): void;
  /** The client went away before the answer ended: the request's JSON-RPC method, or its HTTP method. */
  aborted(what: string): void;
}

/**
 * Reads a request's body and records the request, its JSON-RPC messages (one, or a batch) and, if
 * the client goes away before the answer ends, what it asked.
 */
async function recordRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  record: Recorder,
): Promise<{ body: Buffer; parsed?: unknown }> {
  record.request(req);
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  let parsed: unknown;
  try {
    parsed = body.length ? JSON.parse(body.toString()) : undefined;
  } catch {
    parsed = undefined;
  }
  const messages = [parsed ?? []].flat() as Array<{ method?: string; id?: unknown }>;
  for (const m of messages) record.message(m);
  res.once('close', () => {
    if (!res.writableFinished) record.aborted(messages[0]?.method ?? req.method ?? '?');
  });
  return { body, ...(parsed !== undefined ? { parsed } : {}) };
}

/** Legacy era: the v1 SDK's sessionful streamable HTTP transport, one server per session. */
function serveLegacy(listTools: ListTools, callTool: CallTool, record: Recorder): Served {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<Server>();
  let sessionCount = 0;

  const makeServer = (): Server => {
    const server = new Server(
      { name: 'test-server', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, (req) => listTools(req.params?.cursor));
    server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
      const token = extra._meta?.progressToken;
      const ctx: CallContext = {
        signal: extra.signal,
        requestId: extra.requestId,
        progress: (progress, total) =>
          token === undefined
            ? undefined
            : extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress, total },
              }),
      };
      return callTool(
        req.params.name,
        req.params.arguments ?? {},
        ctx,
        (code, message) => new McpError(code, message),
      );
    });
    servers.add(server);
    return server;
  };

  const httpServer = http.createServer((req, res) => {
    void (async () => {
      const { parsed } = await recordRequest(req, res, record);
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (typeof sessionId === 'string' && !transport) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found' },
            id: null,
          }),
        );
        return;
      }
      if (!transport) {
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessionCount++;
            transports.set(id, t);
          },
        });
        await makeServer().connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res, parsed);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });

  const forgetSessions = (): void => {
    for (const t of transports.values()) void t.close().catch(() => undefined);
    transports.clear();
  };
  return {
    httpServer,
    sessions: () => sessionCount,
    async toolsChanged() {
      await Promise.all([...servers].map((s) => s.sendToolListChanged().catch(() => undefined)));
    },
    forgetSessions,
    async close() {
      forgetSessions();
      await Promise.all([...servers].map((s) => s.close().catch(() => undefined)));
    },
  };
}

/**
 * Modern era (2026-07-28 only): the v2 SDK's `createMcpHandler`, a fresh server per request, no
 * sessions; a legacy `initialize` is answered 400 / -32022. A list change goes to open
 * `subscriptions/listen` streams; a cancelled call is an HTTP request the client aborted.
 */
function serveModern(listTools: ListTools, callTool: CallTool, record: Recorder, toolsTtlMs?: number): Served {
  const makeServer = (): ModernServer => {
    const server = new ModernServer(
      { name: 'test-server', version: '1.0.0' },
      {
        capabilities: { tools: { listChanged: true } },
        ...(toolsTtlMs !== undefined ? { cacheHints: { 'tools/list': { ttlMs: toolsTtlMs } } } : {}),
      },
    );
    server.setRequestHandler('tools/list', (req) => {
      const page = listTools(req.params?.cursor);
      return { ...page, tools: page.tools as ModernTool[] };
    });
    server.setRequestHandler('tools/call', async (req, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      const call: CallContext = {
        signal: ctx.mcpReq.signal,
        requestId: ctx.mcpReq.id,
        progress: (progress, total) =>
          token === undefined
            ? undefined
            : ctx.mcpReq.notify({
                method: 'notifications/progress',
                params: { progressToken: token, progress, total },
              }),
      };
      const result = await callTool(
        req.params.name,
        req.params.arguments ?? {},
        call,
        (code, message) => new ProtocolError(code, message),
      );
      return result as ModernCallToolResult;
    });
    return server;
  };
  const handler = createMcpHandler(makeServer, { legacy: 'reject' });
  const httpServer = http.createServer((req, res) => {
    serveFetch(handler, req, res, record).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
      else res.destroy();
    });
  });
  return {
    httpServer,
    sessions: () => 0,
    async toolsChanged() {
      handler.notify.toolsChanged();
    },
    forgetSessions: () => undefined,
    close: () => handler.close(),
  };
}

/** Serves one node:http request with a web-standard handler; a client that goes away aborts the Request. */
async function serveFetch(
  handler: McpHttpHandler,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  record: Recorder,
): Promise<void> {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const { body } = await recordRequest(req, res, record);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    for (const one of [value ?? []].flat()) headers.append(name, one);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const response = await handler.fetch(
    new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? body : undefined,
      signal: abort.signal,
    }),
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.flushHeaders();
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
}
