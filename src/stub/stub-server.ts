/**
 * The scripted, Anthropic-compatible model: `POST /v1/messages` (plain and streamed) and
 * `POST /v1/messages/count_tokens`, answering from scenarios. Stateless in what it answers (the step
 * is the number of assistant messages in the request), so concurrent turns and retries work; the
 * only state is the fault counters, the cache prefixes seen, and the request log tests read.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answer, estimateInputTokens, questionOf, requestKind, turnPosition } from './answer';
import { parseScenario, type ParsedScenario, type Scenario } from './scenario';
import { writeSse } from './sse';
import { validateRequest } from './validate-request';

export interface RecordedRequest {
  path: string;
  scenario: string;
  kind: 'step' | 'formatter' | 'count_tokens';
  /** Number of assistant messages in the request (after its current question, for a `perTurn` scenario). */
  step: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  status: number;
  stream: boolean;
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number };
  error?: string;
  startedAt: number;
  endedAt: number;
  /** The client closed the connection before the answer was written (e.g. a cancelled activity). */
  aborted?: boolean;
}

export interface StubModel {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Highest number of /v1/messages requests in flight at once. */
  maxConcurrent: number;
  inFlight: number;
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
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};
const MAX_BODY = 32 * 1024 * 1024;

export async function startStubModel(opts: StubModelOptions): Promise<StubModel> {
  const scenarios = new Map<string, ParsedScenario>();
  for (const [name, s] of Object.entries(opts.scenarios)) scenarios.set(name, parseScenario(s, `scenario ${name}`));
  const faultCounts = new Map<string, number>();
  const cachePrefixes = new Set<string>();
  let requestCounter = 0;

  const stub: StubModel = {
    url: '',
    port: 0,
    requests: [],
    maxConcurrent: 0,
    inFlight: 0,
    reset() {
      stub.requests.length = 0;
      stub.maxConcurrent = 0;
      faultCounts.clear();
      cachePrefixes.clear();
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };

  function pick(body: Record<string, unknown>): { name: string; scenario: ParsedScenario } | string {
    const model = String(body.model);
    if (scenarios.has(model)) return { name: model, scenario: scenarios.get(model)! };
    const marker = /\[\[scenario:([^\]]+)\]\]/.exec(questionOf((body.messages ?? []) as never[]))?.[1];
    const name = marker ?? opts.defaultScenario;
    if (!name) return `model: no scenario named "${model}" (and no [[scenario:NAME]] marker or default scenario)`;
    const scenario = scenarios.get(name);
    return scenario ? { name, scenario } : `no scenario named "${name}"`;
  }

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
      finish(status, { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message }, request_id: requestId }, headers);

    res.once('close', () => {
      if (!res.writableFinished) {
        record.aborted = true;
        record.endedAt = Date.now();
      }
    });

    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      void handle().catch((err: unknown) => fail(500, `stub error: ${(err as Error).message}`));
    });

    async function handle(): Promise<void> {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')) {
        return fail(404, `Not found: ${req.method} ${req.url}`);
      }
      stub.requests.push(record);
      if (size > MAX_BODY) return fail(413, 'Request exceeds the maximum allowed number of bytes.');
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return fail(400, 'There was an issue with the format of the request body: not valid JSON');
      }
      record.body = body;
      record.step = Array.isArray(body.messages) ? (body.messages as Array<{ role?: string }>).filter((m) => m?.role === 'assistant').length : 0;
      const countOnly = path === '/v1/messages/count_tokens';
      const invalid = validateRequest(body, { countTokens: countOnly });
      const picked = pick(body);
      if (typeof picked !== 'string') {
        record.scenario = picked.name;
        if (picked.scenario.perTurn && Array.isArray(body.messages)) record.step = turnPosition(body.messages as never[], true, requestKind(body)).step;
      }
      if (countOnly) {
        record.kind = 'count_tokens';
        if (invalid) return fail(400, invalid);
        return finish(200, { input_tokens: estimateInputTokens(body) });
      }
      record.kind = requestKind(body);
      record.stream = body.stream === true;
      if (invalid) return fail(400, invalid);
      if (typeof picked === 'string') return fail(400, picked);
      const { name, scenario } = picked;

      stub.inFlight++;
      stub.maxConcurrent = Math.max(stub.maxConcurrent, stub.inFlight);
      try {
        const { question } = turnPosition(body.messages as never[], scenario.perTurn, record.kind);
        for (const fault of scenario.faults) {
          if (fault.step !== record.step || fault.kind !== record.kind) continue;
          const key = `${name}|${fault.step}|${fault.kind}|${fault.status}|${question}`;
          const used = faultCounts.get(key) ?? 0;
          if (fault.times !== -1 && used >= fault.times) continue;
          faultCounts.set(key, used + 1);
          const headers: Record<string, string> = {};
          if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
          if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
          if (fault.shouldRetry !== undefined) headers['x-should-retry'] = String(fault.shouldRetry);
          if (scenario.latencyMs) await new Promise((r) => setTimeout(r, scenario.latencyMs));
          return fail(fault.status, fault.message ?? defaultMessage(fault.status), headers);
        }
        if (scenario.contextWindowTokens !== undefined) {
          const estimate = estimateInputTokens(body);
          if (estimate > scenario.contextWindowTokens) return fail(400, `prompt is too long: ${estimate} tokens > ${scenario.contextWindowTokens} maximum`);
        }
        if (record.kind === 'formatter' && scenario.formatterRefusesForcedTool && (body.tool_choice as { type?: string } | undefined)?.type === 'tool') {
          return fail(400, "tool_choice of type 'tool' is not supported with this model; use 'auto'");
        }
        const a = answer(name, scenario, body, cachePrefixes);
        if (a.latencyMs) await new Promise((r) => setTimeout(r, a.latencyMs));
        const message = {
          id: `msg_stub_${requestCounter.toString().padStart(6, '0')}`,
          type: 'message',
          role: 'assistant',
          model: String(body.model),
          content: a.content,
          stop_reason: a.stopReason,
          stop_sequence: null,
          usage: { ...a.usage, cache_creation: null, inference_geo: null, output_tokens_details: null, server_tool_use: null, service_tier: 'standard' },
        };
        record.usage = a.usage;
        if (record.stream) {
          record.status = 200;
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
          await writeSse(res, message, { delayMs: a.streamDelayMs });
          if (!record.aborted) record.endedAt = Date.now();
          return;
        }
        return finish(200, message);
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

function defaultMessage(status: number): string {
  if (status === 529) return 'Overloaded';
  if (status === 429) return 'Number of request tokens has exceeded your per-minute rate limit';
  if (status === 401) return 'invalid x-api-key';
  if (status === 403) return 'Your API key does not have permission to use the specified resource.';
  if (status >= 500) return 'Internal server error';
  return `error ${status}`;
}
