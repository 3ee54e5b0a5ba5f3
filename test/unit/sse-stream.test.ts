/**
 * SseStream over a real socket: `send` resolves once the socket has taken the event, so a client
 * that stops reading stops its feeder; such a client is dropped after the stall limit (or at once
 * when more than the unread bound waits for it), and a client that reads slowly is not.
 */
import net from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { SseStream, type SseLimits } from '../../src/serve/sse';

/** One event of 256 KiB: loopback's kernel buffers take a few megabytes, so a stalled socket fills after ~20. */
const EVENT = 'x'.repeat(256 * 1024);
const EVENTS = 80;

// Twenty megabytes through loopback, read in bursts: seconds on a loaded machine.
jest.setTimeout(30_000);

interface Fed {
  /** Events whose `send` resolved. */
  taken: number;
  aborted: boolean;
  /** The most bytes that waited in the response after a `send` resolved (the event it gave up on, when dropped). */
  maxWaiting: number;
  ms: number;
}

/** An app whose one route streams {@link EVENTS} events, awaited or not, with `limits` set on the app. */
async function start(limits: SseLimits, awaited = true): Promise<{ app: FastifyInstance; port: number; fed: Promise<Fed> }> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.decorate('sseLimits', limits);
  let done!: (fed: Fed) => void;
  const fed = new Promise<Fed>((resolve) => (done = resolve));
  app.get('/events', async (_request, reply) => {
    const sse = new SseStream(reply);
    const t0 = performance.now();
    let taken = 0;
    let maxWaiting = 0;
    for (let i = 0; i < EVENTS && !sse.signal.aborted; i++) {
      const sent = sse.send(EVENT, i).then(() => void taken++);
      if (awaited) await sent;
      maxWaiting = Math.max(maxWaiting, reply.raw.writableLength);
    }
    sse.end();
    done({ taken, aborted: sse.signal.aborted, maxWaiting, ms: performance.now() - t0 });
    return reply;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: (app.server.address() as net.AddressInfo).port, fed };
}

/** A client of `/events`: paused from the start; `read` counts what arrives until serve closes the connection. */
function client(port: number): { socket: net.Socket; read(): Promise<{ bytes: number; text: string }> } {
  const socket = net.connect({ host: '127.0.0.1', port }, () => {
    socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  });
  socket.pause();
  let bytes = 0;
  let tail = '';
  return {
    socket,
    read: () =>
      new Promise((resolve) => {
        socket.on('data', (d: Buffer) => {
          bytes += d.length;
          tail = (tail + d.toString('latin1')).slice(-200);
        });
        socket.on('error', () => undefined);
        socket.once('close', () => resolve({ bytes, text: tail }));
        socket.resume();
      }),
  };
}

describe('SseStream', () => {
  it('gives a client that reads every event, waiting for its socket between them', async () => {
    const log: string[] = [];
    const { app, port, fed } = await start({ stalledMs: 1000, log: (l) => log.push(l) });
    try {
      const c = client(port);
      const got = c.read();
      const result = await fed;
      c.socket.end();
      const { bytes, text } = await got;
      expect(result).toMatchObject({ taken: EVENTS, aborted: true, maxWaiting: 0 });
      expect(bytes).toBeGreaterThan(EVENTS * EVENT.length);
      expect(text.endsWith('xxx\n\n\r\n0\r\n\r\n')).toBe(true);
      expect(log).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('stops feeding a client that does not read, and drops it after the stall limit', async () => {
    const log: string[] = [];
    const { app, port, fed } = await start({ stalledMs: 300, log: (l) => log.push(l) });
    try {
      const c = client(port);
      const result = await fed;
      expect(result.aborted).toBe(true);
      expect(result.taken).toBeLessThan(EVENTS / 2);
      expect(result.maxWaiting).toBeLessThan(EVENT.length + 100);
      expect(result.ms).toBeGreaterThanOrEqual(300);
      expect(result.ms).toBeLessThan(3000);
      expect(log).toEqual([expect.stringMatching(/^serve: dropped the event stream of GET \/events to 127\.0\.0\.1: it read nothing for 0\.\d s$/)]);
      const { text } = await c.read();
      expect(text.endsWith('0\r\n\r\n')).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('drops at once a client with more than the unread bound waiting for it', async () => {
    const log: string[] = [];
    const { app, port, fed } = await start({ stalledMs: 60_000, maxUnreadBytes: 1024 * 1024, log: (l) => log.push(l) }, false);
    try {
      const c = client(port);
      const result = await fed;
      expect(result.aborted).toBe(true);
      expect(log).toEqual([expect.stringMatching(/: more than 1048576 bytes were waiting for it$/)]);
      await c.read();
    } finally {
      await app.close();
    }
  });

  it('keeps a client that reads slowly', async () => {
    const log: string[] = [];
    const { app, port, fed } = await start({ stalledMs: 1500, log: (l) => log.push(l) });
    try {
      const c = client(port);
      // Reads in bursts: 20 ms of reading, 150 ms of nothing (a tenth of the stall limit). Once the
      // stream is fed, the client reads the rest: a burst's pending pause must not stop it then.
      let bursting = true;
      const timer = setInterval(() => {
        c.socket.resume();
        setTimeout(() => bursting && c.socket.pause(), 20);
      }, 170);
      const got = c.read();
      c.socket.pause();
      const result = await fed;
      bursting = false;
      clearInterval(timer);
      c.socket.resume();
      c.socket.end();
      await got;
      expect(result).toMatchObject({ taken: EVENTS, aborted: true });
      expect(log).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
