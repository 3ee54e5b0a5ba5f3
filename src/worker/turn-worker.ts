/**
 * Assembles an mcp-turns worker process: one Temporal worker for turn workflows and MCP calls, one
 * for Claude calls (its own queue, its own concurrency and rate caps), sharing one MCP pool and one
 * Anthropic client.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Runtime, Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { claudeMetrics } from './metrics';
import { makeClaudeActivities } from '../../activities/claude';
import { makeMcpActivities } from '../../activities/mcp';
import { makeTurnStartActivities } from '../../activities/turn-start';
import type { ClaudeConfig } from '../claude/config';
import type { McpPool } from '../mcp/pool';
import { TranscriptCache } from '../claude/transcript-cache';
import { claudeTaskQueue } from '../core/task-queues';
import { workflowSource } from './workflow-bundle';

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
}

export interface TurnWorkers {
  turnWorker: Worker;
  claudeWorker: Worker;
  /** Where the workflow code came from: "prebuilt dist/workflow-bundle.js", or why it was bundled at start. */
  workflowCode: string;
  /** Turn conversations held between Claude calls (its stats say how many calls skipped the query). */
  transcripts: TranscriptCache;
  /** Runs both until shutdown; rejects if either fails. */
  run(): Promise<void>;
  shutdown(): void;
}

export async function createTurnWorkers(opts: TurnWorkerOptions): Promise<TurnWorkers> {
  const namespace = opts.namespace ?? 'default';
  const workflows = opts.workflowBundle
    ? { source: { workflowBundle: opts.workflowBundle }, reason: 'given bundle' }
    : workflowSource();
  const turnDefaults = { model: opts.claudeConfig.model };
  const turnWorker = await Worker.create({
    connection: opts.connection,
    namespace,
    taskQueue: opts.taskQueue,
    ...workflows.source,
    activities: {
      ...makeMcpActivities(opts.pool),
      ...makeTurnStartActivities({ pool: opts.pool, turnDefaults }), // local: run beside the workflow that asks
    },
    ...opts.turnWorkerOptions,
  });
  const transcripts = new TranscriptCache();
  const claudeWorker = await Worker.create({
    connection: opts.connection,
    namespace,
    taskQueue: claudeTaskQueue(opts.taskQueue),
    activities: makeClaudeActivities({
      client: opts.claudeClient,
      config: opts.claudeConfig,
      metrics: claudeMetrics(Runtime.instance().metricMeter),
      transcripts,
    }),
    maxConcurrentActivityTaskExecutions: opts.claudeConfig.maxConcurrentCalls,
    ...(opts.claudeConfig.rateLimitPerSecond !== undefined
      ? { maxTaskQueueActivitiesPerSecond: opts.claudeConfig.rateLimitPerSecond }
      : {}),
  });
  return {
    turnWorker,
    claudeWorker,
    transcripts,
    workflowCode: workflows.reason,
    async run() {
      await Promise.all([turnWorker.run(), claudeWorker.run()]);
    },
    shutdown() {
      for (const w of [turnWorker, claudeWorker]) if (w.getState() === 'RUNNING') w.shutdown();
    },
  };
}
