/**
 * A turn's events as server-sent events, mcp-turns' own shape: each event is one `data:` line of
 * its JSON (src/core/stream-events.ts) with its offset as the SSE `id`, so a client that reconnects
 * with `Last-Event-ID` gets every later event once. A failure to read the stream is one last
 * `error` event (without an id: it is not part of the turn's stream).
 */
import type { TurnStreamEvent } from '../core/stream-events';
import { oneLine } from '../core/text';
import type { ServeContext } from './serve-context';
import type { SseStream } from './sse';

/**
 * Writes `events` to `sse` until they end or the client leaves (then `stop` ends the subscription),
 * reading the next event only once the client's socket has taken the last.
 */
export async function pipeTurnEvents(
  sse: SseStream,
  events: AsyncIterable<TurnStreamEvent>,
  stop: AbortController,
  ctx: ServeContext,
): Promise<void> {
  sse.signal.addEventListener('abort', () => stop.abort(), { once: true });
  try {
    for await (const event of events) {
      if (sse.signal.aborted) break;
      await sse.send(JSON.stringify(event), event.offset);
    }
  } catch (err) {
    const line = oneLine((err as Error).message, 300);
    ctx.log(`serve: a stream failed: ${line}`);
    await sse.send(JSON.stringify({ type: 'error', errorText: `the stream could not be read: ${line}` }));
  } finally {
    sse.end();
  }
}
