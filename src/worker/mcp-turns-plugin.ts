/**
 * mcp-turns as a Temporal worker plugin: a team adds chat turns to a worker of its own with
 * `Worker.create({ ..., plugins: [new McpTurnsPlugin()] })`, and its workflows can run `chatTurn`
 * as a child workflow.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { SimplePlugin } from '@temporalio/plugin';
import type { DataConverter } from '@temporalio/common';
import { Runtime, type Worker, type ReplayWorkerOptions, type WorkerOptions } from '@temporalio/worker';
import { createClaudeClient } from '../claude/client';
import { claudeTaskQueue } from '../core/task-queues';
import { McpPool } from '../mcp/pool';
import { CodeTools } from '../tools/code-tools';
import { Toolbox } from '../tools/toolbox';
import { dataConverterOf, storesPayloads } from '../data-converter/data-converter';
import { combinedWorkflowsOptions } from './combined-workflows';
import { poolMetrics } from './metrics';
import { claudeCallActivities, payloadWorkerOptions, TURN_QUEUE_WORKER_OPTIONS, turnQueueActivities } from './queue-registrations';
import { createClaudeQueueWorker } from './turn-worker';
import { FormatterPlans } from '../message-batches/formatter-plans';
import type { ClaudeActivities } from '../../activities/claude';
import type { DynamicActivity } from '../../activities/tool-calls';
import type { WorkerConfig } from '../config/worker-config';
import { processSettings } from '../config/process-settings';
import type { Settings } from '../config/settings';
import { workflowsPath } from './workflows-path';

export interface McpTurnsPluginOptions {
  /**
   * The settings (src/config/settings.ts: `loadSettings`). @default this process's environment:
   * the file named by `MCP_TURNS_CONFIG` (else no MCP servers), `MCP_TURNS_STORAGE`, the keyring,
   * `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`
   */
  settings?: Settings;
  /**
   * The worker config (MCP servers, `claude:` section): a JSON or YAML file, or one loaded with
   * `loadWorkerConfig`. @default the settings' config file
   */
  config?: string | WorkerConfig;
  /** The client for Claude calls. @default from the settings' Anthropic API settings */
  claudeClient?: Anthropic;
  /**
   * mcp-turns' data converter: External Storage of large payloads, or inline payloads refused over
   * Temporal's limit with a line that says so. Clients reading turns need the same one (pass the
   * plugin to their `Client` too). @default the settings' (storage and encryption)
   */
  dataConverter?: DataConverter;
  /**
   * Tools written in code, by module name (Claude sees `<module>__<tool>`): each a module's `tools`
   * export, an array of `defineTool` results (`mcp-turns/tools`) or a record of AI SDK tools. They
   * run with the default policies; the config's `toolModules` load beside them.
   */
  tools?: Record<string, unknown>;
}

/**
 * Adds mcp-turns to a worker: its workflows (`chatTurn`, `chatBatch`, `conversation`, `scheduledBatch`) beside the worker's own, the
 * MCP, turn-start and Claude activities on the worker's task queue, mcp-turns' data converter, and,
 * while the worker runs, a second worker on the Claude queue (`<task queue>-claude`) for the Claude
 * calls that run there (src/core/task-queues.ts), under the config's concurrency and rate caps. The MCP servers are opened on first use and closed
 * when the last worker using the plugin stops. On a `Client`, the plugin sets the same data converter.
 *
 * Workflows: with `workflowsPath`, the worker bundles that module's workflows and mcp-turns' together
 * at start; with neither `workflowsPath` nor `workflowBundle`, mcp-turns' alone; a `workflowBundle`
 * of the team's own must export `chatTurn`, `chatBatch`, `conversation` and `scheduledBatch` from `mcp-turns/workflows` itself.
 */
export class McpTurnsPlugin extends SimplePlugin {
  /** The loaded worker config. */
  readonly config: WorkerConfig;
  private readonly claudeClient: Anthropic;
  private readonly payloads: Pick<WorkerOptions, 'dataConverter' | 'interceptors'>;
  private readonly settings: Settings;
  private readonly givenTools: Record<string, unknown>;
  private toolbox?: Toolbox;
  /** The Claude activities both queues register (one cap on calls at once), made with the tools. */
  private claude?: ClaudeActivities;
  /** Workers configured with the tools and not yet stopped: the MCP servers close when the last one stops. */
  private poolUsers = 0;
  /** Claude queues of the workers this plugin runs: they pass through untouched when the plugin sits on the connection. */
  private readonly ownClaudeQueues = new Set<string>();

