// Serves a stdio test fixture's tools in the protocol era $MCP_FIXTURE_ERA names, as a real server of
// that era does: `modern` serves the 2026-07-28 era only (the v2 SDK; a legacy `initialize` is
// refused with -32022); anything else serves the legacy era only (the v1 SDK, 2025-11-25 and before).
//
// A tool is `{ name, description, inputSchema, run(args, call) }`, its inputSchema a zod raw shape;
// `call` is what a handler needs of either SDK's request context: `{ signal, progress(done, total) }`
// (progress is sent only when the client asked for it). A raw tool's inputSchema is JSON Schema, sent
// exactly as written by the SDK's low-level Server, and one `call(name, args)` answers every raw tool.
//
// With $REQUEST_LOG set, a stdio fixture appends one JSON line `{ method, pid }` to it for every
// JSON-RPC request or notification it reads, before the SDK handles it: a test can count the
// `server/discover` probes and `initialize` handshakes a client sent. With $DISCOVER_TTL_MS set, a
// modern fixture's `server/discover` result says it may be reused for that long (`ttlMs`; the SDK's
// default is 0: not to be reused).
const fs = require('node:fs');
const { z } = require('zod');

const MODERN = process.env.MCP_FIXTURE_ERA === 'modern';

/** Appends one JSON line per tool call to $COUNT_FILE (when set), so a test can count executions. */
function recordCall(tool, args) {
  if (process.env.COUNT_FILE)
    fs.appendFileSync(process.env.COUNT_FILE, JSON.stringify({ tool, args, pid: process.pid }) + '\n');
}

/** A JSON-RPC error of this era's SDK; `name` is a code name both SDKs share, e.g. `InvalidParams`. */
function rpcError(name, message) {
  if (MODERN) {
    const { ProtocolError, ProtocolErrorCode } = require('@modelcontextprotocol/server');
    return new ProtocolError(ProtocolErrorCode[name], message);
  }
  const { McpError, ErrorCode } = require('@modelcontextprotocol/sdk/types.js');
  return new McpError(ErrorCode[name], message);
}

/**
 * The handler's view of one request: `req` is v1's `extra` or v2's `ctx.mcpReq`. A request sent
 * again after the server asked for input (2026-07-28) carries the answers (`inputResponses`, by
 * request key) and the server's `requestState` exactly as the client echoed it.
 */
function callOf(req, notify) {
  const token = req._meta && req._meta.progressToken;
  return {
    signal: req.signal,
    inputResponses: req.inputResponses,
    requestState: typeof req.requestState === 'function' ? req.requestState() : undefined,
    progress: (progress, total) =>
      token === undefined
        ? Promise.resolve()
        : notify({ method: 'notifications/progress', params: { progressToken: token, progress, total } }),
  };
}

/** A v2 server's options: tools, and the discover result's `ttlMs` when $DISCOVER_TTL_MS sets one. */
function modernOptions() {
  const ttl = process.env.DISCOVER_TTL_MS;
  return {
    capabilities: { tools: {} },
    ...(ttl !== undefined ? { cacheHints: { 'server/discover': { ttlMs: Number(ttl) } } } : {}),
  };
}

/** A v2 McpServer with the tools: one instance per connection (stdio) or per request (HTTP). */
function modernServer(info, tools) {
  const { McpServer } = require('@modelcontextprotocol/server');
  const server = new McpServer(info, modernOptions());
  for (const t of tools) {
    server.registerTool(
      t.name,
      { description: t.description, inputSchema: z.object(t.inputSchema) },
      (args, ctx) => t.run(args, callOf(ctx.mcpReq, ctx.mcpReq.notify)),
    );
  }
  return server;
}

function legacyServer(info, tools) {
  const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
  const server = new McpServer(info);
  for (const t of tools) {
    server.registerTool(t.name, { description: t.description, inputSchema: t.inputSchema }, (args, extra) =>
      t.run(args, callOf(extra, extra.sendNotification)),
    );
  }
  return server;
}

/** A low-level Server publishing `tools` as written; `call(name, args)` answers tools/call. */
function rawServer(info, tools, call) {
  const { Server } = MODERN
    ? require('@modelcontextprotocol/server')
    : require('@modelcontextprotocol/sdk/server/index.js');
  const server = new Server(info, MODERN ? modernOptions() : { capabilities: { tools: {} } });
  if (MODERN) {
    server.setRequestHandler('tools/list', () => ({ tools }));
    server.setRequestHandler('tools/call', (req) => call(req.params.name, req.params.arguments ?? {}));
  } else {
    const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, (req) =>
      call(req.params.name, req.params.arguments ?? {}),
    );
  }
  return server;
}

/** Logs the method of every JSON-RPC message on stdin to $REQUEST_LOG (when set). */
function logRequests() {
  const file = process.env.REQUEST_LOG;
  if (!file) return;
  let buffered = '';
  process.stdin.on('data', (chunk) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop();
    for (const line of lines) {
      let method;
      try {
        method = JSON.parse(line).method;
      } catch {
        continue;
      }
      if (method) fs.appendFileSync(file, JSON.stringify({ method, pid: process.pid }) + '\n');
    }
  });
}

/** Serves the server `make()` builds over stdio, in this process's era. */
function serveStdio(make) {
  logRequests();
  if (MODERN) {
    require('@modelcontextprotocol/server/stdio').serveStdio(() => make(), { legacy: 'reject' });
    return;
  }
  const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
  make()
    .connect(new StdioServerTransport())
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}

module.exports = {
  logRequests,
  recordCall,
  rpcError,
  modernServer,
  serveTools: (info, tools) => serveStdio(() => (MODERN ? modernServer : legacyServer)(info, tools)),
  serveRawTools: (info, tools, call) => serveStdio(() => rawServer(info, tools, call)),
};
