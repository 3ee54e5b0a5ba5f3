/**
 * Every failure type mcp-turns throws, defined once: activities throw them, workflows decide by the
 * type alone (never by a message's wording), and users name them in `nonRetryableErrorTypes`. The
 * values are recorded in histories: a value never changes.
 */

// The turn's.

/** A turn's input fails its schema: the turn fails at once, naming every bad field, never retried. */
export const INVALID_TURN_INPUT = 'InvalidTurnInput';

/** A Claude call failed with no type of its own (a timeout, say): the turn fails with it, never retried. */
export const CLAUDE_CALL_FAILED = 'ClaudeCallFailed';

// The batch's.

/** A batch's name or concurrency is invalid, or an item is missing: the batch fails at once, never retried. */
export const INVALID_BATCH_INPUT = 'InvalidBatchInput';

// Claude's: thrown by the Claude activities (src/claude/errors.ts maps the API's errors to them).
// A final one fails the turn with its own type; only ClaudePromptTooLong is answered otherwise.

/** Failure types thrown by Claude activities (usable in `nonRetryableErrorTypes`). */
export const ClaudeFailureType = {
  /** 400, 404, 413, 422 and other request errors: the same request cannot succeed; not retried. */
  InvalidRequest: 'ClaudeInvalidRequest',
  /** A 400 saying the prompt does not fit the model's context window: not retried; the workflow compacts and asks again. */
  PromptTooLong: 'ClaudePromptTooLong',
  /** 401 / 403: the key is missing, wrong or lacks access; not retried. */
  Auth: 'ClaudeAuth',
  /** 402: the organisation cannot be billed; not retried. */
  Billing: 'ClaudeBilling',
  /** 429 with `retry-after`: retried after as long as the API says (capped). */
  RateLimited: 'ClaudeRateLimited',
  /** 429 without `retry-after` (e.g. a spend cap): retried after a long wait, final after `maxSpendCapAttempts`. */
  RateLimitedNoRetryAfter: 'ClaudeRateLimitedNoRetryAfter',
  /** 529 or an `overloaded_error` event in a stream: retried with Temporal's backoff. */
  Overloaded: 'ClaudeOverloaded',
  /** 500, 502, 503, 504, other 5xx and 409: retried with Temporal's backoff. */
  ServerError: 'ClaudeServerError',
  /** No response: connection refused or reset, request timeout (incl. 408); retried with Temporal's backoff. */
  Connection: 'ClaudeConnection',
  /** The SDK failed without an HTTP error (e.g. a stream that ended early): retried with Temporal's backoff. */
  ClientError: 'ClaudeClientError',
} as const;

export type ClaudeFailureTypeName = (typeof ClaudeFailureType)[keyof typeof ClaudeFailureType];

// MCP's: thrown by the MCP tool-call activity (src/mcp/errors.ts maps the SDK's errors to them).
// A final one is no turn failure: Claude gets it as an `is_error` tool result.

/** Failure types thrown by the MCP tool-call activity (usable in `nonRetryableErrorTypes`). */
export const McpFailureType = {
  /** The call names a server this worker does not have: not retried. */
  UnknownServer: 'McpUnknownServer',
  /** The server refuses the call (unknown tool, invalid params, method not found): not retried. */
  InvalidRequest: 'McpInvalidRequest',
  /** The server answered with a JSON-RPC error (e.g. an internal error): retried; the breaker counts it a success. */
  ServerError: 'McpServerError',
  /** The server did not answer within the call's timeout: retried; the breaker counts it a failure. */
  Timeout: 'McpTimeout',
  /** No answer at all (connection refused, closed, broken): retried; the breaker counts it a failure. */
  TransportError: 'McpTransportError',
} as const;

export type McpFailureTypeName = (typeof McpFailureType)[keyof typeof McpFailureType];

// Code tools': thrown by the tool-call activity for a tool written in code (src/tools/code-tools.ts).
// Like MCP's, a final one is no turn failure: Claude gets it as an `is_error` tool result.

/** Failure types of a code tool's call (usable in `nonRetryableErrorTypes`). */
export const CodeToolFailureType = {
  /** `execute` threw (other than a `ToolError`, which is a result): retried under the module's retry policy. */
  Failed: 'CodeToolFailed',
  /** The call ran past the module's `timeoutMs` (its abortSignal fired): retried. */
  Timeout: 'CodeToolTimeout',
} as const;
