import type { Client } from '@temporalio/client';
import { connectClient, loadConnectConfig, type ConnectOverrides } from '../temporal/connection';
import { CliError } from './cli-error';
import { StorageConfigError } from '../storage/storage-config';

/** A client for CLI commands; an unreachable server is one clear line. */
export async function connectOrFail(overrides: ConnectOverrides): Promise<{ client: Client; address: string; namespace: string }> {
  const { connectionOptions, namespace } = loadConnectConfig(overrides);
  const address = connectionOptions.address ?? '';
  try {
    return { client: await connectClient(overrides), address, namespace };
  } catch (err) {
    if (err instanceof StorageConfigError) throw new CliError(err.message, 2);
    throw new CliError(`cannot reach Temporal at ${address}: ${(err as Error).message} (start one with \`mcp-turns server\`)`);
  }
}
