/**
 * Server-sent events on a Fastify reply: the response is taken over from Fastify (headers it set,
 * CORS included, are kept), each event is written as it comes, a comment every 15 s keeps proxies
 * from closing an idle stream, and `signal` aborts when the client goes away, so whatever feeds
 * the stream stops reading.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

const KEEP_ALIVE_MS = 15_000;

export class SseStream {
  private readonly abort = new AbortController();
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly reply: FastifyReply,
    headers: Record<string, string> = {},
  ) {
    reply.hijack();
    const raw = reply.raw;
    const inherited = Object.fromEntries(
      Object.entries(reply.getHeaders()).filter((e): e is [string, string | number | string[]] => e[1] !== undefined),
    );
    raw.writeHead(200, {
      ...inherited,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    raw.flushHeaders();
    // The response closes when it ends or its connection does (a keep-alive socket outlives it).
    raw.once('close', () => this.abort.abort());
    this.keepAlive = setInterval(() => this.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    this.keepAlive.unref();
    this.signal.addEventListener('abort', () => clearInterval(this.keepAlive), { once: true });
  }

  /** Aborted when the client has gone away or the stream was ended. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** One event: `data` is written as one `data:` line (JSON has no newline). */
  send(data: string, id?: string | number): void {
    this.write(`${id !== undefined ? `id: ${id}\n` : ''}data: ${data}\n\n`);
  }

  end(): void {
    clearInterval(this.keepAlive);
    if (!this.reply.raw.writableEnded) this.reply.raw.end();
    this.abort.abort();
  }

  private write(text: string): void {
    if (!this.signal.aborted && !this.reply.raw.writableEnded) this.reply.raw.write(text);
  }
}

/** Whether the client asked for a stream (`Accept: text/event-stream`). */
export function wantsEventStream(request: FastifyRequest): boolean {
  return /\btext\/event-stream\b/.test(request.headers.accept ?? '');
}

/** The offset to resume from: after `Last-Event-ID`, else `?from=`, else 0; undefined when malformed. */
export function resumeOffset(request: FastifyRequest): number | undefined {
  const last = request.headers['last-event-id'];
  const from = (request.query as { from?: string } | undefined)?.from;
  const value = typeof last === 'string' && last.trim() !== '' ? Number(last) + 1 : from !== undefined ? Number(from) : 0;
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
