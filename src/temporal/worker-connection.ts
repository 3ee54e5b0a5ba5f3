import { NativeConnection } from '@temporalio/worker';
import { loadConnectConfig, type ConnectOverrides } from './connection';

/**
 * The worker's native connection plus the namespace it serves, from the same settings as the
 * client's (kept apart from connection.ts so client code never loads the worker package).
 */
export async function connectWorker(
  overrides: ConnectOverrides = {},
): Promise<{ connection: NativeConnection; namespace: string }> {
  const config = loadConnectConfig(overrides);
  const connection = await NativeConnection.connect(config.connectionOptions);
  return { connection, namespace: config.namespace };
}
