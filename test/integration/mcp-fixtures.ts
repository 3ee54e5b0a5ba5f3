/**
 * Helpers for the MCP integration tests: real npm servers over HTTP, the process table, a recording
 * logger, and an in-process streamable HTTP MCP server (built on the SDK's server classes) whose
 * behaviour the tests steer: paginated tools/list, a tool list that changes, sessions it forgets
 * (answering 404 as the spec says), protocol errors, progress and cancellation.
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
import type { McpLogger } from '../../src/mcp';
import { EVERYTHING } from '../support/mcp-servers';

export { EVERYTHING };
export const MEMORY = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
export const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

/** server-everything over HTTP (`streamableHttp` serves /mcp, `sse` serves /sse) on `port`. */
export function startEverythingHttp(
  port: number,
  mode: 'streamableHttp' | 'sse' = 'streamableHttp',
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [EVERYTHING, mode], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (/listening on port|running on port/i.test(err)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`everything ${mode} exited ${code}: ${err}`)));
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
  /** Request ids the client cancelled. */
  cancelled: string[];
  /** Authorization headers received. */
  authorizations: Set<string>;
  /** Sessions initialised so far. */
  sessions(): number;
  /** Adds a tool and tells every session the list changed. */
  addTool(tool: Tool): Promise<void>;
  /** Forgets every session (as a restarted server does): later requests get 404. */
  forgetSessions(): void;
  close(): Promise<void>;
}

const schema = (properties: Record<string, object> = {}, required: string[] = []): Tool['inputSchema'] => ({
  type: 'object',
  properties,
  required,
});

/**
 * An in-process streamable HTTP MCP server. Tools: `t1`…`t5` (listed `pageSize` per page),
 * `echo_args` (answers its arguments as JSON), `refuse` (JSON-RPC invalid params), `crash` (JSON-RPC
 * internal error), `fails` (a tool-level `isError`), `slow` (`{ ms }`: progress every 100 ms, stops
 * when cancelled).
 */
export async function startTestServer(opts: { pageSize?: number; port?: number } = {}): Promise<TestServer> {
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
  const authorizations = new Set<string>();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<Server>();
  let sessionCount = 0;

  const makeServer = (): Server => {
    const server = new Server(
      { name: 'test-server', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, (req) => {
      const cursor = req.params?.cursor;
      listRequests.push(cursor !== undefined ? { cursor } : {});
      const start = cursor ? Number(Buffer.from(cursor, 'base64url').toString()) : 0;
      const page = tools.slice(start, start + pageSize);
      const next =
        start + pageSize < tools.length
          ? Buffer.from(String(start + pageSize)).toString('base64url')
          : undefined;
      return { tools: page, ...(next ? { nextCursor: next } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      calls.push({ tool: req.params.name, args });
      switch (req.params.name) {
        case 'echo_args':
          return { content: [{ type: 'text', text: JSON.stringify(args) }] };
        case 'refuse':
          throw new McpError(ErrorCode.InvalidParams, 'refused: these arguments can never work');
        case 'crash':
          throw new McpError(ErrorCode.InternalError, 'internal trouble');
        case 'fails':
          return { isError: true, content: [{ type: 'text', text: 'the tool failed at tool level' }] };
        case 'slow': {
          const ms = Number(args.ms);
          const token = extra._meta?.progressToken;
          for (let t = 0; t < ms; t += 100) {
            if (extra.signal.aborted) {
              cancelled.push(String(extra.requestId));
              return { content: [{ type: 'text', text: 'cancelled' }] };
            }
            await sleep(100);
            if (token !== undefined) {
              await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress: t + 100, total: ms },
              });
            }
          }
          if (extra.signal.aborted) cancelled.push(String(extra.requestId));
          return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
        }
        default:
          if (tools.some((t) => t.name === req.params.name))
            return { content: [{ type: 'text', text: `${req.params.name} ran` }] };
          throw new McpError(ErrorCode.InvalidParams, `Tool ${req.params.name} not found`);
      }
    });
    servers.add(server);
    return server;
  };

  const httpServer = http.createServer((req, res) => {
    void (async () => {
      if (req.headers.authorization) authorizations.add(req.headers.authorization);
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (typeof sessionId === 'string' && !transport) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(
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
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (httpServer.address() as AddressInfo).port;

  const forgetSessions = (): void => {
    for (const t of transports.values()) void t.close().catch(() => undefined);
    transports.clear();
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    calls,
    listRequests,
    cancelled,
    authorizations,
    sessions: () => sessionCount,
    async addTool(tool) {
      tools.push(tool);
      await Promise.all([...servers].map((s) => s.sendToolListChanged().catch(() => undefined)));
    },
    forgetSessions,
    async close() {
      forgetSessions();
      await Promise.all([...servers].map((s) => s.close().catch(() => undefined)));
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
