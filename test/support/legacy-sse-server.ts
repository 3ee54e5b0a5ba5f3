/**
 * A legacy HTTP+SSE MCP server in-process, on the MCP SDK's SSEServerTransport, that a test can stop
 * and start again on the same port as a restarted server: every session (one per GET /sse stream)
 * is forgotten on stop, and a POST for a session it does not know is answered as the SDK's own
 * example server answers it (400 "No transport found for sessionId"). Like the Python SDK's
 * servers, it refuses every request on a session that was not initialised with JSON-RPC -32602
 * "Invalid request parameters". Tools: `echo` ({ message }).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface LegacySseServer {
  port: number;
  /** The SSE endpoint, `http://127.0.0.1:PORT/sse`. */
  url: string;
  /** Sessions opened since the first start (one per SSE stream). */
  sessions(): number;
  /** Sessions the client initialised (it sent `initialize`) since the first start. */
  initialized(): number;
  /** The next request other than `initialize`, on any session, is refused with -32602 as if its session was not initialised. */
  refuseNextRequest(): void;
  /** Forgets every session but leaves the streams open (a server that lost its state behind a proxy). */
  forgetSessions(): void;
  /** Stops like a killed server: every stream cut, every session forgotten, the port closed. */
  stop(): Promise<void>;
  /** Starts again on the same port, knowing no session. */
  start(): Promise<void>;
}

function mcpServer(onInitialized: () => void): McpServer {
  const server = new McpServer({ name: 'legacy-sse', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes a message', inputSchema: { message: z.string() } }, ({ message }) => ({
    content: [{ type: 'text', text: `Echo: ${message}` }],
  }));
  server.server.oninitialized = onInitialized;
  return server;
}

/** Starts the server on `port` (0: a free one). */
export async function startLegacySseServer(port = 0): Promise<LegacySseServer> {
  let sessions = 0;
  let initialized = 0;
  let transports = new Map<string, SSEServerTransport>();
  let refuseNext = false;
  let httpServer: http.Server | undefined;

  const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        const live = transports;
        live.set(transport.sessionId, transport);
        res.on('close', () => live.delete(transport.sessionId));
        sessions++;
        let ready = false;
        await mcpServer(() => {
          ready = true;
          initialized++;
        }).connect(transport);
        const deliver = transport.onmessage!;
        transport.onmessage = (message, extra) => {
          const request = 'method' in message && 'id' in message;
          if (request && (!ready || refuseNext) && message.method !== 'initialize' && message.method !== 'ping') {
            refuseNext = false;
            void transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: 'Invalid request parameters', data: '' } });
            return;
          }
          deliver(message, extra);
        };
        return;
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = transports.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) {
          res.writeHead(400).end('No transport found for sessionId');
          return;
        }
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(405).end();
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  };

  const listen = async (on: number): Promise<number> => {
    const server = http.createServer(handle);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(on, '127.0.0.1', () => resolve());
    });
    httpServer = server;
    return (server.address() as AddressInfo).port;
  };

  const actual = await listen(port);
  return {
    port: actual,
    url: `http://127.0.0.1:${actual}/sse`,
    sessions: () => sessions,
    initialized: () => initialized,
    refuseNextRequest: () => {
      refuseNext = true;
    },
    forgetSessions: () => {
      transports = new Map();
    },
    async stop() {
      const server = httpServer;
      httpServer = undefined;
      transports = new Map();
      if (!server) return;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async start() {
      await listen(actual);
    },
  };
}
