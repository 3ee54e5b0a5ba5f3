import { NativeConnection } from '@temporalio/worker';
import type { TemporalTarget } from './connection';

/** A worker could not connect to Temporal; the message names the address. */
export class TemporalConnectError extends Error {
  override name = 'TemporalConnectError';
  constructor(
    readonly address: string,
    cause: unknown,
  ) {
    super(`cannot reach Temporal at ${address}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * The worker's native connection to `target` (kept apart from connection.ts so client code never
 * loads the worker package). Throws {@link TemporalConnectError}.
 */
export async function connectWorker(target: TemporalTarget): Promise<{ connection: NativeConnection; namespace: string }> {
  try {
    return { connection: await NativeConnection.connect(target.connectionOptions), namespace: target.namespace };
  } catch (err) {
    throw new TemporalConnectError(target.connectionOptions.address ?? '', err);
  }
}
