/**
 * The one place where Anthropic SDK errors become Temporal failures. The SDK runs with
 * `maxRetries: 0`, so Temporal's retry policy is the only retry loop; this mapping decides, per
 * error, whether that loop may run again and how long it should wait first.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AnthropicError,
} from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { ClaudeFailureType, type ClaudeFailureTypeName } from '../core/failure-types';
import { oneLine } from '../core/text';

/** How long rate-limited calls wait before Temporal's next attempt. */
export interface ClaudeErrorPolicy {
  /** Upper bound for a `retry-after` / `retry-after-ms` the API asks for. @default 60000 */
  retryAfterCapMs: number;
  /** Delay after a 429 that carries no `retry-after` (spend caps do not clear soon). @default 30000 */
  noRetryAfterDelayMs: number;
}

export const DEFAULT_CLAUDE_ERROR_POLICY: Readonly<ClaudeErrorPolicy> = Object.freeze({
  retryAfterCapMs: 60_000,
  noRetryAfterDelayMs: 30_000,
});

/** What a Claude failure carries in `details[0]`, for logs, the UI and the workflow. */
export interface ClaudeFailureDetails {
  /** HTTP status; for an error event inside a stream, the status its error type stands for. */
  status?: number;
  requestId?: string;
  /** The API's `error.type`, e.g. `overloaded_error`. */
  errorType?: string;
  /** The API's `error.details.error_code`, when present. */
  errorCode?: string;
  /** The delay the API asked for (`retry-after-ms` or `retry-after`), before capping. */
  retryAfterMs?: number;
  /** The `x-should-retry` header, when present. */
  shouldRetry?: boolean;
  /** True when the error arrived as an SSE `error` event after a 200. */
  inStream?: boolean;
  /** SDK error class, e.g. `RateLimitError`. */
  sdkError?: string;
}

/** The status an error event inside a stream stands for (the event itself has no status). */
export const STATUS_OF_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Longest message text in a failure: 1000 characters, then `...` when cut. */
const MAX_MESSAGE_CHARS = 1000 + '...'.length;

/** How the API words a 400 for a prompt that does not fit the model's context window. */
const PROMPT_TOO_LONG = /prompt is too long|context window|context length|too many (input )?tokens/i;

/** Where the failed call went, named in the failure when the connection itself failed. */
export interface ClaudeCallTarget {
  /** The request's URL, e.g. `http://127.0.0.1:8787/v1/messages`. */
  url?: string;
}

/**
 * The network errors a person can act on, in words: the code is on the innermost cause of the
 * SDK's `APIConnectionError` (`Connection error.`, caused by fetch's `fetch failed`, caused by the
 * socket's error), which the failure would otherwise reduce to `fetch failed`.
 */
const NETWORK_ERROR_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
};

/** The words for the first known network error code in `err`'s cause chain, if any. */
function networkErrorOf(err: Error): string | undefined {
  // Not `instanceof Error`: fetch's errors may come from another realm (a vm context, as in jest).
  let current: unknown = err;
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 10; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === 'string' && NETWORK_ERROR_WORDS[code]) return NETWORK_ERROR_WORDS[code];
    current = cause;
  }
  return undefined;
}

/**
 * Maps any error from a Claude call to an {@link ApplicationFailure}:
 *
 * | status | type | retry |
 * |---|---|---|
 * | 400 "prompt is too long" (context window) | `ClaudePromptTooLong` | no |
 * | 400, 404, 413, 422 (other 4xx too) | `ClaudeInvalidRequest` | no |
 * | 401, 403 | `ClaudeAuth` | no |
 * | 402 | `ClaudeBilling` | no |
 * | 429 + retry-after(-ms) | `ClaudeRateLimited` | yes, `nextRetryDelay` = retry-after (capped) |
 * | 429 without it | `ClaudeRateLimitedNoRetryAfter` | yes, `nextRetryDelay` = noRetryAfterDelayMs |
 * | 529 | `ClaudeOverloaded` | yes, Temporal backoff |
 * | 409, 500, 502, 503, 504, other 5xx | `ClaudeServerError` | yes, Temporal backoff |
 * | 408, connection error, timeout | `ClaudeConnection` | yes, Temporal backoff |
 *
 * A `retry-after` on any retryable error is honoured (capped). `x-should-retry: true|false`
 * overrides the retry column either way, except for 401 and 403, which stay final (the key must be
 * fixed first). An `ApplicationFailure` passes through unchanged. A
 * connection error with a known network cause names it and `target.url`:
 * `Claude API connection error: connection refused (http://127.0.0.1:8787/v1/messages)`.
 */
export function toClaudeFailure(err: unknown, policy: Partial<ClaudeErrorPolicy> = {}, target: ClaudeCallTarget = {}): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const { retryAfterCapMs, noRetryAfterDelayMs } = { ...DEFAULT_CLAUDE_ERROR_POLICY, ...policy };

  if (err instanceof APIConnectionError || err instanceof APIUserAbortError) {
    // No response at all: nothing says the request was wrong, so another attempt may work.
    const what =
      err instanceof APIConnectionTimeoutError
        ? 'request timed out'
        : err instanceof APIUserAbortError
          ? 'request aborted'
          : 'connection error';
    const cause = err.cause instanceof Error && err.cause.message ? ` (${oneLine(err.cause.message, MAX_MESSAGE_CHARS, '...')})` : '';
    // A known network error says what went wrong and where: `connection refused (http://…/v1/messages)`.
    const network = what === 'connection error' ? networkErrorOf(err) : undefined;
    const said = network ? `${network}${target.url ? ` (${target.url})` : ''}` : `${oneLine(err.message, MAX_MESSAGE_CHARS, '...')}${cause}`;
    return ApplicationFailure.create({
      type: ClaudeFailureType.Connection,
      message: `Claude API ${what}: ${said}`,
      nonRetryable: false,
      details: [{ sdkError: err.name } satisfies ClaudeFailureDetails],
    });
  }

  if (err instanceof APIError) return fromApiError(err, retryAfterCapMs, noRetryAfterDelayMs);

  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.create({
    type: ClaudeFailureType.ClientError,
    message: `Claude client error: ${oneLine(message, MAX_MESSAGE_CHARS, '...')}`,
    // An SDK-side failure without an HTTP error (stream cut short, bad JSON chunk) is usually
    // transient; the workflow's retry policy bounds the attempts.
    nonRetryable: false,
    details: [
      { sdkError: err instanceof AnthropicError ? err.name : undefined } satisfies ClaudeFailureDetails,
    ],
  });
}

