/**
 * A workflow client. Payloads go through mcp-turns' one data converter (src/data-converter/), the
 * same as the workers', so what one stores or encrypts the other reads.
 */
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { Settings } from '../config/settings';
import { processSettings } from '../config/process-settings';
import { clientStorageOptions } from '../data-converter/client-storage-options';
import { dataConverterOf } from '../data-converter/data-converter';
import { useTaskQueue } from './client-task-queue';
import { temporalTarget, type ConnectOverrides, type TemporalTarget } from '../temporal/connection';

/**
 * A client on a new connection to `target`, starting work on `taskQueue` unless told another
 * (client-task-queue.ts); close `client.connection` when done.
 */
export async function openClient(target: TemporalTarget, dataConverter: DataConverter, taskQueue: string): Promise<Client> {
  const connection = await Connection.connect(target.connectionOptions);
  const client = new Client({ connection, namespace: target.namespace, ...clientStorageOptions(dataConverter) });
  useTaskQueue(client, taskQueue);
  return client;
}

/**
 * Where `connectClient` connects: the settings' Temporal configuration with `overrides` applied.
 * @param settings default: this process's environment
 */
export function loadConnectConfig(overrides: ConnectOverrides = {}, settings: Pick<Settings, 'temporal'> = processSettings()): TemporalTarget {
  return temporalTarget(settings.temporal.get(), overrides);
}

/**
 * A client for a program of your own; close `client.connection` when done.
 * @param settings default: this process's environment (TEMPORAL_*, MCP_TURNS_TASK_QUEUE, MCP_TURNS_STORAGE, the keyring…)
 */
export async function connectClient(overrides: ConnectOverrides = {}, settings: Settings = processSettings()): Promise<Client> {
  return openClient(loadConnectConfig(overrides, settings), dataConverterOf(settings), settings.taskQueue);
}
