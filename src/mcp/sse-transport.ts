/**
 * The legacy HTTP+SSE client transport, closed when its event stream is lost. In that transport a
 * session lives as long as its GET stream: the server forgets it when the stream ends, and a
 * restart always ends it. The SDK's transport lets its EventSource reconnect the stream on its own
 * and then posts to the new session the server hands out, which nobody initialised (servers refuse
 * every request on it with -32602), saying so only at debug level. This transport closes instead,
 * as a dead stdio server's pipe does: calls in flight fail at once, and the connection's next
 * request opens and initialises a new session.
 */
import {
  SSEClientTransport,
  SseError,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type SSEClientTransportOptions,
  type Transport,
} from '@modelcontextprotocol/client';

/** An SSE client transport whose session ends with its first event stream. */
export class LegacySseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  private readonly inner: SSEClientTransport;
  private started = false;
  private lost = false;

  /** @param onLost told once when the stream of a started session is lost (the session is gone). */
  constructor(
    url: URL,
    opts: SSEClientTransportOptions = {},
    private readonly onLost: (error: Error) => void = () => undefined,
  ) {
    this.inner = new SSEClientTransport(url, opts);
    this.inner.onmessage = (message) => this.onmessage?.(message);
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => {
      this.onerror?.(error);
      // Before the session starts, a stream error fails start() itself.
      if (this.started && !this.lost && error instanceof SseError) {
        this.lost = true;
        this.onLost(error);
        void this.close();
      }
    };
  }

  /** True once the session's event stream was lost (the transport is then closed). */
  get sessionLost(): boolean {
    return this.lost;
  }

  async start(): Promise<void> {
    await this.inner.start();
    this.started = true;
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  /** Closes the stream (its EventSource never reconnects after this) and tells `onclose`. */
  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion(version);
  }
}
