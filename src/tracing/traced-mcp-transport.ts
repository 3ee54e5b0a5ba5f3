/**
 * An MCP transport whose JSON-RPC requests are spans: one CLIENT span per request, from `send` to
 * its response (or error, cancellation — `notifications/cancelled`, or in the modern era over
 * streamable HTTP the request's own abort — or the connection closing), a child of whatever span is
 * active when the request is sent (the activity's). The HTTP request that carries it (streamable
 * HTTP, SSE) is sent inside that span, so the HTTP instrumentation's span is its child; a stdio
 * request is the span alone. Notifications and the transport's start (the long-lived event
 * streams) run outside any trace: they belong to the connection, which outlives every turn.
 *
 * Names and attributes follow OpenTelemetry's MCP conventions: `tools/call read_text_file`,
 * `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, `mcp.session.id`,
 * `network.transport`; the configured server's name is `mcp_turns.server`.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import { ForwardingMcpTransport } from './forwarding-mcp-transport';
import type { McpTransportTarget } from './mcp-transport-hook';

type RequestId = string | number;

function requestOf(message: JSONRPCMessage): { id: RequestId; method: string; params?: Record<string, unknown> } | undefined {
  const m = message as { id?: RequestId; method?: unknown; params?: Record<string, unknown> };
  return m.id !== undefined && typeof m.method === 'string' ? { id: m.id, method: m.method, params: m.params } : undefined;
}

function responseOf(message: JSONRPCMessage): { id: RequestId; error?: { code: number; message: string } } | undefined {
  const m = message as { id?: RequestId; method?: unknown; result?: unknown; error?: { code: number; message: string } };
  return m.id !== undefined && m.method === undefined && ('result' in m || 'error' in m) ? { id: m.id, error: m.error } : undefined;
}

/** The request a `notifications/cancelled` message gives up on. */
function cancelledRequest(message: JSONRPCMessage): RequestId | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: { requestId?: RequestId } };
  return m.id === undefined && m.method === 'notifications/cancelled' ? m.params?.requestId : undefined;
}

export class TracedMcpTransport extends ForwardingMcpTransport {
  /** Requests sent and not yet answered, by JSON-RPC id. */
  private readonly inFlight = new Map<RequestId, Span>();

  constructor(
    inner: Transport,
    private readonly target: McpTransportTarget,
    private readonly tracer: Tracer,
  ) {
    super(inner);
    inner.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
      const response = responseOf(message);
      if (response) this.end(response.id, response.error && { type: String(response.error.code), message: response.error.message });
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => {
      for (const id of [...this.inFlight.keys()]) this.end(id, { type: 'connection_closed', message: 'connection closed before the answer' });
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
  }

  override start(): Promise<void> {
    return context.with(ROOT_CONTEXT, () => this.inner.start());
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const request = requestOf(message);
    if (!request) {
      const cancelled = cancelledRequest(message);
      if (cancelled !== undefined) this.end(cancelled, { type: 'cancelled', message: 'cancelled by the client' });
      return context.with(ROOT_CONTEXT, () => this.inner.send(message, options));
    }
    const tool = request.method === 'tools/call' && typeof request.params?.name === 'string' ? request.params.name : undefined;
    const span = this.tracer.startSpan(tool ? `${request.method} ${tool}` : request.method, {
      kind: SpanKind.CLIENT,
      attributes: {
        'mcp.method.name': request.method,
        'jsonrpc.request.id': String(request.id),
        'mcp_turns.server': this.target.server,
        'network.transport': this.target.transport === 'stdio' ? 'pipe' : 'tcp',
        ...(tool ? { 'gen_ai.tool.name': tool } : {}),
        ...(this.inner.sessionId ? { 'mcp.session.id': this.inner.sessionId } : {}),
      },
    });
    this.inFlight.set(request.id, span);
    // A modern-era request over streamable HTTP is cancelled by aborting its own HTTP request: no
    // `notifications/cancelled` goes out, so the abort ends its span.
    options?.requestSignal?.addEventListener(
      'abort',
      () => this.end(request.id, { type: 'cancelled', message: 'cancelled by the client' }),
      { once: true },
    );
    try {
      await context.with(trace.setSpan(context.active(), span), () => this.inner.send(message, options));
    } catch (err) {
      this.end(request.id, { type: (err as Error).name || 'Error', message: (err as Error).message });
      throw err;
    }
  }

  /** Ends the request's span: OK, or an error with its type. */
  private end(id: RequestId, error?: { type: string; message: string }): void {
    const span = this.inFlight.get(id);
    if (!span) return;
    this.inFlight.delete(id);
    if (error) {
      span.setAttribute('error.type', error.type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.end();
  }
}
