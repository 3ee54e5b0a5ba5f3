/**
 * The scripted, Anthropic-compatible model: `POST /v1/messages` (plain and streamed),
 * `POST /v1/messages/count_tokens` and the Message Batches API (src/stub/message-batches.ts),
 * answering from scenarios. Stateless in what it answers (the step is the number of assistant
 * messages in the request), so concurrent turns and retries work; the only state is the fault
 * counters, the cache prefixes seen, the batches, and the logs tests read.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestKind } from './answer';
import {
  createMessageBatches,
  MAX_BATCH_BODY,
  type BatchResponse,
  type MessageBatchSettings,
  type StubMessageBatches,
} from './message-batches';
import { createReplier, errorTypeOf } from './reply';
import { parseScenario, type ParsedScenario, type Scenario } from './scenario';
import { writeSse } from './sse';
import { estimateInputTokens } from './usage';
import { validateRequest } from './validate-request';

export interface RecordedRequest {
  path: string;
  scenario: string;
  kind: RequestKind | 'count_tokens';
  /** Number of assistant messages in the request (after its current question, for a `perTurn` scenario). */
  step: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  status: number;
  stream: boolean;
  usage?: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
    /** The written tokens by the ttl they were written with. */
    cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  };
  error?: string;
  startedAt: number;
  endedAt: number;
  /** The client closed the connection before the answer was written (e.g. a cancelled activity). */
  aborted?: boolean;
}

export interface StubModel {
  url: string;
  port: number;
  /** Requests to /v1/messages and /v1/messages/count_tokens; requests of batches are in `messageBatches`. */
  requests: RecordedRequest[];
  /** Highest number of /v1/messages requests in flight at once. */
  maxConcurrent: number;
  inFlight: number;
  /** The Message Batches' settings (changeable at run time) and log. */
  messageBatches: StubMessageBatches;
  /** Empties the logs and the fault counters and cache; batches already created go on. */
  reset(): void;
  close(): Promise<void>;
}

export interface StubModelOptions {
  scenarios: Record<string, Scenario>;
  defaultScenario?: string;
  /** 0 or undefined: a free port. */
  port?: number;
  /** @default 127.0.0.1 */
  host?: string;
  /** @default { processingMs: 1000, createDelayMs: 0 } */
  messageBatches?: Partial<MessageBatchSettings>;
  /**
   * The one key the stub takes (`x-api-key`, or `Authorization: Bearer`); a request with another or
   * none is refused as the API refuses it (see {@link keyRefusal}). Unset: any key or none.
   */
  apiKey?: string;
}

/**
 * Why the API would refuse the credential of a request: none sent, or not `apiKey`. The API answers
 * that with 401 `authentication_error` before looking at the request.
 */
function keyRefusal(headers: http.IncomingHttpHeaders, apiKey: string | undefined): string | undefined {
  if (apiKey === undefined) return undefined;
  const key = headers['x-api-key'];
  const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
  if (key === undefined && bearer === undefined) return 'x-api-key header is required';
  return (key ?? bearer) === apiKey ? undefined : 'invalid x-api-key';
}

const MAX_BODY = 32 * 1024 * 1024;

