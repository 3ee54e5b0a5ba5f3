/**
 * The one place MCP connections ask for tracing: every transport a server connection opens passes
 * through {@link traceMcpTransport}, which returns it unchanged until tracing is started in this
 * process (src/tracing/otel-tracing.ts sets the tracer). This module loads no OpenTelemetry code.
 */
import type { Transport } from '@modelcontextprotocol/client';

/** What a traced transport is told about its server. */
export interface McpTransportTarget {
  /** The server's name in the worker config. */
  server: string;
  /** `stdio`, `streamable-http` or `sse`. */
  transport: string;
}

/** Wraps a transport so its requests become spans. */
export type McpTransportTracer = (transport: Transport, target: McpTransportTarget) => Transport;

let tracer: McpTransportTracer | undefined;

/** Sets (or, with undefined, removes) the tracer every transport opened from now on goes through. */
export function setMcpTransportTracer(next: McpTransportTracer | undefined): void {
  tracer = next;
}

/** The transport to connect: traced when tracing runs in this process, else `transport` itself. */
export function traceMcpTransport(transport: Transport, target: McpTransportTarget): Transport {
  return tracer ? tracer(transport, target) : transport;
}
