/**
 * A minimal HTTP server that answers the Messages API with canned responses, so error mapping is
 * tested through the real SDK (status classes, headers, SSE error events) without the stub model.
 */
import type { Socket } from 'node:net';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CannedResponse {
  status: number;
  headers?: Record<string, string>;
  /** JSON body (default: an API error object for status >= 400). */
  body?: unknown;
  /** Raw SSE text; sent instead of `body` with `content-type: text/event-stream`. */
  sse?: string;
  /** Wait before answering (for timeouts and cancellation). */
  delayMs?: number;
}

export interface FakeApi {
  url: string;
  /** Parsed request bodies, in order. */
  requests: Array<{ headers: http.IncomingHttpHeaders; body: unknown }>;
  /** Responses used in order; the last one repeats. */
  respond(...responses: CannedResponse[]): void;
  close(): Promise<void>;
}

/** An API error body as the Messages API sends it. */
export function errorBody(type: string, message: string): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type, message } };
}

/** A minimal successful Messages API response. */
export function messageBody(text = 'ok', model = 'fake-model'): unknown {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 2 },
  };
}

export async function startFakeApi(): Promise<FakeApi> {
  let queue: CannedResponse[] = [{ status: 200, body: messageBody() }];
  const requests: FakeApi['requests'] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // keep the raw text
      }
      requests.push({ headers: req.headers, body });
      const next = (queue.length > 1 ? queue.shift() : queue[0]) as CannedResponse;
      const send = (): void => {
        if (res.destroyed) return;
        if (next.sse !== undefined) {
          res.writeHead(next.status, { 'content-type': 'text/event-stream', ...next.headers });
          res.end(next.sse);
          return;
        }
        const payload =
          next.body ?? (next.status >= 400 ? errorBody('api_error', `status ${next.status}`) : messageBody());
        res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
        res.end(JSON.stringify(payload));
      };
      if (next.delayMs) setTimeout(send, next.delayMs).unref();
      else send();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond: (...responses) => {
      queue = responses;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
