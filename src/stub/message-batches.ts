/**
 * The stub's Message Batches API (`/v1/messages/batches`): create, retrieve, list, cancel, delete and
 * the JSONL results, as the real API serves them to the Anthropic SDK. Each request of a batch is
 * answered exactly as the same request to /v1/messages (content, usage, cache, scenario faults), as
 * a per-request result; the batch ends `processingMs` after it was created. The log tests read is
 * `StubMessageBatches`.
 */
import { randomBytes } from 'node:crypto';
import type { RequestKind } from './answer';
import type { Reply, RequestPlace } from './reply';
import type { Usage } from './usage';
import { isRecord } from '../core/is-record';

/** The real API's limits for one batch. */
export const MAX_BATCH_REQUESTS = 100_000;
export const MAX_BATCH_BODY = 256 * 1024 * 1024;
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const DAY_MS = 24 * 60 * 60 * 1000;
/** A cancelled batch ends this long after the cancel call (it is `canceling` in between). */
const CANCEL_MS = 10;
const LIST_LIMIT = { default: 20, max: 1000 };

export type BatchOutcome = 'succeeded' | 'errored' | 'canceled' | 'expired';
export type BatchStatus = 'in_progress' | 'canceling' | 'ended';

export interface MessageBatchSettings {
  /** Milliseconds from a batch's creation to its end (every request answered). Read when a batch is created. @default 1000 */
  processingMs: number;
  /** Milliseconds between reading a create request's body (the batch exists) and writing its response. @default 0 */
  createDelayMs: number;
}

export interface BatchRequestLog {
  customId: string;
  /** Empty when no scenario answers the request. */
  scenario: string;
  kind: RequestKind;
  step: number;
  question: string;
  /** Set when the batch ends. */
  outcome?: BatchOutcome;
  /** A succeeded request's usage, as /v1/messages reports it. */
  usage?: Usage;
  /** An errored request's error message. */
  error?: string;
}

export interface MessageBatchLog {
  id: string;
  /** Epoch milliseconds: when the create request's body was read. */
  createdAt: number;
  endedAt?: number;
  status: BatchStatus;
  /** A cancel was asked while the batch was processing. */
  canceled: boolean;
  /** The create response was written in full (false while delayed, or when the client went away). */
  createResponded: boolean;
  deleted: boolean;
  requests: BatchRequestLog[];
  /** How many times its results were served. */
  resultsFetched: number;
}

export interface StubMessageBatches {
  /** Changeable at run time; `processingMs` applies to batches created afterwards. */
  settings: MessageBatchSettings;
  /** Every batch created (oldest first), deleted ones too. */
  batches: MessageBatchLog[];
  /** Create calls whose body was read, refused ones too. */
  createsReceived: number;
  /** In how many batches `customId` was submitted. */
  submissions(customId: string): number;
  /** custom_ids submitted in more than one batch, leaving out cancelled batches (which may be resubmitted). */
  duplicateSubmissions(): Array<{ customId: string; batches: string[] }>;
}

/** What a batch route answers: a JSON body, a JSONL body, or the API's error with this status. */
export type BatchResponse =
  | { status: number; json: unknown; /** Called once the response was written in full. */ written?: () => void }
  | { status: 200; jsonl: string }
  | { status: number; error: string };

export interface BatchRoute {
  method: string;
  /** The path without the query. */
  path: string;
  query: URLSearchParams;
  /** The parsed JSON body (POST only). */
  body: unknown;
}

type ErrorResponse = { type: 'error'; error: { type: string; message: string }; request_id: string | null };
type BatchResult =
  | { type: 'succeeded'; message: unknown }
  | { type: 'errored'; error: ErrorResponse }
  | { type: 'canceled' }
  | { type: 'expired' };

interface Batch {
  log: MessageBatchLog;
  /** Each request's params until the batch ends. */
  params?: Array<Record<string, unknown>>;
  results: BatchResult[];
  cancelInitiatedAt?: number;
  timer?: NodeJS.Timeout;
}

export interface MessageBatchesDeps {
  settings?: Partial<MessageBatchSettings>;
  /** The stub's base URL (for `results_url`). */
  url(): string;
  /** Where a request falls in its scenario, as the /v1/messages log records it. */
  place(body: Record<string, unknown>): RequestPlace;
  /** The answer /v1/messages gives the request (one call: fault counters and the cache move on). */
  reply(body: Record<string, unknown>, messageId: string): Reply;
}

