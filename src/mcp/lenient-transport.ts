/**
 * What servers in the wild answer, made acceptable to the SDK's 2026-07-28 wire codec, which
 * refuses a whole result for one departure from that revision's schema (the legacy era's codec
 * takes both as they are):
 *
 *   - A `tools/list` tool whose input schema is not `type: "object"` at its root (a zod union
 *     publishes a root `anyOf`): the schema travels wrapped, `{ type: "object", [PUBLISHED]: schema }`,
 *     and the listing unwraps it ({@link publishedInputSchema}), so one such tool is judged on its
 *     own (made acceptable to Claude or left out with the reason) instead of hiding the server.
 *   - A result without `resultType`: the revision's default, `complete`.
 *
 * Everything else passes unchanged, in both directions, and the transport's own properties show
 * through (src/tracing/forwarding-mcp-transport.ts).
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import { isRecord } from '../core/is-record';
import { ForwardingMcpTransport } from '../tracing/forwarding-mcp-transport';

/** Where a wrapped tool's published input schema travels. */
const PUBLISHED = 'x-mcp-turns-published-schema';

/** The `_meta` key a modern-era request names its protocol version by. */
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/** The input schema a server published for a listed tool (unwrapped if this transport wrapped it). */
export function publishedInputSchema(inputSchema: Record<string, unknown>): Record<string, unknown> {
  const published = inputSchema[PUBLISHED];
  return isRecord(published) ? published : inputSchema;
}

/** See the file comment. Requests are told apart by their JSON-RPC id. */
export class LenientTransport extends ForwardingMcpTransport {
  /** Modern-era requests awaiting their answer, by id: whether each is a `tools/list`. */
  private readonly pending = new Map<string | number, { toolsList: boolean }>();

  constructor(inner: Transport) {
    super(inner);
    inner.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) =>
      this.onmessage?.(this.mend(message), extra);
    inner.onclose = () => {
      this.pending.clear();
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: string | number; method?: unknown; params?: { _meta?: Record<string, unknown> } };
    if (m.id !== undefined && typeof m.method === 'string' && m.params?._meta?.[PROTOCOL_VERSION_META] !== undefined) {
      this.pending.set(m.id, { toolsList: m.method === 'tools/list' });
    }
    return this.inner.send(message, options);
  }

  private mend<T extends JSONRPCMessage>(message: T): T {
    const m = message as { id?: string | number; method?: unknown; result?: unknown };
    if (m.id === undefined || m.method !== undefined) return message;
    const request = this.pending.get(m.id);
    if (!request) return message;
    this.pending.delete(m.id);
    if (!isRecord(m.result)) return message;
    const result: Record<string, unknown> = { ...m.result };
    result.resultType ??= 'complete';
    if (request.toolsList && Array.isArray(result.tools)) result.tools = result.tools.map(wrapInputSchema);
    return { ...message, result } as T;
  }
}

/** A listed tool whose input schema the codec would refuse, with it wrapped. */
function wrapInputSchema(tool: unknown): unknown {
  if (!isRecord(tool) || !isRecord(tool.inputSchema) || tool.inputSchema.type === 'object') return tool;
  return { ...tool, inputSchema: { type: 'object', [PUBLISHED]: tool.inputSchema } };
}
