import { APIConnectionError, APIError, BadRequestError } from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { callClaude } from '../../src/claude/call-claude';
import { createClaudeClient } from '../../src/claude/client';
import {
  parseRetryAfter,
  toClaudeFailure,
  type ClaudeFailureDetails,
} from '../../src/claude/errors';
import type { ClaudeRequest } from '../../src/core/contracts';
import { errorBody, startFakeApi, type CannedResponse, type FakeApi } from './claude-fake-api';

const input: ClaudeRequest = {
  model: 'fake-model',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  maxTokens: 100,
};

let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());

async function failureFor(
  response: CannedResponse,
  opts: { stream?: boolean; timeoutMs?: number; policy?: { retryAfterCapMs?: number; noRetryAfterDelayMs?: number } } = {},
): Promise<ApplicationFailure> {
  api.respond(response);
  const client = createClaudeClient({ baseURL: api.url, apiKey: 'sk-test-secret', timeoutMs: opts.timeoutMs });
  const err = await callClaude(client, input, {
    stream: opts.stream ?? false,
    ...(opts.policy ? { errorPolicy: opts.policy } : {}),
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

function details(f: ApplicationFailure): ClaudeFailureDetails {
  return f.details?.[0] as ClaudeFailureDetails;
}

const rid = { 'request-id': 'req_123' };

describe('toClaudeFailure through the real SDK', () => {
  const table: Array<{
    name: string;
    response: CannedResponse;
    type: string;
    retryable: boolean;
    delay?: number;
    message?: string;
  }> = [
    {
      name: '400 invalid request',
      response: { status: 400, headers: rid, body: errorBody('invalid_request_error', 'messages: field required') },
      type: 'ClaudeInvalidRequest',
      retryable: false,
      message: 'Claude API 400 invalid_request_error: messages: field required (request-id req_123)',
    },
    {
      name: '401 auth',
      response: { status: 401, headers: rid, body: errorBody('authentication_error', 'invalid x-api-key') },
      type: 'ClaudeAuth',
      retryable: false,
      message:
        'Claude API 401 authentication_error: invalid x-api-key - check ANTHROPIC_API_KEY (missing, mistyped or revoked key) (request-id req_123)',
    },
    {
      name: '403 permission',
      response: { status: 403, headers: rid, body: errorBody('permission_error', 'no access') },
      type: 'ClaudeAuth',
      retryable: false,
    },
    {
      name: '404 not found',
      response: { status: 404, headers: rid, body: errorBody('not_found_error', 'model: no-such-model') },
      type: 'ClaudeInvalidRequest',
      retryable: false,
    },
    {
      name: '413 too large',
      response: { status: 413, headers: rid, body: errorBody('request_too_large', 'Request exceeds the maximum size') },
      type: 'ClaudeInvalidRequest',
      retryable: false,
    },
    {
      name: '422 unprocessable',
      response: { status: 422, headers: rid, body: errorBody('invalid_request_error', 'bad') },
      type: 'ClaudeInvalidRequest',
      retryable: false,
    },
    {
      name: '429 with retry-after (seconds)',
      response: { status: 429, headers: { ...rid, 'retry-after': '7' }, body: errorBody('rate_limit_error', 'slow down') },
      type: 'ClaudeRateLimited',
      retryable: true,
      delay: 7000,
      message: 'Claude API 429 rate_limit_error: slow down (request-id req_123)',
    },
    {
      name: '429 with retry-after-ms',
      response: {
        status: 429,
        headers: { ...rid, 'retry-after-ms': '1500', 'retry-after': '2' },
        body: errorBody('rate_limit_error', 'slow down'),
      },
      type: 'ClaudeRateLimited',
      retryable: true,
      delay: 1500,
    },
    {
      name: '429 with a retry-after above the cap',
      response: { status: 429, headers: { ...rid, 'retry-after': '120' }, body: errorBody('rate_limit_error', 'slow') },
      type: 'ClaudeRateLimited',
      retryable: true,
      delay: 60_000,
    },
    {
      name: '429 without retry-after (spend cap)',
      response: { status: 429, headers: rid, body: errorBody('rate_limit_error', 'spend limit reached') },
      type: 'ClaudeRateLimitedNoRetryAfter',
      retryable: true,
      delay: 30_000,
    },
    {
      name: '500 api error',
      response: { status: 500, headers: rid, body: errorBody('api_error', 'Internal server error') },
      type: 'ClaudeServerError',
      retryable: true,
    },
    {
      name: '502 bad gateway (no JSON body type)',
      response: { status: 502, headers: rid, body: { message: 'bad gateway' } },
      type: 'ClaudeServerError',
      retryable: true,
    },
    {
      name: '503 unavailable',
      response: { status: 503, headers: rid, body: errorBody('api_error', 'unavailable') },
      type: 'ClaudeServerError',
      retryable: true,
    },
    {
      name: '504 gateway timeout',
      response: { status: 504, headers: rid, body: errorBody('timeout_error', 'timeout') },
      type: 'ClaudeServerError',
      retryable: true,
    },
    {
      name: '529 overloaded',
      response: { status: 529, headers: rid, body: errorBody('overloaded_error', 'Overloaded') },
      type: 'ClaudeOverloaded',
      retryable: true,
      message: 'Claude API 529 overloaded_error: Overloaded (request-id req_123)',
    },
    {
      name: '529 with retry-after honours it',
      response: { status: 529, headers: { ...rid, 'retry-after': '3' }, body: errorBody('overloaded_error', 'Overloaded') },
      type: 'ClaudeOverloaded',
      retryable: true,
      delay: 3000,
    },
    {
      name: 'x-should-retry: true makes a 400 retryable',
      response: { status: 400, headers: { ...rid, 'x-should-retry': 'true' }, body: errorBody('invalid_request_error', 'x') },
      type: 'ClaudeInvalidRequest',
      retryable: true,
    },
    {
      name: 'x-should-retry: true leaves a 401 final (a refused key does not fix itself)',
      response: { status: 401, headers: { ...rid, 'x-should-retry': 'true' }, body: errorBody('authentication_error', 'invalid x-api-key') },
      type: 'ClaudeAuth',
      retryable: false,
      message:
        'Claude API 401 authentication_error: invalid x-api-key - check ANTHROPIC_API_KEY (missing, mistyped or revoked key) (request-id req_123)',
    },
    {
      name: 'x-should-retry: true leaves a 403 final',
      response: { status: 403, headers: { ...rid, 'x-should-retry': 'true' }, body: errorBody('permission_error', 'no access') },
      type: 'ClaudeAuth',
      retryable: false,
    },
    {
      name: 'x-should-retry: false makes a 529 final',
      response: { status: 529, headers: { ...rid, 'x-should-retry': 'false' }, body: errorBody('overloaded_error', 'no') },
      type: 'ClaudeOverloaded',
      retryable: false,
    },
    {
      name: 'x-should-retry: false makes a 429 final (no delay)',
      response: {
        status: 429,
        headers: { ...rid, 'x-should-retry': 'false', 'retry-after': '5' },
        body: errorBody('rate_limit_error', 'no'),
      },
      type: 'ClaudeRateLimited',
      retryable: false,
    },
  ];

  it.each(table)('$name', async ({ response, type, retryable, delay, message }) => {
    const f = await failureFor(response);
    expect(f.type).toBe(type);
    expect(f.nonRetryable).toBe(!retryable);
    expect(f.nextRetryDelay).toBe(delay);
    expect(f.message).not.toMatch(/\n/);
    expect(f.message).toMatch(/^Claude API \d{3}[ :]/);
    expect(f.message).toContain('(request-id req_123)');
    expect(f.message).not.toContain('sk-test-secret');
    if (message) expect(f.message).toBe(message);
    const d = details(f);
    expect(d.status).toBe(response.status);
    expect(d.requestId).toBe('req_123');
  });

  it('puts status, request id, error type and retry-after in details', async () => {
    const f = await failureFor({
      status: 429,
      headers: { ...rid, 'retry-after': '4' },
      body: errorBody('rate_limit_error', 'slow down'),
    });
    expect(details(f)).toEqual({
      sdkError: 'RateLimitError',
      status: 429,
      requestId: 'req_123',
      errorType: 'rate_limit_error',
      retryAfterMs: 4000,
    });
  });

  it('uses the configured cap and no-retry-after delay', async () => {
    const policy = { retryAfterCapMs: 2000, noRetryAfterDelayMs: 90_000 };
    const capped = await failureFor({ status: 429, headers: { 'retry-after': '10' } }, { policy });
    expect(capped.nextRetryDelay).toBe(2000);
    const spendCap = await failureFor({ status: 429 }, { policy });
    expect(spendCap.nextRetryDelay).toBe(90_000);
  });

  it('makes exactly one HTTP request per call (maxRetries 0)', async () => {
    const before = api.requests.length;
    await failureFor({ status: 529, body: errorBody('overloaded_error', 'Overloaded') });
    await failureFor({ status: 429, headers: { 'retry-after': '1' } });
    expect(api.requests.length - before).toBe(2);
  });

  it('maps the same status the same way when streaming', async () => {
    const f = await failureFor(
      { status: 529, headers: rid, body: errorBody('overloaded_error', 'Overloaded') },
      { stream: true },
    );
    expect(f.type).toBe('ClaudeOverloaded');
    expect(f.message).toBe('Claude API 529 overloaded_error: Overloaded (request-id req_123)');
  });

  it('maps an error event inside a 200 stream by its error type', async () => {
    const sse =
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"fake-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const f = await failureFor({ status: 200, headers: rid, sse }, { stream: true });
    expect(f.type).toBe('ClaudeOverloaded');
    expect(f.nonRetryable).toBe(false);
    expect(f.message).toBe('Claude API stream error overloaded_error: Overloaded (request-id req_123)');
    expect(details(f)).toMatchObject({ status: 529, inStream: true, errorType: 'overloaded_error' });
  });

  it('maps a refused connection to a retryable ClaudeConnection', async () => {
    const closed = await startFakeApi();
    const url = closed.url;
    await closed.close();
    const client = createClaudeClient({ baseURL: url, apiKey: 'k' });
    const err = (await callClaude(client, input).catch((e: unknown) => e)) as ApplicationFailure;
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err.type).toBe('ClaudeConnection');
    expect(err.nonRetryable).toBe(false);
    expect(err.message).toMatch(/^Claude API connection error: /);
    expect(err.nextRetryDelay).toBeUndefined();
  });

  it('maps a timeout to a retryable ClaudeConnection', async () => {
    const f = await failureFor({ status: 200, delayMs: 2000 }, { timeoutMs: 100 });
    expect(f.type).toBe('ClaudeConnection');
    expect(f.nonRetryable).toBe(false);
    expect(f.message).toMatch(/^Claude API request timed out: /);
  });
});

describe('toClaudeFailure on its own', () => {
  it('passes an ApplicationFailure through', () => {
    const f = ApplicationFailure.create({ type: 'X', message: 'x' });
    expect(toClaudeFailure(f)).toBe(f);
  });

  it('wraps an unknown error as a retryable ClaudeClientError', () => {
    const f = toClaudeFailure(new Error('stream ended\nwithout a message'));
    expect(f.type).toBe('ClaudeClientError');
    expect(f.nonRetryable).toBe(false);
    expect(f.message).toBe('Claude client error: stream ended without a message');
  });

  it('maps a connection error with its cause', () => {
    const f = toClaudeFailure(new APIConnectionError({ cause: new Error('connect ECONNREFUSED 127.0.0.1:1') }));
    expect(f.type).toBe('ClaudeConnection');
    expect(f.message).toBe('Claude API connection error: Connection error. (connect ECONNREFUSED 127.0.0.1:1)');
  });
});

describe('parseRetryAfter', () => {
  it('prefers retry-after-ms, then seconds, then an HTTP date', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250.4', 'retry-after': '9' }))).toBe(251);
    expect(parseRetryAfter(new Headers({ 'retry-after': '1.5' }))).toBe(1500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }), now)).toBe(10_000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(new Headers())).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('prompt too long', () => {
  const tooLong = new BadRequestError(
    400,
    errorBody('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
    undefined,
    new Headers({ 'request-id': 'req_1' }),
  );

  it('is its own failure type, so the workflow decides by the type alone', () => {
    expect(toClaudeFailure(tooLong)).toMatchObject({ type: 'ClaudePromptTooLong', nonRetryable: true });
  });

  it('is not any other 400 or an overload that mentions the context window', () => {
    const other = new BadRequestError(400, errorBody('invalid_request_error', 'bad tool name'), undefined, new Headers());
    expect(toClaudeFailure(other).type).toBe('ClaudeInvalidRequest');
    const overloaded = APIError.generate(529, errorBody('overloaded_error', 'context window'), undefined, new Headers());
    expect(toClaudeFailure(overloaded).type).toBe('ClaudeOverloaded');
  });
});
