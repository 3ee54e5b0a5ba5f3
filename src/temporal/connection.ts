/**
 * Where Temporal is: Temporal's own environment configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_PROFILE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, and the TOML profile file), read once into the
 * settings (src/config/settings.ts), with a command's `--address` / `--namespace` on top; so the same
 * binary points at the dev server or at Temporal Cloud unchanged.
 */
import { loadClientConnectConfig, type ClientConnectConfig } from '@temporalio/envconfig';

export const DEFAULT_ADDRESS = 'localhost:7233';

export interface ConnectOverrides {
  /** host:port; beats the environment. */
  address?: string;
  namespace?: string;
}

/** Where to connect: the connection options (address set) and the namespace. */
export type TemporalTarget = ClientConnectConfig & { namespace: string };

/** Temporal's environment configuration of `env` (its variables and the TOML file's profile). */
export function temporalEnvConfig(env: NodeJS.ProcessEnv): ClientConnectConfig {
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  return loadClientConnectConfig({ overrideEnvVars: vars });
}

/** The target of `config` with `overrides` applied; the address defaults to localhost:7233. */
export function temporalTarget(config: ClientConnectConfig, overrides: ConnectOverrides = {}): TemporalTarget {
  const connectionOptions = { ...config.connectionOptions };
  if (overrides.address) connectionOptions.address = overrides.address;
  if (!connectionOptions.address) connectionOptions.address = DEFAULT_ADDRESS;
  return { connectionOptions, namespace: overrides.namespace ?? config.namespace ?? 'default' };
}

/** Whether an address is configured (the overrides, TEMPORAL_ADDRESS or a profile), rather than the default. */
export function addressConfigured(config: ClientConnectConfig, overrides: ConnectOverrides = {}): boolean {
  return Boolean(overrides.address ?? config.connectionOptions.address);
}