function fromApiError(
  err: APIError,
  retryAfterCapMs: number,
  noRetryAfterDelayMs: number,
): ApplicationFailure {
  const body = (err.error ?? {}) as { error?: { type?: unknown; message?: unknown } };
  const errorType =
    err.type ?? (typeof body.error?.type === 'string' ? body.error.type : undefined) ?? undefined;
  const inStream = err.status === undefined;
  const status = err.status ?? (errorType ? STATUS_OF_ERROR_TYPE[errorType] : undefined);
  const requestId = err.requestID ?? err.headers?.get('request-id') ?? undefined;
  const retryAfterMs = parseRetryAfter(err.headers);
  const shouldRetryHeader = err.headers?.get('x-should-retry');
  const shouldRetry = shouldRetryHeader === 'true' ? true : shouldRetryHeader === 'false' ? false : undefined;

  let type: ClaudeFailureTypeName;
  let retryable: boolean;
  let hint = '';
  if (status === 401 || status === 403) {
    type = ClaudeFailureType.Auth;
    retryable = false;
    hint =
      status === 401
        ? ' - check ANTHROPIC_API_KEY (missing, mistyped or revoked key)'
        : ' - the key in ANTHROPIC_API_KEY lacks access to this model or resource';
  } else if (status === 402) {
    type = ClaudeFailureType.Billing;
    retryable = false;
  } else if (status === 429) {
    type =
      retryAfterMs !== undefined ? ClaudeFailureType.RateLimited : ClaudeFailureType.RateLimitedNoRetryAfter;
    retryable = true;
  } else if (status === 529) {
    type = ClaudeFailureType.Overloaded;
    retryable = true;
  } else if (status === 408) {
    type = ClaudeFailureType.Connection;
    retryable = true;
  } else if (status === 409 || (status !== undefined && status >= 500)) {
    type = ClaudeFailureType.ServerError;
    retryable = true;
  } else if (status === undefined) {
    // An error event with an unknown type: the request itself was accepted, so it may work again.
    type = ClaudeFailureType.ServerError;
    retryable = true;
  } else {
    // 400, 404, 413, 422 and any other 4xx: sending the same request again cannot help.
    type = status === 400 && PROMPT_TOO_LONG.test(err.apiMessage ?? err.message) ? ClaudeFailureType.PromptTooLong : ClaudeFailureType.InvalidRequest;
    retryable = false;
  }
  // The API's `x-should-retry` decides, except for a refused credential: a key or its access does
  // not change between attempts, so a 401 or 403 is final whatever the header says.
  if (shouldRetry !== undefined && type !== ClaudeFailureType.Auth) retryable = shouldRetry;

  let nextRetryDelay: number | undefined;
  if (retryable) {
    if (retryAfterMs !== undefined) nextRetryDelay = Math.min(retryAfterMs, retryAfterCapMs);
    else if (status === 429) nextRetryDelay = noRetryAfterDelayMs;
  }

  const apiMessage =
    err.apiMessage ?? (typeof body.error?.message === 'string' ? body.error.message : undefined);
  const statusText = inStream ? 'stream error' : String(status);
  const head = `Claude API ${statusText}${errorType ? ` ${errorType}` : ''}`;
  const text = apiMessage ?? stripStatus(err.message, err.status);
  const message = `${head}: ${oneLine(text, MAX_MESSAGE_CHARS, '...')}${hint}${requestId ? ` (request-id ${requestId})` : ''}`;

  const details: ClaudeFailureDetails = { sdkError: err.name };
  if (status !== undefined) details.status = status;
  if (requestId) details.requestId = requestId;
  if (errorType) details.errorType = errorType;
  if (err.errorCode) details.errorCode = err.errorCode;
  if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;
  if (shouldRetry !== undefined) details.shouldRetry = shouldRetry;
  if (inStream) details.inStream = true;

  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !retryable,
    details: [details],
    // 0 means "retry now": leave the delay to Temporal's own backoff instead.
    ...(nextRetryDelay ? { nextRetryDelay } : {}),
  });
}

/**
 * The delay the response asks for: `retry-after-ms` (milliseconds), else `retry-after` (seconds or
 * an HTTP date). Undefined when absent or unparsable.
 */
export function parseRetryAfter(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms != null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.ceil(value);
  }
  const after = headers.get('retry-after');
  if (after == null || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  const date = Date.parse(after);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** The SDK prefixes its message with the status ("529 {...}"); the failure message has its own. */
function stripStatus(message: string, status: number | undefined): string {
  return status !== undefined && message.startsWith(`${status} `)
    ? message.slice(String(status).length + 1)
    : message;
}
