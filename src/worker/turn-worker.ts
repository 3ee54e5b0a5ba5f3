/**
 * Assembles an mcp-turns worker process: one Temporal worker for turn workflows, MCP calls and
 * unstreamed Claude calls, one for the Claude queue (its own concurrency and rate caps), sharing one
 * MCP pool, one Anthropic client and one cap on Claude calls at once.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Worker, type NativeConnection, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { dataConverterFromEnv, encryptsPayloads, storesPayloads } from '../storage/data-converter';
import type { ClaudeConfig } from '../claude/config';
import type { McpPool } from '../mcp/pool';
import { claudeCallActivities, claudeQueueWorkerOptions, payloadWorkerOptions, TURN_QUEUE_WORKER_OPTIONS, turnQueueActivities } from './queue-registrations';
import { workflowSource } from './workflow-bundle';
import { workflowsPath } from './workflows-path';

export interface TurnWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  pool: McpPool;
  claudeClient: Anthropic;
  claudeConfig: ClaudeConfig;
  /** Pre-built workflow bundle (tests share one); default: bundle `workflows/` at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra options for the turn worker (e.g. concurrency in benchmarks). */
  turnWorkerOptions?: Partial<WorkerOptions>;
  /**
   * Plugins for both workers (tracing: src/tracing). With any, and no `workflowBundle`, the turn
   * worker bundles its workflow code at start (~1.5 s): a plugin's workflow interceptors cannot
   * join the prebuilt bundle.
   */
  plugins?: WorkerPlugin[];
  /**
   * The data converter both workers use; the clients that start and read turns must use the same.
   * @default mcp-turns' converter configured from the environment (`MCP_TURNS_STORAGE`, src/storage/)
   */
  dataConverter?: DataConverter;
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

export async function createTurnWorkers(opts: TurnWorkerOptions): Promise<TurnWorkers> {
  const namespace = opts.namespace ?? 'default';
  const plugins = opts.plugins ?? [];
  const dataConverter = opts.dataConverter ?? dataConverterFromEnv();
  const workflows = opts.workflowBundle
    ? { source: { workflowBundle: opts.workflowBundle }, reason: 'given bundle' }
    : plugins.length
      ? { source: { workflowsPath: workflowsPath() }, reason: "bundled at start with the plugins' workflow interceptors" }
      : workflowSource(encryptsPayloads(dataConverter) ? 'encrypted' : 'plain');
  const payloads = payloadWorkerOptions(dataConverter);
  const claude = claudeCallActivities(opts.claudeClient, opts.claudeConfig);
  const turnWorker = await Worker.create({
    connection: opts.connection,
    namespace,
    taskQueue: opts.taskQueue,
    plugins,
    ...workflows.source,
    ...payloads,
    activities: turnQueueActivities(opts.pool, opts.claudeConfig, claude, { storesPayloads: storesPayloads(dataConverter) }),
    ...TURN_QUEUE_WORKER_OPTIONS,
    ...opts.turnWorkerOptions,
  });
  const claudeWorker = await Worker.create({
    connection: opts.connection,
    namespace,
    plugins,
    ...payloads,
    ...claudeQueueWorkerOptions(opts.taskQueue, opts.claudeClient, opts.claudeConfig, claude),
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
