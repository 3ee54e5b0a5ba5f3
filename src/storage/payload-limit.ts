/**
 * Temporal refuses a payload over 2 MiB (the server's default blob limit; Temporal Cloud's too).
 * Without external storage mcp-turns checks every outgoing payload against that limit itself, so a
 * payload that is too big fails at once with one line that says which payload, how big, and how to
 * fix it, instead of the server's `Blob data size exceeds limit` or a workflow task retried forever.
 */
import {
  ApplicationFailure,
  type StorageDriver,
  type StorageDriverClaim,
  type StorageDriverSelector,
  type StorageDriverTargetInfo,
} from '@temporalio/common';
import { formatBytes } from '../core/text';
import { payloadSize } from './stored-payload';

/** The largest payload Temporal accepts by default. */
export const TEMPORAL_PAYLOAD_LIMIT = 2 * 1024 * 1024;

/** The failure type of a payload refused for its size (non-retryable: a retry sends the same bytes). */
export const PAYLOAD_TOO_LARGE = 'PayloadTooLarge';

/** What to do about it, the end of every such message. */
export const PAYLOAD_STORAGE_FIX =
  'configure external storage for the client and every worker: MCP_TURNS_STORAGE=fs:DIR (one machine) or ' +
  'MCP_TURNS_STORAGE=s3://BUCKET?endpoint=URL (a cluster)';

/** The one line for a payload over the limit: `what` names it, e.g. "the input of workflow chatTurn turn-1". */
export function payloadTooLargeMessage(what: string, size: number, limit = TEMPORAL_PAYLOAD_LIMIT): string {
  return `${what} is ${formatBytes(size)}, over Temporal's ${formatBytes(limit)} payload limit: ${PAYLOAD_STORAGE_FIX}`;
}

/** A non-retryable failure carrying {@link payloadTooLargeMessage}, with `{ what, size }` as details. */
export function payloadTooLargeFailure(what: string, size: number, limit = TEMPORAL_PAYLOAD_LIMIT): ApplicationFailure {
  return ApplicationFailure.create({
    type: PAYLOAD_TOO_LARGE,
    message: payloadTooLargeMessage(what, size, limit),
    nonRetryable: true,
    details: [{ what, size }],
  });
}

/** "a payload of workflow chatTurn turn-1": whose payload it is, as far as the SDK says. */
export function describeTarget(target: StorageDriverTargetInfo | undefined): string {
  if (!target) return 'a payload';
  const name = [target.kind, target.type, target.id].filter(Boolean).join(' ');
  return `a payload of ${name}`;
}

/**
 * The driver `ExternalStorage` requires beside {@link payloadLimitSelector}: the selector never picks
 * it, so it never holds a payload.
 */
export class NoStorageDriver implements StorageDriver {
  readonly name = 'mcp-turns-none';
  readonly type = 'mcp-turns.none';
  store(): Promise<StorageDriverClaim[]> {
    return Promise.reject(new Error('no external storage is configured (MCP_TURNS_STORAGE=none)'));
  }
  retrieve(): Promise<never[]> {
    return Promise.reject(new Error(`a payload refers to external storage, but none is configured: ${PAYLOAD_STORAGE_FIX}`));
  }
}

/** A selector that stores nothing and refuses every payload of `limit` bytes or more. */
export function payloadLimitSelector(limit = TEMPORAL_PAYLOAD_LIMIT): StorageDriverSelector {
  return (context, payload) => {
    const size = payloadSize(payload);
    if (size >= limit) throw payloadTooLargeFailure(describeTarget(context.target), size, limit);
    return null;
  };
}
