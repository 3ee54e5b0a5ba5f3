/**
 * Temporal connection settings come from Temporal's own environment configuration
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, and the
 * TOML profile file), so the same binary points at the dev server or at Temporal Cloud unchanged.
 */
import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig, type ClientConnectConfig } from '@temporalio/envconfig';
import type { DataConverter } from '@temporalio/common';
import { clientStorageOptions } from '../storage/client-storage-options';

export const DEFAULT_ADDRESS = 'localhost:7233';

export interface ConnectOverrides {
  /** host:port; beats the environment. */
  address?: string;
  namespace?: string;
  /** Profile name in the Temporal config file (TEMPORAL_PROFILE otherwise). */
  profile?: string;
}

/**
 * Connection settings from Temporal's environment configuration (`TEMPORAL_*` variables or a profile
 * of the config file) with `overrides` applied; the address defaults to localhost:7233.
 */
export function loadConnectConfig(overrides: ConnectOverrides = {}): ClientConnectConfig & { namespace: string } {
  const loaded = loadClientConnectConfig({ profile: overrides.profile ?? process.env.TEMPORAL_PROFILE });
  const connectionOptions = { ...loaded.connectionOptions };
  if (overrides.address) connectionOptions.address = overrides.address;
  if (!connectionOptions.address) connectionOptions.address = DEFAULT_ADDRESS;
  return { connectionOptions, namespace: overrides.namespace ?? loaded.namespace ?? 'default' };
}

/** Whether an address is configured (the overrides, TEMPORAL_ADDRESS or a profile), rather than the default. */
export function addressConfigured(overrides: ConnectOverrides = {}): boolean {
  if (overrides.address) return true;
  return Boolean(loadClientConnectConfig({ profile: overrides.profile ?? process.env.TEMPORAL_PROFILE }).connectionOptions.address);
}

/**
 * A workflow client; close `client.connection` when done. Payloads go through mcp-turns' one data
 * converter (External Storage as MCP_TURNS_STORAGE says, src/storage/), the same as the workers'.
 */
export async function connectClient(overrides: ConnectOverrides = {}, dataConverter?: DataConverter): Promise<Client> {
  const config = loadConnectConfig(overrides);
  const storage = clientStorageOptions(dataConverter);
  const connection = await Connection.connect(config.connectionOptions);
  return new Client({ connection, namespace: config.namespace, ...storage });
}
