/**
 * Temporal connection settings come from Temporal's own environment configuration
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, and the
 * TOML profile file), so the same binary points at the dev server or at Temporal Cloud unchanged.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadClientConnectConfig, type ClientConnectConfig } from '@temporalio/envconfig';

export const DEFAULT_ADDRESS = 'localhost:7233';

export interface ConnectOverrides {
  /** host:port; beats the environment. */
  address?: string;
  namespace?: string;
  /** Profile name in the Temporal config file (TEMPORAL_PROFILE otherwise). */
  profile?: string;
}

export function loadConnectConfig(overrides: ConnectOverrides = {}): ClientConnectConfig & { namespace: string } {
  const loaded = loadClientConnectConfig({ profile: overrides.profile ?? process.env.TEMPORAL_PROFILE });
  const connectionOptions = { ...loaded.connectionOptions };
  if (overrides.address) connectionOptions.address = overrides.address;
  if (!connectionOptions.address) connectionOptions.address = DEFAULT_ADDRESS;
  return { connectionOptions, namespace: overrides.namespace ?? loaded.namespace ?? 'default' };
}

/** A workflow client; close `client.connection` when done. */
export async function connectClient(overrides: ConnectOverrides = {}): Promise<Client> {
  const config = loadConnectConfig(overrides);
  const connection = await Connection.connect(config.connectionOptions);
  return new Client({ connection, namespace: config.namespace });
}

/** The worker's native connection plus the namespace it serves. */
export async function connectWorker(
  overrides: ConnectOverrides = {},
): Promise<{ connection: NativeConnection; namespace: string }> {
  const config = loadConnectConfig(overrides);
  const connection = await NativeConnection.connect(config.connectionOptions);
  return { connection, namespace: config.namespace };
}