export interface MessageBatches {
  log: StubMessageBatches;
  serve(route: BatchRoute): Promise<BatchResponse>;
  /** Empties the log; batches already created go on and are still served. */
  reset(): void;
  /** Stops every timer. */
  close(): void;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function createMessageBatches(deps: MessageBatchesDeps): MessageBatches {
  const settings: MessageBatchSettings = {
    processingMs: deps.settings?.processingMs ?? 1000,
    createDelayMs: deps.settings?.createDelayMs ?? 0,
  };
  /** Batches not deleted, oldest first. */
  const order: Batch[] = [];
  const byId = new Map<string, Batch>();
  const timers = new Set<NodeJS.Timeout>();
  let batchCounter = 0;

  const log: StubMessageBatches = {
    settings,
    batches: [],
    createsReceived: 0,
    submissions: (customId) => log.batches.filter((b) => b.requests.some((r) => r.customId === customId)).length,
    duplicateSubmissions() {
      const seen = new Map<string, string[]>();
      for (const b of log.batches) {
        if (b.canceled) continue;
        for (const r of b.requests) seen.set(r.customId, [...(seen.get(r.customId) ?? []), b.id]);
      }
      return [...seen].filter(([, ids]) => ids.length > 1).map(([customId, ids]) => ({ customId, batches: ids }));
    },
  };

  /** A timer that keeps no process alive and that `close()` stops. */
  function later(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    t.unref();
    timers.add(t);
    return t;
  }
  function stop(t: NodeJS.Timeout | undefined): void {
    if (!t) return;
    clearTimeout(t);
    timers.delete(t);
  }
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => (ms > 0 ? later(ms, resolve) : resolve()));

  function view(b: Batch): Record<string, unknown> {
    const { log: l } = b;
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (l.status !== 'ended') counts.processing = l.requests.length;
    else for (const r of l.requests) if (r.outcome) counts[r.outcome]++;
    return {
      id: l.id,
      type: 'message_batch',
      processing_status: l.status,
      request_counts: counts,
      ended_at: iso(l.endedAt),
      created_at: iso(l.createdAt),
      expires_at: iso(l.createdAt + DAY_MS),
      cancel_initiated_at: iso(b.cancelInitiatedAt),
      archived_at: null,
      results_url: l.status === 'ended' ? `${deps.url()}/v1/messages/batches/${l.id}/results` : null,
    };
  }

  /** The create body's refusal, as the API words it, or undefined when the batch is accepted. */
  function refusal(body: unknown): string | undefined {
    if (!isRecord(body)) return 'Input should be a valid dictionary';
    const requests = body.requests;
    if (requests === undefined) return 'requests: Field required';
    if (!Array.isArray(requests)) return 'requests: Input should be a valid list';
    if (requests.length === 0) return 'requests: List should have at least 1 item after validation, not 0';
    if (requests.length > MAX_BATCH_REQUESTS) {
      return `requests: List should have at most ${MAX_BATCH_REQUESTS} items after validation, not ${requests.length}`;
    }
    const firstIndex = new Map<string, number>();
    for (const [i, r] of requests.entries()) {
      if (!isRecord(r)) return `requests.${i}: Input should be a valid dictionary`;
      const id: unknown = r.custom_id;
      if (typeof id !== 'string') return `requests.${i}.custom_id: Field required (a string)`;
      if (!CUSTOM_ID.test(id)) return `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$' (got ${JSON.stringify(id)})`;
      const first = firstIndex.get(id);
      if (first !== undefined) {
        return `requests.${i}.custom_id: Duplicate custom_id ${JSON.stringify(id)} (also requests.${first}.custom_id); each request in a batch needs a unique custom_id`;
      }
      firstIndex.set(id, i);
      if (!isRecord(r.params)) return `requests.${i}.params: Input should be a valid dictionary`;
      if (r.params.stream !== undefined && r.params.stream !== false) {
        return `requests.${i}.params.stream: Streaming is not supported for requests in a Message Batch`;
      }
    }
    return undefined;
  }

  async function create(body: unknown): Promise<BatchResponse> {
    log.createsReceived++;
    const refused = refusal(body);
    if (refused) return { status: 400, error: refused };
    const requests = (body as { requests: Array<{ custom_id: string; params: Record<string, unknown> }> }).requests;
    const createdAt = Date.now();
    const id = `msgbatch_stub_${(++batchCounter).toString().padStart(6, '0')}_${randomBytes(6).toString('hex')}`;
    const b: Batch = {
      log: {
        id,
        createdAt,
        status: 'in_progress',
        canceled: false,
        createResponded: false,
        deleted: false,
        requests: requests.map((r) => ({ customId: r.custom_id, ...deps.place(r.params) })),
        resultsFetched: 0,
      },
      params: requests.map((r) => r.params),
      results: [],
    };
    order.push(b);
    byId.set(id, b);
    log.batches.push(b.log);
    b.timer = later(settings.processingMs, () => processBatch(b));
    // The response is the batch as created, however late it is written.
    const created = view(b);
    await sleep(settings.createDelayMs);
    return { status: 200, json: created, written: () => (b.log.createResponded = true) };
  }

  /** Answers every request of the batch, as /v1/messages would, in submission order; the batch ends. */
  function processBatch(b: Batch): void {
    b.timer = undefined;
    (b.params ?? []).forEach((params, i) => {
      const { result, usage } = answerOne(params, `msg_stub_${b.log.id.slice('msgbatch_stub_'.length)}_${i}`);
      const entry = b.log.requests[i]!;
      b.results[i] = result;
      entry.outcome = result.type;
      if (usage) entry.usage = usage;
      if (result.type === 'errored') entry.error = result.error.error.message;
    });
    end(b);
  }

