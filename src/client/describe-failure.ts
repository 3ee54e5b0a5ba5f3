import { failureMessage } from '../core/failure-message';

/**
 * A failed turn or batch item as a person reads it: the message of the failure that says what happened,
 * not of the wrappers around it (the rule of src/core/failure-message.ts; the API's status, message
 * and request id come through from the Claude activity's ApplicationFailure).
 */
export function describeFailure(err: unknown): string {
  return failureMessage(err);
}

/** A gRPC status prefix (`3 INVALID_ARGUMENT: `): the message after it says what happened. */
const GRPC_STATUS_PREFIX = /^\d+ [A-Z_]+: /;

/**
 * An error and its causes (`cause`, depth-first) in one line, outermost first, each message once:
 * `Failed to start Workflow: Namespace x has no mapping defined for search attribute McpTurnsStatus`.
 */
export function causeChain(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
    const message = (current instanceof Error ? current.message : String(current)).replace(GRPC_STATUS_PREFIX, '').trim();
    if (message && !parts.some((p) => p.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ') || String(err);
}
