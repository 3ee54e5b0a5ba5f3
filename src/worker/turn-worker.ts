/**
 * The one place mcp-turns' workers are made. An mcp-turns worker process is two Temporal workers:
 * one on the turn queue (turn workflows, tool calls, unstreamed Claude calls) and one on its Claude
 * queue (the other Claude calls, under their own concurrency and rate caps), sharing one toolbox (the
 * MCP pool and the tool modules), one Anthropic client and one cap on Claude calls at once.
 *
 * - {@link startWorkers}: a worker process from `Settings`, whichever command starts it (`worker`,
 *   and the worker `run`, `chat`, `batch`, `serve` and `demo` run in their own process): the same
 *   telemetry, tracing, payload storage, encryption and limits.
 * - {@link createTurnWorkers}: the two workers from parts already made (tests and benchmarks).
 * - {@link createClaudeQueueWorker}: the Claude-queue worker alone, which the plugin runs beside a
 *   team's own worker (mcp-turns-plugin.ts).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Runtime, Worker, type LogLevel, type NativeConnection, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import type { ClaudeActivities } from '../../activities/claude';
import { createClaudeClient, type ClaudeApiSettings } from '../claude/client';
import type { ClaudeConfig } from '../claude/config';
import type { Settings } from '../config/settings';
import type { WorkerConfig } from '../config/worker-config';
import { claudeTaskQueue } from '../core/task-queues';
import { FormatterPlans } from '../message-batches/formatter-plans';
import { encryptsPayloads, storesPayloads } from '../data-converter/data-converter';
import { describeEncryption } from '../encryption/encryption-settings';
import { McpPool } from '../mcp/pool';
import type { Toolset } from '../core/toolsets';
import { CodeTools } from '../tools/code-tools';
import { Toolbox } from '../tools/toolbox';
import { describeStorage } from '../storage/storage-config';
import { startTracing, type Tracing } from '../tracing/start-tracing';
import type { TemporalTarget } from '../temporal/connection';
import { connectWorker } from '../temporal/worker-connection';
import { poolMetrics } from './metrics';
import { claudeCallActivities, claudeQueueWorkerOptions, payloadWorkerOptions, TURN_QUEUE_WORKER_OPTIONS, turnQueueActivities } from './queue-registrations';
import { installTelemetry } from './telemetry';
import { workflowSource } from './workflow-bundle';
import { workflowsPath } from './workflows-path';

export interface TurnWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  pool: McpPool;
  /** The tools written in code (none by default). */
  codeTools?: CodeTools;
  /** The config's tool sets (none by default). */
  toolsets?: Record<string, Toolset>;
  claudeClient: Anthropic;
  claudeConfig: ClaudeConfig;
  /** The data converter both workers use; the clients that start and read turns must use the same. */
  dataConverter: DataConverter;
  /** Pre-built workflow bundle (tests share one); default: the prebuilt bundle, else bundle `workflows/` at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra options for the turn worker (the config's `worker:` section; concurrency in benchmarks). */
  turnWorkerOptions?: Partial<WorkerOptions>;
  /**
   * Plugins for both workers (tracing: src/tracing). With any, and no `workflowBundle`, the turn
   * worker bundles its workflow code at start (~1.5 s): a plugin's workflow interceptors cannot
   * join the prebuilt bundle.
   */
  plugins?: WorkerPlugin[];
}

export interface TurnWorkers {
  turnWorker: Worker;
  claudeWorker: Worker;
  /** Where the workflow code came from: "prebuilt dist/workflow-bundle.js", or why it was bundled at start. */
  workflowCode: string;
  /** Runs both until shutdown; rejects if either fails. */
  run(): Promise<void>;
  shutdown(): void;
}

/** The worker on the Claude queue of `turnTaskQueue`. */
export async function createClaudeQueueWorker(opts: {
  connection?: NativeConnection;
  namespace: string;
  turnTaskQueue: string;
  claudeClient: Anthropic;
  claudeConfig: ClaudeConfig;
  /** The Claude activities the turn queue registers too (one cap on calls at once). */
  claude: ClaudeActivities;
  payloads: Pick<WorkerOptions, 'dataConverter' | 'interceptors'>;
  plugins?: WorkerPlugin[];
  /** The formatter plans of the turn queue's submissions in this process. */
  formatterPlans?: FormatterPlans;
}): Promise<Worker> {
  return Worker.create({
    ...(opts.connection ? { connection: opts.connection } : {}),
    namespace: opts.namespace,
    plugins: opts.plugins ?? [],
    ...opts.payloads,
    ...claudeQueueWorkerOptions(opts.turnTaskQueue, opts.claudeClient, opts.claudeConfig, opts.claude, opts.formatterPlans),
  });
}

