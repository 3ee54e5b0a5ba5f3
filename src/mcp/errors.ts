/**
 * The one place where MCP SDK and transport errors become Temporal failures. Tool-level errors are
 * results (`isError: true`), not failures; what reaches this mapping is a call that got no usable
 * answer, and it decides whether Temporal's retry policy may run the call again.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { McpFailureType } from '../core/failure-types';

/**
 * JSON-RPC errors by which the server refuses a request it will refuse again on every retry; the
 * 2026-07-28 revision adds a capability the client did not declare and a protocol version the
 * server does not speak.
 */
const REFUSALS: ReadonlySet<number> = new Set([
  ProtocolErrorCode.InvalidParams,
  ProtocolErrorCode.MethodNotFound,
  ProtocolErrorCode.InvalidRequest,
  ProtocolErrorCode.MissingRequiredClientCapability,
  ProtocolErrorCode.UnsupportedProtocolVersion,
]);

/** A refusal the server will repeat on every retry. */
export function isProtocolRefusal(err: unknown): boolean {
  return err instanceof ProtocolError && REFUSALS.has(err.code);
}

/**
 * The server answered with a JSON-RPC error: it is alive. The SDK's own errors (a connection that
 * closed, a request that timed out, a transport failure) are no answer.
 */
export function serverAnswered(err: unknown): boolean {
  return err instanceof ProtocolError;
}

/** The request got no answer within its timeout. */
export function isRequestTimeout(err: unknown): boolean {
  return err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout;
}

/**
 * Maps any error of an MCP tool call to an {@link ApplicationFailure}:
 *
 * | error | type | retry |
 * |---|---|---|
 * | JSON-RPC invalid params, method not found, invalid request, missing client capability, unsupported protocol version | `McpInvalidRequest` | no |
 * | any other JSON-RPC error the server answered (e.g. internal error) | `McpServerError` | yes |
 * | request timeout (the SDK's `REQUEST_TIMEOUT`) | `McpTimeout` | yes |
 * | anything else: connection closed, refused, reset, a broken transport | `McpTransportError` | yes |
 *
 * `message` is the failure's text: the caller names the call and redacts secrets from the error's
 * message. An `ApplicationFailure` passes through unchanged.
 */
export function toMcpFailure(err: unknown, message: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (isProtocolRefusal(err)) {
    return ApplicationFailure.create({
      type: McpFailureType.InvalidRequest,
      message: `${message} (the server refused the call)`,
      nonRetryable: true,
    });
  }
  const type = serverAnswered(err)
    ? McpFailureType.ServerError
    : isRequestTimeout(err)
      ? McpFailureType.Timeout
      : McpFailureType.TransportError;
  return ApplicationFailure.create({ type, message, nonRetryable: false });
}

/** A call naming a server this worker does not have: it cannot succeed on any retry. */
export function unknownServerFailure(server: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: McpFailureType.UnknownServer,
    message: `server ${server} is not configured on this worker`,
    nonRetryable: true,
  });
}

/** A call of a tool the server does not have or this worker does not offer: it cannot succeed on any retry. */
export function unknownToolFailure(server: string, tool: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: McpFailureType.InvalidRequest,
    message: `unknown tool ${tool} on server ${server}`,
    nonRetryable: true,
  });
}