export async function startStubModel(opts: StubModelOptions): Promise<StubModel> {
  const scenarios = new Map<string, ParsedScenario>();
  for (const [name, s] of Object.entries(opts.scenarios)) scenarios.set(name, parseScenario(s, `scenario ${name}`));
  const replier = createReplier(scenarios, opts.defaultScenario);
  const { place, reply } = replier;
  let requestCounter = 0;
  const batches = createMessageBatches({ settings: opts.messageBatches, url: () => stub.url, place, reply });

  const stub: StubModel = {
    url: '',
    port: 0,
    requests: [],
    maxConcurrent: 0,
    inFlight: 0,
    messageBatches: batches.log,
    reset() {
      stub.requests.length = 0;
      stub.maxConcurrent = 0;
      replier.reset();
      batches.reset();
    },
    close: () => new Promise<void>((resolve) => {
      batches.close();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };

  const server = http.createServer((req, res) => {
    const requestId = `req_stub_${(++requestCounter).toString().padStart(6, '0')}`;
    const startedAt = Date.now();
    const record: RecordedRequest = { path: req.url ?? '', scenario: '', kind: 'step', step: 0, body: undefined, status: 0, stream: false, startedAt, endedAt: 0 };
    const finish = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      record.status = status;
      record.endedAt = Date.now();
      if (status >= 400) record.error = (payload as { error?: { message?: string } }).error?.message;
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers });
      res.end(JSON.stringify(payload));
    };
    const fail = (status: number, message: string, headers: Record<string, string> = {}): void =>
      finish(status, { type: 'error', error: { type: errorTypeOf(status), message }, request_id: requestId }, headers);

    res.once('close', () => {
      if (!res.writableFinished) {
        record.aborted = true;
        record.endedAt = Date.now();
      }
    });

    const [path = '', search = ''] = (req.url ?? '').split('?');
    const batchRoute = path === '/v1/messages/batches' || path.startsWith('/v1/messages/batches/');
    // A batch may be as large as the API takes (256 MB); bytes past the limit are not kept.
    const maxBody = batchRoute ? MAX_BATCH_BODY : MAX_BODY;
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= maxBody) chunks.push(c);
    });
    req.on('end', () => {
      void (batchRoute ? serveBatches() : handle()).catch((err: unknown) => fail(500, `stub error: ${(err as Error).message}`));
    });

    async function serveBatches(): Promise<void> {
      const refused = keyRefusal(req.headers, opts.apiKey);
      if (refused) return fail(401, refused);
      if (size > maxBody) return fail(413, 'Request exceeds the maximum allowed number of bytes.');
      let body: unknown;
      if (req.method === 'POST' && size > 0) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return fail(400, 'There was an issue with the format of the request body: not valid JSON');
        }
      }
      chunks.length = 0;
      const out: BatchResponse = await batches.serve({ method: req.method ?? '', path, query: new URLSearchParams(search), body });
      if ('error' in out) return fail(out.status, out.error);
      if (record.aborted || res.destroyed) return;
      if ('jsonl' in out) {
        res.writeHead(200, { 'content-type': 'application/x-jsonl', 'request-id': requestId });
        res.end(out.jsonl);
        return;
      }
      res.writeHead(out.status, { 'content-type': 'application/json', 'request-id': requestId });
      res.end(JSON.stringify(out.json), () => out.written?.());
    }

    async function handle(): Promise<void> {
      if (req.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')) {
        return fail(404, `Not found: ${req.method} ${req.url}`);
      }
      stub.requests.push(record);
      const refused = keyRefusal(req.headers, opts.apiKey);
      if (refused) return fail(401, refused);
      if (size > MAX_BODY) return fail(413, 'Request exceeds the maximum allowed number of bytes.');
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return fail(400, 'There was an issue with the format of the request body: not valid JSON');
      }
      record.body = body;
      const where = place(body);
      record.scenario = where.scenario;
      record.step = where.step;
      if (path === '/v1/messages/count_tokens') {
        record.kind = 'count_tokens';
        const invalid = validateRequest(body, { countTokens: true });
        if (invalid) return fail(400, invalid);
        return finish(200, { input_tokens: estimateInputTokens(body) });
      }
      record.kind = where.kind;
      record.stream = body.stream === true;
      const r = reply(body, `msg_stub_${requestId.slice('req_stub_'.length)}`);
      if (r.type === 'error' && r.refused) return fail(r.status, r.message);

      stub.inFlight++;
      stub.maxConcurrent = Math.max(stub.maxConcurrent, stub.inFlight);
      try {
        if (r.latencyMs) await new Promise((resolve) => setTimeout(resolve, r.latencyMs));
        if (r.type === 'error') return fail(r.status, r.message, r.headers);
        record.usage = r.usage;
        if (record.stream) {
          record.status = 200;
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
          await writeSse(res, r.message, { delayMs: r.streamDelayMs });
          if (!record.aborted) record.endedAt = Date.now();
          return;
        }
        return finish(200, r.message);
      } finally {
        stub.inFlight--;
      }
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  stub.port = address.port;
  stub.url = `http://${opts.host ?? '127.0.0.1'}:${address.port}`;
  return stub;
}