  /** Loads the config and makes the Claude client now, so a bad config or a missing key fails here. */
  constructor(options: McpTurnsPluginOptions = {}) {
    const settings = options.settings ?? processSettings(typeof options.config === 'string' ? { configFile: options.config } : {});
    const config = typeof options.config === 'object' ? options.config : settings.worker.get();
    const payloads = payloadWorkerOptions(options.dataConverter ?? dataConverterOf(settings));
    super({
      name: 'mcp-turns',
      dataConverter: payloads.dataConverter,
      workerInterceptors: payloads.interceptors,
    });
    this.config = config;
    this.settings = settings;
    this.givenTools = options.tools ?? {};
    const taken = [...config.servers.map((s) => s.name), ...config.toolModules.map((m) => m.name)];
    const clash = Object.keys(this.givenTools).filter((name) => taken.includes(name));
    if (clash.length) throw new Error(`McpTurnsPlugin tools: ${clash.join(', ')} already named in the config ${config.source} (one name is one server or one module)`);
    this.payloads = payloads;
    this.claudeClient = options.claudeClient ?? createClaudeClient(settings.claudeApi.get());
  }

  /**
   * The tools (MCP pool and tool modules, loaded on first use), made on the first worker (the
   * Runtime, whose logger and meter they use, exists by then).
   */
  private tools(): Toolbox {
    if (!this.toolbox) {
      const runtime = Runtime.instance();
      this.toolbox = new Toolbox(
        new McpPool(this.config.servers, runtime.logger, poolMetrics(runtime.metricMeter)),
        new CodeTools(this.config.toolModules, this.givenTools, this.settings.credentials, runtime.logger),
      );
    }
    return this.toolbox;
  }

  /** The Claude activities, made on the first worker (their metrics use the Runtime's meter). */
  /** The formatter plans of this process's submissions, for its Claude-queue workers' deliveries. */
  private readonly formatterPlans = new FormatterPlans();

  private claudeActivities(): ClaudeActivities {
    this.claude ??= claudeCallActivities(this.claudeClient, this.config.claude);
    return this.claude;
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    if (this.ownClaudeQueues.has(options.taskQueue)) return options;
    const configured = super.configureWorker(options);
    this.poolUsers++;
    return {
      ...configured,
      ...withTurnWorkflows(configured),
      // The team's own throttle, when it set one, wins; else calls learn of a cancellation within ~2 s.
      maxHeartbeatThrottleInterval: configured.maxHeartbeatThrottleInterval ?? TURN_QUEUE_WORKER_OPTIONS.maxHeartbeatThrottleInterval,
      activities: {
        ...configured.activities,
        ...turnQueueActivities(this.tools(), this.config.claude, this.claudeActivities(), {
          storesPayloads: this.payloads.dataConverter ? storesPayloads(this.payloads.dataConverter) : false,
          toolsets: this.config.toolsets,
          formatterPlans: this.formatterPlans,
          // The team's own dynamic activity keeps every type that is not a local tool call.
          otherDynamic: (configured.activities as Record<string, unknown> | undefined)?.default as DynamicActivity | undefined,
        }),
      },
    };
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    const configured = super.configureReplayWorker(options);
    return { ...configured, ...withTurnWorkflows(configured) };
  }

  /** Runs the worker and, beside it, the Claude-queue worker; a failure of either stops both. */
  override async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    if (this.ownClaudeQueues.has(worker.options.taskQueue)) return next(worker);
    const queue = claudeTaskQueue(worker.options.taskQueue);
    this.ownClaudeQueues.add(queue);
    try {
      const claudeWorker = await createClaudeQueueWorker({
        ...(worker.connection ? { connection: worker.connection } : {}),
        namespace: worker.options.namespace,
        turnTaskQueue: worker.options.taskQueue,
        claudeClient: this.claudeClient,
        claudeConfig: this.config.claude,
        claude: this.claudeActivities(),
        payloads: this.payloads,
        formatterPlans: this.formatterPlans,
      });
      const stop = (w: Worker): void => {
        if (w.getState() === 'RUNNING') w.shutdown();
      };
      const ended = await Promise.allSettled([
        next(worker).finally(() => stop(claudeWorker)),
        claudeWorker.run().finally(() => stop(worker)),
      ]);
      for (const e of ended) if (e.status === 'rejected') throw e.reason;
    } finally {
      this.ownClaudeQueues.delete(queue);
      if (--this.poolUsers === 0 && this.toolbox) {
        const toolbox = this.toolbox;
        this.toolbox = undefined;
        await toolbox.close();
      }
    }
  }
}

/** The workflow source of a worker with mcp-turns' workflows added (see {@link McpTurnsPlugin}). */
function withTurnWorkflows(
  options: Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle' | 'bundlerOptions'>,
): Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle' | 'bundlerOptions'> {
  if (options.workflowBundle) return { workflowBundle: options.workflowBundle };
  if (options.workflowsPath) return combinedWorkflowsOptions(options.workflowsPath, options.bundlerOptions);
  return { workflowsPath: workflowsPath() };
}