export async function createTurnWorkers(opts: TurnWorkerOptions): Promise<TurnWorkers> {
  const namespace = opts.namespace ?? 'default';
  const plugins = opts.plugins ?? [];
  const { dataConverter } = opts;
  const workflows = opts.workflowBundle
    ? { source: { workflowBundle: opts.workflowBundle }, reason: 'given bundle' }
    : plugins.length
      ? { source: { workflowsPath: workflowsPath() }, reason: "bundled at start with the plugins' workflow interceptors" }
      : workflowSource(encryptsPayloads(dataConverter) ? 'encrypted' : 'plain');
  const payloads = payloadWorkerOptions(dataConverter);
  const claude = claudeCallActivities(opts.claudeClient, opts.claudeConfig);
  const formatterPlans = new FormatterPlans();
  const turnWorker = await Worker.create({
    connection: opts.connection,
    namespace,
    taskQueue: opts.taskQueue,
    plugins,
    ...workflows.source,
    ...payloads,
    activities: turnQueueActivities(new Toolbox(opts.pool, opts.codeTools), opts.claudeConfig, claude, {
      storesPayloads: storesPayloads(dataConverter),
      ...(opts.toolsets ? { toolsets: opts.toolsets } : {}),
      formatterPlans,
    }),
    ...TURN_QUEUE_WORKER_OPTIONS,
    ...opts.turnWorkerOptions,
  });
  const claudeWorker = await createClaudeQueueWorker({
    connection: opts.connection,
    namespace,
    turnTaskQueue: opts.taskQueue,
    claudeClient: opts.claudeClient,
    claudeConfig: opts.claudeConfig,
    claude,
    payloads,
    plugins,
    formatterPlans,
  });
  return {
    turnWorker,
    claudeWorker,
    workflowCode: workflows.reason,
    async run() {
      await Promise.all([turnWorker.run(), claudeWorker.run()]);
    },
    shutdown() {
      for (const w of [turnWorker, claudeWorker]) if (w.getState() === 'RUNNING') w.shutdown();
    },
  };
}

export interface WorkerProcessOptions {
  settings: Settings;
  /** Where Temporal is (the settings' Temporal configuration with a command's flags on top). */
  target: TemporalTarget;
  /** @default the settings' task queue */
  taskQueue?: string;
  /** The process's one data converter, shared with its clients. */
  dataConverter: DataConverter;
  /** The worker config. @default the settings' (`settings.worker`) */
  config?: WorkerConfig;
  /** Where Claude is. @default the settings' Anthropic API settings */
  claudeApi?: ClaudeApiSettings;
  /** The Runtime's log level (installed once per process). @default INFO */
  logLevel?: LogLevel;
}

export interface WorkerProcess {
  /** The workers' connection: a client on it starts turns eagerly (their first task comes with the start). */
  connection: NativeConnection;
  namespace: string;
  workers: TurnWorkers;
  taskQueue: string;
  /** One line for the operator: queues, MCP servers, workflow code, storage, encryption, metrics, traces. */
  description: string;
  /** Runs the workers until shutdown; rejects if either fails. */
  run(): Promise<void>;
  shutdown(): void;
  /** After `run` ends: closes the MCP servers, flushes traces and closes the connection. */
  close(): Promise<void>;
}

/**
 * Makes a worker process's workers from `settings` (see the file comment), connected and ready to
 * run. Throws a settings error (src/config/settings.ts) for a setting they cannot run with (the
 * worker config, storage, encryption, tracing, the Claude API key).
 */
export async function startWorkers(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  const { settings, dataConverter } = opts;
  const config = opts.config ?? settings.worker.get();
  const claudeClient = createClaudeClient(opts.claudeApi ?? settings.claudeApi.get());
  const encryption = settings.encryption.get();
  const storage = settings.storage.get();
  const tracingSettings = settings.tracing.get();
  installTelemetry({
    logLevel: opts.logLevel ?? 'INFO',
    withholdFailureMessages: encryption !== undefined,
    ...(settings.metricsAddress ? { metricsAddress: settings.metricsAddress } : {}),
  });
  const taskQueue = opts.taskQueue ?? settings.taskQueue;
  // After the Runtime is installed (the connection would install a default one) and before the workers.
  const { connection, namespace } = await connectWorker(opts.target);
  const tracing: Tracing | undefined = startTracing(tracingSettings);
  const runtime = Runtime.instance();
  const pool = new McpPool(config.servers, runtime.logger, poolMetrics(runtime.metricMeter));
  const codeTools = new CodeTools(config.toolModules, {}, settings.credentials, runtime.logger);
  let workers: TurnWorkers;
  try {
    // A module that fails to load is said now, once; the worker runs with the other tools.
    await codeTools.load();
    workers = await createTurnWorkers({
      connection,
      namespace,
      taskQueue,
      pool,
      codeTools,
      toolsets: config.toolsets,
      claudeClient,
      claudeConfig: config.claude,
      turnWorkerOptions: config.worker,
      dataConverter,
      ...(tracing ? { plugins: [tracing.plugin] } : {}),
    });
  } catch (err) {
    await pool.close();
    await tracing?.shutdown();
    await connection.close();
    throw err;
  }
  return {
    connection,
    namespace,
    workers,
    taskQueue,
    description:
      `task queues ${taskQueue} and ${claudeTaskQueue(taskQueue)}; ` +
      `MCP servers: ${config.servers.map((s) => s.name).join(', ') || 'none'}` +
      (config.toolModules.length ? `; tool modules: ${config.toolModules.map((m) => m.name).join(', ')}` : '') +
      ` (config ${config.source}); ` +
      `workflow code: ${workers.workflowCode}; payload storage: ${describeStorage(storage)}; ${describeEncryption(encryption)}` +
      (settings.metricsAddress ? `; metrics on http://${settings.metricsAddress}/metrics` : '') +
      (tracing ? `; traces to ${tracing.tracesEndpoint} as ${tracing.serviceName}` : ''),
    run: () => workers.run(),
    shutdown: () => workers.shutdown(),
    async close() {
      await pool.close();
      await tracing?.shutdown();
      await connection.close();
    },
  };
}
