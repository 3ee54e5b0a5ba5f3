/**
 * Connections to the shared test dev server and workers that use the shared workflow bundle, with
 * mcp-turns' data converter (External Storage as MCP_TURNS_STORAGE says: the run's payload directory).
 */
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Runtime, DefaultLogger, Worker, type WorkerOptions } from '@temporalio/worker';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { testDataConverter } from './settings';

let runtimeInstalled = false;

function address(): string {
  const a = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS;
  if (!a) throw new Error('no test Temporal server: run through jest (test/support/global-setup.ts)');
  return a;
}

/** Keep worker logs to warnings so test output stays readable. */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // already installed by another helper in this process
  }
}

/**
 * A client of the shared test server with `dataConverter`: pass the one the test's workers use
 * (default: a new one of this process's environment, which reads what workers of that environment write).
 */
export async function testClient(dataConverter: DataConverter = testDataConverter()): Promise<Client> {
  const connection = await Connection.connect({ address: address() });
  return new Client({ connection, namespace: 'default', ...clientStorageOptions(dataConverter) });
}

/** A worker of the shared test server; `opts.dataConverter` default: a new one of this process's environment. */
export async function testWorker(
  opts: Omit<WorkerOptions, 'connection' | 'workflowBundle' | 'workflowsPath' | 'taskQueue'> & { taskQueue: string },
): Promise<{ worker: Worker; connection: NativeConnection }> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address: address() });
  const codePath = process.env.MCP_TURNS_TEST_BUNDLE;
  if (!codePath) throw new Error('no workflow bundle: run through jest (test/support/global-setup.ts)');
  const worker = await Worker.create({ connection, namespace: 'default', workflowBundle: { codePath }, ...opts, dataConverter: opts.dataConverter ?? testDataConverter() });
  return { worker, connection };
}

/** A task queue name unique to one test, so tests never steal each other's tasks. */
export function uniqueQueue(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}
