/**
 * A transport that wraps another MCP transport: it forwards the calls and shows through the
 * properties the SDK reads off a transport, so wrapping never changes how the SDK treats it: a
 * stdio transport's `pid` and `stderr` (era negotiation: a silent stdio server is a legacy one,
 * over HTTP silence is an outage), streamable HTTP's `hasPerRequestStream` (in the 2026-07-28 era a
 * request is cancelled by aborting its own HTTP request), the session id and protocol version.
 * Subclasses take the inner transport's events in their constructor and hand them on.
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client';

export abstract class ForwardingMcpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  constructor(protected readonly inner: Transport) {
    for (const key of ['pid', 'stderr'] as const) {
      if (key in inner) Object.defineProperty(this, key, { get: () => (inner as unknown as Record<string, unknown>)[key] });
    }
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }

  setProtocolVersion = (version: string): void => this.inner.setProtocolVersion?.(version);

  setSupportedProtocolVersions = (versions: string[]): void => this.inner.setSupportedProtocolVersions?.(versions);

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }
}
