/**
 * The worker `run` and `batch` start in their own process when no worker polls the task queue: the
 * same worker as `mcp-turns worker` (same config file, same Claude settings), for the command's
 * duration.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Client } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import { clientStorageOptions } from '../storage/client-storage-options';
import { dataConverterFromEnv } from '../storage/data-converter';
import { createClaudeClient, ClaudeClientConfigError } from '../claude/client';
import { McpPool } from '../mcp';
import { connectWorker } from '../temporal/worker-connection';
import { installTelemetry } from '../worker/telemetry';
import { encryptionSettingsFromEnv } from '../encryption/encryption-settings';
import { poolMetrics } from '../worker/metrics';
import { createTurnWorkers } from '../worker/turn-worker';
import { loadWorkerConfig, WorkerConfigError, type WorkerConfig } from '../worker/worker-config';
import { CliError } from './cli-error';
import type { CliSettings } from './cli-settings';

/** What an in-process worker needs, checked before anything is started. */
export interface InProcessWorkerSetup {
  config: WorkerConfig;
  claudeClient: Anthropic;
}

export interface InProcessWorker {
  /**
   * A client on the worker's own connection: a turn it starts with `eagerStart` gets its first
   * workflow task in the start's response (eager workflow start), one server hop fewer. Closed with
   * the worker.
   */
  client: Client;
  /** Rejects when the worker fails while the command runs (it never resolves otherwise). */
  failed: Promise<never>;
  /** Shuts the worker down (in-flight tasks finish) and closes its MCP servers and connection. */
  stop(): Promise<void>;
}

/**
 * Loads the worker config (`configPath`, else the settings' config file) and the Claude client;
 * exit 2 when either is wrong.
 */
export function inProcessWorkerSetup(configPath: string | undefined, settings: CliSettings): InProcessWorkerSetup {
  try {
    return {
      config: loadWorkerConfig(configPath ?? settings.configFile, process.env, settings.stateDir),
      claudeClient: createClaudeClient(),
    };
  } catch (err) {
    if (err instanceof WorkerConfigError) throw new CliError(err.message, 2, err.problems);
    if (err instanceof ClaudeClientConfigError)
      throw new CliError(`cannot run a worker in this process: ${err.message}`, 2);
    throw err;
  }
}

/** Starts the worker on `taskQueue` (and its Claude queue) and returns once it polls; payloads as `settings` say. */
export async function startInProcessWorker(
  setup: InProcessWorkerSetup,
  target: { address: string; namespace: string; taskQueue: string },
  settings: CliSettings,
): Promise<InProcessWorker> {
  installTelemetry({ logLevel: 'ERROR', withholdFailureMessages: encryptionSettingsFromEnv(process.env, settings.configFile) !== undefined });
  const { connection, namespace } = await connectWorker({
    address: target.address,
    namespace: target.namespace,
  });
  const runtime = Runtime.instance();
  const pool = new McpPool(setup.config.servers, runtime.logger, poolMetrics(runtime.metricMeter));
  let workers;
  let dataConverter;
  try {
    dataConverter = dataConverterFromEnv(process.env, settings);
    workers = await createTurnWorkers({
      dataConverter,
      connection,
      namespace,
      taskQueue: target.taskQueue,
      pool,
      claudeClient: setup.claudeClient,
      claudeConfig: setup.config.claude,
      turnWorkerOptions: setup.config.worker,
    });
  } catch (err) {
    await pool.close();
    await connection.close();
    throw err;
  }
  const running = workers.run();
  const failed = running.then(
    () => Promise.reject(new Error('the in-process worker stopped')),
    (err: unknown) =>
      Promise.reject(
        new Error(`the in-process worker failed: ${err instanceof Error ? err.message : String(err)}`),
      ),
  );
  failed.catch(() => undefined); // only the command's wait observes it
  return {
    client: new Client({ connection, namespace, ...clientStorageOptions(dataConverter) }),
    failed,
    async stop() {
      workers.shutdown();
      await running.catch(() => undefined);
      await pool.close();
      await connection.close();
    },
  };
}
