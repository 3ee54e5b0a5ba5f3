/**
 * A client whose payload is over Temporal's limit gets one line naming the payload (the input of
 * which workflow, the argument of which update or signal), its size and the fix: for the refusal of
 * mcp-turns' own check (payload-limit.ts, storage off) and for the server's `Blob data size exceeds
 * limit` (a server with a lower limit), instead of a gRPC error.
 */
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { PAYLOAD_STORAGE_FIX, PAYLOAD_TOO_LARGE, payloadTooLargeMessage } from './payload-limit';
import { formatBytes } from '../core/text';
import { payloadSize } from './stored-payload';

/**
 * A payload refused for its size. `message` is the whole story in one line; the gRPC error it
 * replaces is left out on purpose, so that printing the error and its causes shows only that line.
 */
export class PayloadTooLargeError extends Error {
  override name = 'PayloadTooLargeError';
  constructor(
    message: string,
    /** Which payload, e.g. "the input of workflow chatTurn turn-1". */
    readonly what: string,
    /** Its size in bytes. */
    readonly size: number,
  ) {
    super(message);
  }
}

const SERVER_REFUSAL = /Blob data size exceeds limit/i;

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e instanceof Error && chain.length < 10; e = e.cause) chain.push(e);
  return chain;
}

/** The size of the largest of `values` as payloads. */
function largest(values: readonly unknown[]): number {
  return Math.max(0, ...values.map((v) => (v === undefined ? 0 : payloadSize(defaultPayloadConverter.toPayload(v)))));
}

/** `err` as a {@link PayloadTooLargeError} when a payload was refused for its size, else `err`. */
function translate(err: unknown, what: string, values: readonly unknown[]): unknown {
  for (const cause of causes(err)) {
    if (cause instanceof ApplicationFailure && cause.type === PAYLOAD_TOO_LARGE) {
      const size = (cause.details?.[0] as { size?: number } | undefined)?.size ?? largest(values);
      return new PayloadTooLargeError(payloadTooLargeMessage(what, size), what, size);
    }
    if (cause instanceof Error && SERVER_REFUSAL.test(cause.message)) {
      const size = largest(values);
      const message = `${what} is ${formatBytes(size)}, which the server refused as over its payload limit: ${PAYLOAD_STORAGE_FIX}`;
      return new PayloadTooLargeError(message, what, size);
    }
  }
  return err;
}

/** Rejects with the translated error. */
async function translating<T>(call: Promise<T>, what: string, values: readonly unknown[]): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw translate(err, what, values);
  }
}

/** Workflow client interceptor translating payload-size refusals (see the module comment). */
export function payloadLimitClientInterceptor(): WorkflowClientInterceptor {
  return {
    startWithDetails: (input, next) =>
      translating(next(input), `the input of workflow ${input.workflowType} ${input.options.workflowId}`, input.options.args),
    signalWithStart: (input, next) =>
      translating(
        next(input),
        `the input of workflow ${input.workflowType} ${input.options.workflowId} or its signal ${input.signalName}`,
        [...input.options.args, ...input.signalArgs],
      ),
    startUpdateWithStart: (input, next) =>
      translating(
        next(input),
        `the input of workflow ${input.workflowType} ${input.workflowStartOptions.workflowId} or its update ${input.updateName}`,
        [...input.workflowStartOptions.args, ...input.updateArgs],
      ),
    startUpdate: (input, next) =>
      translating(next(input), `the argument of update ${input.updateName} to workflow ${input.workflowExecution.workflowId}`, input.args),
    signal: (input, next) =>
      translating(next(input), `the argument of signal ${input.signalName} to workflow ${input.workflowExecution.workflowId}`, input.args),
    query: (input, next) =>
      translating(next(input), `the argument of query ${input.queryType} to workflow ${input.workflowExecution.workflowId}`, input.args),
  };
}
