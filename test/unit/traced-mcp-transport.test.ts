/**
 * MCP request spans, over the SDK's in-memory transport pair with a real MCP server on the other
 * end, recorded by the OpenTelemetry SDK's in-memory exporter: a span per request ended by its
 * answer, its JSON-RPC error, its cancellation (a notification, or the abort of its own HTTP
 * request) or the connection closing; none for notifications.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { z } from 'zod';
import { TracedMcpTransport } from '../../src/tracing/traced-mcp-transport';
import { setMcpTransportTracer, traceMcpTransport } from '../../src/tracing/mcp-transport-hook';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('test');

async function connected(): Promise<{ client: Client; server: McpServer; hangStarted: Promise<void> }> {
  const server = new McpServer({ name: 'fixture', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  let started: () => void = () => undefined;
  const hangStarted = new Promise<void>((r) => (started = r));
  server.registerTool('hang', { inputSchema: {} }, async () => {
    started();
    return new Promise(() => undefined);
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new TracedMcpTransport(clientSide, { server: 'fixture', transport: 'stdio' }, tracer));
  return { client, server, hangStarted };
}

beforeEach(() => exporter.reset());

it('makes each request a CLIENT span named for its method and tool, ended by the answer', async () => {
  const { client, server } = await connected();
  await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  await client.close();
  await server.close();
  const spans = exporter.getFinishedSpans();
  // initialize and the call are requests; notifications (initialized) make no span.
  const call = spans.find((s) => s.name === 'tools/call echo')!;
  expect(spans.map((s) => s.name)).toContain('initialize');
  expect(spans.every((s) => !s.name.startsWith('notifications/'))).toBe(true);
  expect(call.kind).toBe(SpanKind.CLIENT);
  expect(call.status.code).toBe(SpanStatusCode.UNSET);
  expect(call.attributes).toMatchObject({
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': 'echo',
    'mcp_turns.server': 'fixture',
    'network.transport': 'pipe',
  });
});

it('marks a JSON-RPC error with its code', async () => {
  const { client, server } = await connected();
  await expect(client.request({ method: 'prompts/get', params: { name: 'none' } }, z.object({}).passthrough())).rejects.toThrow();
  await client.close();
  await server.close();
  const failed = exporter.getFinishedSpans().find((s) => s.name === 'prompts/get')!;
  expect(failed.status.code).toBe(SpanStatusCode.ERROR);
  expect(failed.attributes['error.type']).toBe('-32601');
});

it('ends a cancelled request as cancelled, and one cut off by the connection closing as such', async () => {
  const { client, server, hangStarted } = await connected();
  const abort = new AbortController();
  const cancelled = client.callTool({ name: 'hang', arguments: {} }, undefined, { signal: abort.signal });
  await hangStarted;
  abort.abort();
  await expect(cancelled).rejects.toThrow();
  const cut = client.callTool({ name: 'hang', arguments: {} });
  await new Promise((r) => setTimeout(r, 50));
  await server.close();
  await expect(cut).rejects.toThrow();
  const hangs = exporter.getFinishedSpans().filter((s) => s.name === 'tools/call hang');
  expect(hangs.map((s) => [s.status.code, s.attributes['error.type']])).toEqual([
    [SpanStatusCode.ERROR, 'cancelled'],
    [SpanStatusCode.ERROR, 'connection_closed'],
  ]);
});

it('shows a per-request transport as one, and ends a request cancelled by aborting its own HTTP request as cancelled', async () => {
  // What streamable HTTP is to the SDK: one HTTP request per JSON-RPC request, each with its own signal.
  const perRequest = { hasPerRequestStream: true, start: async () => undefined, send: async () => undefined, close: async () => undefined };
  const traced = new TracedMcpTransport(perRequest, { server: 'remote', transport: 'streamable-http' }, tracer);
  expect(traced.hasPerRequestStream).toBe(true);
  const abort = new AbortController();
  await traced.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow' } }, { requestSignal: abort.signal });
  expect(exporter.getFinishedSpans()).toEqual([]);
  abort.abort();
  const [span] = exporter.getFinishedSpans();
  expect([span!.name, span!.status.code, span!.attributes['error.type']]).toEqual(['tools/call slow', SpanStatusCode.ERROR, 'cancelled']);
});

it('leaves transports unwrapped until a tracer is set', () => {
  const [a] = InMemoryTransport.createLinkedPair();
  const target = { server: 's', transport: 'stdio' };
  expect(traceMcpTransport(a, target)).toBe(a);
  setMcpTransportTracer((t, to) => new TracedMcpTransport(t, to, tracer));
  expect(traceMcpTransport(a, target)).toBeInstanceOf(TracedMcpTransport);
  setMcpTransportTracer(undefined);
  expect(traceMcpTransport(a, target)).toBe(a);
});