  /** A request's result from its /v1/messages answer; a matching fault's `batchResult` decides errored or expired. */
  function answerOne(params: Record<string, unknown>, messageId: string): { result: BatchResult; usage?: Usage } {
    let reply: Reply;
    try {
      reply = deps.reply(params, messageId);
    } catch (err) {
      return { result: errored('api_error', `stub error: ${(err as Error).message}`) };
    }
    if (reply.type === 'message') return { result: { type: 'succeeded', message: reply.message }, usage: reply.usage };
    if (reply.fault?.batchResult === 'expired') return { result: { type: 'expired' } };
    return { result: errored(reply.errorType, reply.message) };
  }

  function end(b: Batch): void {
    b.params = undefined;
    b.log.status = 'ended';
    b.log.endedAt = Date.now();
  }

  function cancel(b: Batch): Record<string, unknown> {
    if (b.log.status !== 'in_progress') return view(b);
    stop(b.timer);
    b.timer = undefined;
    b.log.status = 'canceling';
    b.log.canceled = true;
    b.cancelInitiatedAt = Date.now();
    const answer = view(b);
    later(CANCEL_MS, () => {
      b.log.requests.forEach((entry, i) => {
        if (entry.outcome) return;
        entry.outcome = 'canceled';
        b.results[i] = { type: 'canceled' };
      });
      end(b);
    });
    return answer;
  }

  function list(query: URLSearchParams): BatchResponse {
    const rawLimit = query.get('limit');
    const limit = rawLimit === null ? LIST_LIMIT.default : Number(rawLimit);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT.max) {
      return { status: 400, error: `limit: Input should be an integer from 1 to ${LIST_LIMIT.max}, got ${JSON.stringify(rawLimit)}` };
    }
    const before = query.get('before_id');
    const after = query.get('after_id');
    if (before !== null && after !== null) return { status: 400, error: 'Only one of before_id and after_id may be given' };
    // Newest first; `after_id` pages towards older batches, `before_id` towards newer ones.
    const newest = [...order].reverse();
    const at = (id: string): number => newest.findIndex((b) => b.log.id === id);
    let from = 0;
    let to = Math.min(limit, newest.length);
    if (after !== null) {
      const i = at(after);
      from = i === -1 ? newest.length : i + 1;
      to = Math.min(from + limit, newest.length);
    } else if (before !== null) {
      const i = at(before);
      to = i === -1 ? 0 : i;
      from = Math.max(0, to - limit);
    }
    const page = newest.slice(from, to);
    const hasMore = before !== null ? from > 0 : to < newest.length;
    return {
      status: 200,
      json: { data: page.map(view), has_more: hasMore, first_id: page[0]?.log.id ?? null, last_id: page[page.length - 1]?.log.id ?? null },
    };
  }

  function results(b: Batch): BatchResponse {
    if (b.log.status !== 'ended') {
      return { status: 404, error: `Message Batch ${b.log.id} has no results yet: its processing_status is ${b.log.status}` };
    }
    b.log.resultsFetched++;
    // The API gives results in any order; the stub gives them last submitted first.
    const lines = b.log.requests.map((r, i) => JSON.stringify({ custom_id: r.customId, result: b.results[i] })).reverse();
    return { status: 200, jsonl: `${lines.join('\n')}\n` };
  }

  function remove(b: Batch): BatchResponse {
    if (b.log.status !== 'ended') {
      return { status: 400, error: `Message Batch ${b.log.id} cannot be deleted while it is ${b.log.status}; cancel it and wait for it to end first` };
    }
    byId.delete(b.log.id);
    order.splice(order.indexOf(b), 1);
    b.log.deleted = true;
    return { status: 200, json: { id: b.log.id, type: 'message_batch_deleted' } };
  }

  async function serve({ method, path, query, body }: BatchRoute): Promise<BatchResponse> {
    const notFound: BatchResponse = { status: 404, error: `Not found: ${method} ${path}` };
    const [, id, action, ...rest] = path.slice('/v1/messages/batches'.length).split('/');
    if (id === undefined) {
      if (method === 'POST') return create(body);
      if (method === 'GET') return list(query);
      return notFound;
    }
    let batchId: string;
    try {
      batchId = decodeURIComponent(id);
    } catch {
      return notFound;
    }
    if (rest.length || !batchId) return notFound;
    const b = byId.get(batchId);
    const known = (fn: (b: Batch) => BatchResponse): BatchResponse =>
      b ? fn(b) : { status: 404, error: `Message Batch ${batchId} not found` };
    if (action === undefined && method === 'GET') return known((b) => ({ status: 200, json: view(b) }));
    if (action === undefined && method === 'DELETE') return known(remove);
    if (action === 'cancel' && method === 'POST') return known((b) => ({ status: 200, json: cancel(b) }));
    if (action === 'results' && method === 'GET') return known(results);
    return notFound;
  }

  return {
    log,
    serve,
    reset() {
      log.batches.length = 0;
      log.createsReceived = 0;
    },
    close() {
      for (const t of [...timers]) stop(t);
    },
  };
}

const errored = (type: string, message: string): BatchResult => ({
  type: 'errored',
  error: { type: 'error', error: { type, message }, request_id: null },
});
