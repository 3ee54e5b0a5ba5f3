/**
 * Server-sent events on a Fastify reply: the response is taken over from Fastify (headers it set,
 * CORS included, are kept), each event is written as it comes, a comment every 15 s keeps proxies
 * from closing an idle stream, and `signal` aborts when the client goes away, so whatever feeds
 * the stream stops reading.
 *
 * A client is written to no faster than it reads: `send` resolves at once while what waits for
 * the socket is under its high-water mark (16 KiB), else once the socket has taken all of it, so
 * whatever feeds the stream waits with the client, and a client holds at most that and one event
 * in this process whatever the stream's size. A client is dropped (its connection destroyed,
 * `signal` aborted) when its socket has taken nothing of what waits for it for the stall limit (the
 * app's `stalledStreamSeconds`), or when more than {@link MAX_UNREAD_BYTES} wait for it (a caller
 * that does not wait for `send`). A keep-alive comment is written only when nothing waits.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pathOf } from './http-error';
import { DEFAULT_STALLED_STREAM_SECONDS } from '../config/serve-settings';

const KEEP_ALIVE_MS = 15_000;
/** Bytes waiting for a client beyond which it is dropped. */
const MAX_UNREAD_BYTES = 1024 * 1024;

/** When a client that does not read is dropped. */
export interface SseLimits {
  /** A client whose socket has taken nothing of what waits for it for this long is dropped. */
  stalledMs: number;
  /** A client with more than this many bytes waiting for it is dropped. @default {@link MAX_UNREAD_BYTES} */
  maxUnreadBytes?: number;
  /** Where a dropped client is reported, one line. */
  log?(line: string): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The limits of the app's event streams, set once from its settings (`app.decorate('sseLimits', …)`). */
    sseLimits?: SseLimits;
  }
}

const DEFAULT_LIMITS: SseLimits = { stalledMs: DEFAULT_STALLED_STREAM_SECONDS * 1000 };

export class SseStream {
  private readonly abort = new AbortController();
  private readonly keepAlive: NodeJS.Timeout;
  /** Writes the socket has not taken yet. */
  private waiting = 0;
  /** When the socket last took a write, or a write began to wait on an idle socket. */
  private lastTaken = 0;
  private stallTimer: NodeJS.Timeout | undefined;
  /** Resolves when the socket has taken what waited (`drain`) or the stream is over. */
  private drained: Promise<void> | undefined;

  /** `limits` default to the app's (`reply.server.sseLimits`). */
  constructor(
    private readonly reply: FastifyReply,
    headers: Record<string, string> = {},
    private readonly limits: SseLimits = reply.server.sseLimits ?? DEFAULT_LIMITS,
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
    raw.once('close', () => {
      clearTimeout(this.stallTimer);
      this.abort.abort();
    });
    this.keepAlive = setInterval(() => {
      if (this.waiting === 0) void this.write(': keep-alive\n\n');
    }, KEEP_ALIVE_MS);
    this.keepAlive.unref();
    this.signal.addEventListener('abort', () => clearInterval(this.keepAlive), { once: true });
  }

  /** Aborted when the client has gone away, was dropped, or the stream was ended. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /**
   * One event: `data` is written as one `data:` line (JSON has no newline). Resolves when the
   * client can take more (see the file comment) or the stream is over; never rejects.
   */
  send(data: string, id?: string | number): Promise<void> {
    return this.write(`${id !== undefined ? `id: ${id}\n` : ''}data: ${data}\n\n`);
  }

  /** Ends the response; a client that does not take its rest within the stall limit is dropped. */
  end(): void {
    clearInterval(this.keepAlive);
    const raw = this.reply.raw;
    if (!raw.writableEnded && !raw.destroyed) {
      this.beginWait();
      raw.end(() => this.taken());
    }
    this.abort.abort();
  }

  private write(text: string): Promise<void> {
    const raw = this.reply.raw;
    if (this.signal.aborted || raw.writableEnded || raw.destroyed) return Promise.resolve();
    const max = this.limits.maxUnreadBytes ?? MAX_UNREAD_BYTES;
    if (raw.writableLength > max) {
      this.drop(`more than ${max} bytes were waiting for it`);
      return Promise.resolve();
    }
    this.beginWait();
    return raw.write(text, () => this.taken()) ? Promise.resolve() : this.drain();
  }

  private drain(): Promise<void> {
    this.drained ??= new Promise<void>((resolve) => {
      const done = (): void => {
        this.reply.raw.off('drain', done);
        this.signal.removeEventListener('abort', done);
        this.drained = undefined;
        resolve();
      };
      this.reply.raw.on('drain', done);
      this.signal.addEventListener('abort', done, { once: true });
    });
    return this.drained;
  }

  private beginWait(): void {
    if (this.waiting++ === 0) this.lastTaken = performance.now();
    if (!this.stallTimer) this.watchStall(this.limits.stalledMs);
  }

  private taken(): void {
    this.waiting--;
    this.lastTaken = performance.now();
  }

  /** Looks again in `ms`: a client with writes waiting and none taken for the stall limit is dropped. */
  private watchStall(ms: number): void {
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      if (this.waiting === 0 || this.reply.raw.destroyed) return;
      const idle = performance.now() - this.lastTaken;
      if (idle >= this.limits.stalledMs) this.drop(`it read nothing for ${Math.round(idle / 100) / 10} s`);
      else this.watchStall(this.limits.stalledMs - idle);
    }, ms);
    this.stallTimer.unref();
  }

  private drop(reason: string): void {
    const { raw, request } = this.reply;
    if (raw.destroyed) return;
    this.limits.log?.(`serve: dropped the event stream of ${request.method} ${pathOf(request)} to ${request.ip}: ${reason}`);
    raw.destroy();
    this.abort.abort();
  }
}

/** Whether the client asked for a stream (`Accept: text/event-stream`). */
export function wantsEventStream(request: FastifyRequest): boolean {
  return /\btext\/event-stream\b/.test(request.headers.accept ?? '');
}
