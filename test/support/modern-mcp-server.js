#!/usr/bin/env node
// A real MCP server of the 2026-07-28 era only (v2 SDK): no `initialize`, no sessions; a legacy
// client is refused with -32022 (over HTTP: 400, and GET is 405). Tools: `lookup_order` ({ orderId }:
// the order's status) and `echo` ({ message }). With $COUNT_FILE set, every call appends one JSON
// line to it before answering, so a test can prove a completed call never ran twice. `book_table`
// ({ restaurant }) answers `input_required` with a form (guests, time) and an opaque requestState,
// and books with the answer the call is sent again with (a decline books nothing).
//
//   node modern-mcp-server.js          serves stdio
//   node modern-mcp-server.js http     serves POST http://127.0.0.1:$PORT/mcp (PORT=0: any free port)
//                                      and prints `listening on port N` to stderr
const http = require('node:http');
const { z } = require('zod');
const { logRequests, modernServer, recordCall } = require('./serve-fixture');

const tools = [
  {
    name: 'lookup_order',
    description: 'Looks up an order by id and tells its status',
    inputSchema: { orderId: z.string() },
    run: async ({ orderId }) => {
      recordCall('lookup_order', { orderId });
      return { content: [{ type: 'text', text: `order ${orderId}: shipped` }] };
    },
  },
  {
    name: 'echo',
    description: 'Echoes a message',
    inputSchema: { message: z.string() },
    run: async ({ message }) => {
      recordCall('echo', { message });
      return { content: [{ type: 'text', text: message }] };
    },
  },
];
const { inputRequired, inputResponse } = require('@modelcontextprotocol/server');
/** `book_table` asks the person how many guests and when; its state names the restaurant and a nonce. */
const BOOKING_SCHEMA = {
  type: 'object',
  properties: { guests: { type: 'integer', minimum: 1, maximum: 20 }, time: { type: 'string' } },
  required: ['guests', 'time'],
};
tools.push({
  name: 'book_table',
  description: 'Books a table; asks the person how many guests and when',
  inputSchema: { restaurant: z.string() },
  run: async ({ restaurant }, call) => {
    const answer = inputResponse(call.inputResponses, 'details');
    if (answer.kind === 'missing') {
      const requestState = `booking:${restaurant}:${Math.random().toString(36).slice(2)}`;
      recordCall('book_table', { restaurant, asked: true, requestState });
      return inputRequired({
        inputRequests: {
          details: inputRequired.elicit({ message: `How many guests, and when, at ${restaurant}?`, requestedSchema: BOOKING_SCHEMA }),
        },
        requestState,
      });
    }
    recordCall('book_table', { restaurant, action: answer.action, content: answer.content, requestState: call.requestState });
    if (answer.action !== 'accept') return { content: [{ type: 'text', text: `no booking at ${restaurant}: the person said ${answer.action}` }] };
    return { content: [{ type: 'text', text: `booked ${restaurant} for ${answer.content.guests} at ${answer.content.time}` }] };
  },
});
/** `connect_calendar` asks the person to visit a URL (and say done); its state says which account. */
tools.push({
  name: 'connect_calendar',
  description: 'Connects a calendar account; the person authorizes it on a web page',
  inputSchema: { account: z.string() },
  run: async ({ account }, call) => {
    const answer = inputResponse(call.inputResponses, 'authorize');
    if (answer.kind === 'missing') {
      recordCall('connect_calendar', { account, asked: true });
      return inputRequired({
        inputRequests: {
          authorize: inputRequired.elicitUrl({ message: `Authorize the calendar of ${account}`, url: `https://calendar.example.com/authorize?account=${encodeURIComponent(account)}` }),
        },
        requestState: `calendar:${account}`,
      });
    }
    recordCall('connect_calendar', { account, action: answer.action, requestState: call.requestState });
    return { content: [{ type: 'text', text: answer.action === 'accept' ? `calendar of ${account} connected` : `calendar of ${account} not connected: ${answer.action}` }] };
  },
});
const factory = () => modernServer({ name: 'modern', version: '1.0.0' }, tools);

if (process.argv[2] === 'http') {
  const { createMcpHandler } = require('@modelcontextprotocol/server');
  const handler = createMcpHandler(factory, { legacy: 'reject' });
  const server = http.createServer((req, res) => {
    // The web-standard handler serves a Request; a client that goes away aborts it.
    const abort = new AbortController();
    res.once('close', () => res.writableFinished || abort.abort());
    (async () => {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const response = await handler.fetch(
        new Request(`http://127.0.0.1${req.url}`, {
          method: req.method,
          headers: req.headers,
          body: hasBody ? Buffer.concat(chunks) : undefined,
          signal: abort.signal,
        }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.flushHeaders();
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    })().catch((err) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
      else res.destroy();
    });
  });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () =>
    console.error(`listening on port ${server.address().port}`),
  );
} else {
  logRequests();
  require('@modelcontextprotocol/server/stdio').serveStdio(factory, { legacy: 'reject' });
}
