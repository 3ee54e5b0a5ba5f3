import { Command } from 'commander';
import { loadConnectConfig } from '../../temporal/connection';
import { connectWorker } from '../../temporal/worker-connection';
import { createClaudeClient, ClaudeClientConfigError } from '../../claude/client';
import { McpPool } from '../../mcp';
import { createTurnWorkers } from '../../worker/turn-worker';
import { loadWorkerConfig, WorkerConfigError } from '../../worker/worker-config';
import { claudeTaskQueue } from '../../core/task-queues';
import { taskQueueFromEnv } from '../task-queue';
import { asBadInput, CliError } from '../cli-error';
import { failIfNothingListens } from '../connect';
import { cliSettings } from '../cli-settings';
import { installTelemetry } from '../../worker/telemetry';
import { poolMetrics } from '../../worker/metrics';
import { startTracingFromEnv } from '../../tracing/start-tracing';
import { TracingConfigError } from '../../tracing/tracing-settings';
import { Runtime } from '@temporalio/worker';
import { describeStorage, storageConfigFromEnv, StorageConfigError } from '../../storage/storage-config';
import { dataConverterFromEnv } from '../../storage/data-converter';
import { describeEncryption, EncryptionConfigError, encryptionSettingsFromEnv } from '../../encryption/encryption-settings';
import { KeyringError } from '../../encryption/keyring';

export function workerCommand(): Command {
  return new Command('worker')
    .description('run an mcp-turns worker (turn workflows, MCP calls, Claude calls)')
    .option('--config <file>', 'config file (JSON or YAML; default MCP_TURNS_CONFIG)')
    .option('--task-queue <queue>', 'task queue (default mcp-turns or MCP_TURNS_TASK_QUEUE)')
    .option('--address <host:port>', 'Temporal address (default from TEMPORAL_ADDRESS / profile)')
    .option('--namespace <ns>', 'Temporal namespace')
    .option('--metrics <host:port>', 'serve Prometheus metrics here (default MCP_TURNS_METRICS)')
    .option('--log-level <level>', 'TRACE, DEBUG, INFO, WARN or ERROR', 'INFO')
    .action(async (opts: { config?: string; taskQueue?: string; address?: string; namespace?: string; metrics?: string; logLevel: string }, command: Command) => {
      const settings = cliSettings(command);
      const config = asBadInput(() => loadWorkerConfig(opts.config ?? settings.configFile, process.env, settings.stateDir), WorkerConfigError);
      const claudeClient = asBadInput(() => createClaudeClient(), ClaudeClientConfigError);
      const level = opts.logLevel.toUpperCase();
      if (!['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'].includes(level)) throw new CliError(`--log-level must be TRACE, DEBUG, INFO, WARN or ERROR, got "${opts.logLevel}"`, 2);
      const tracing = asBadInput(() => startTracingFromEnv('mcp-turns-worker'), TracingConfigError);
      const storage = asBadInput(() => storageConfigFromEnv(process.env, settings.stateDir), StorageConfigError);
      // A bad keyring stops the worker here, before it polls: one line naming the file and field.
      const dataConverter = asBadInput(() => dataConverterFromEnv(process.env, settings), StorageConfigError, EncryptionConfigError, KeyringError);
      const encryption = encryptionSettingsFromEnv(process.env, settings.configFile);
      const metricsAddress = opts.metrics ?? process.env.MCP_TURNS_METRICS;
      installTelemetry({ logLevel: level as 'INFO', withholdFailureMessages: encryption !== undefined, ...(metricsAddress ? { metricsAddress } : {}) });
      const taskQueue = taskQueueFromEnv(opts.taskQueue);
      const overrides = { address: opts.address, namespace: opts.namespace };
      const address = loadConnectConfig(overrides).connectionOptions.address;
      await failIfNothingListens(address ?? '', settings.stateDir);
      let conn;
      try {
        conn = await connectWorker(overrides);
      } catch (err) {
        throw new CliError(`cannot reach Temporal at ${address}: ${(err as Error).message} (start one with \`mcp-turns server\`)`);
      }
      const runtime = Runtime.instance();
      const pool = new McpPool(config.servers, runtime.logger, poolMetrics(runtime.metricMeter));
      const workers = await createTurnWorkers({
        connection: conn.connection,
        namespace: conn.namespace,
        taskQueue,
        pool,
        claudeClient,
        claudeConfig: config.claude,
        turnWorkerOptions: config.worker,
        dataConverter,
        ...(tracing ? { plugins: [tracing.plugin] } : {}),
      });
      const stop = (signal: string): void => {
        console.error(`${signal}: shutting the worker down (in-flight activities finish or are retried elsewhere)`);
        workers.shutdown();
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      console.log(
        `mcp-turns worker on ${address} namespace ${conn.namespace}, task queues ${taskQueue} and ${claudeTaskQueue(taskQueue)}; ` +
          `MCP servers: ${config.servers.map((s) => s.name).join(', ') || 'none'} (config ${config.source}); ` +
          `workflow code: ${workers.workflowCode}; payload storage: ${describeStorage(storage)}; ${describeEncryption(encryption)}` +
          (metricsAddress ? `; metrics on http://${metricsAddress}/metrics` : '') +
          (tracing ? `; traces to ${tracing.tracesEndpoint} as ${tracing.serviceName}` : ''),
      );
      try {
        await workers.run();
      } finally {
        await pool.close();
        await tracing?.shutdown();
        await conn.connection.close();
      }
      console.log('worker stopped');
    });
}
