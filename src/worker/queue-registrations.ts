/**
 * What mcp-turns registers on each of its task queues, shared by its own worker (turn-worker.ts)
 * and the plugin for teams' workers (mcp-turns-plugin.ts): the turn queue runs the workflows, the
 * MCP activities, the turn's start (a local activity) and, unless a rate cap spans the Claude queue,
 * unstreamed Claude calls; the Claude queue (`<queue>-claude`) runs the other Claude calls under the
 * config's concurrency and rate caps (src/core/task-queues.ts).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Runtime, type WorkerOptions } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { makeClaudeActivities, type ClaudeActivities } from '../../activities/claude';
import type { ToolCallActivities } from '../../activities/tool-calls';
import type { TurnStartActivities } from '../../activities/turn-start';
import type { ACTIVITY_TYPES } from '../core/activity-types';
import { makeMessageBatchActivities, makeMessageBatchSubmitActivities } from '../../activities/message-batches';
import type { FormatterPlans } from '../message-batches/formatter-plans';
import { MAX_BEAT_INTERVAL_MS } from '../../activities/heartbeat';
import { makeToolCallActivities, type DynamicActivity } from '../../activities/tool-calls';
import { makeTurnStartActivities } from '../../activities/turn-start';
import { makeUsageLedgerActivities } from '../../activities/usage-ledger';
import type { ClaudeConfig } from '../claude/config';
import type { WorkerTurnDefaults } from '../core/contracts';
import type { Toolset } from '../core/toolsets';
import type { Toolbox } from '../tools/toolbox';
import { claudeTaskQueue } from '../core/task-queues';
import { STREAM_PUBLISH_INTERVAL_MS } from '../core/stream-record';
import { activityResultLimit } from '../storage/activity-payload-limit';
import { storesPayloads } from '../data-converter/data-converter';
import { claudeMetrics } from './metrics';

/** Compile-time: each activity type readers of a turn's history look for is one the worker registers. */
export type RegisteredActivityTypes = Pick<ClaudeActivities & ToolCallActivities & TurnStartActivities, (typeof ACTIVITY_TYPES)[keyof typeof ACTIVITY_TYPES]>;

/**
 * The Claude calls' activities of one worker process, made once and registered on both queues, so
 * one cap (`claude.maxConcurrentCalls`) counts the calls of both (src/claude/call-limiter.ts).
 */
export function claudeCallActivities(claudeClient: Anthropic, claudeConfig: ClaudeConfig): ClaudeActivities {
  return makeClaudeActivities({ client: claudeClient, config: claudeConfig, metrics: claudeMetrics(Runtime.instance().metricMeter) });
}

/**
 * The turn queue's activities: tool calls, MCP servers' and tool modules' (a local one through the
 * dynamic activity, handing any other type to `otherDynamic`, the worker's own), the turn's start
 * (with the worker's defaults and tool sets),
 * a request's submission to its Message Batch collector, and the Claude calls of turns whose queue
 * they run on (src/core/task-queues.ts: when no rate cap spans the queue). `storesPayloads`: the
 * workers' data converter stores large payloads (mcp-turns' default converter does).
 */
export function turnQueueActivities(
  tools: Toolbox,
  claudeConfig: ClaudeConfig,
  claude: ClaudeActivities,
  {
    storesPayloads = true,
    otherDynamic,
    toolsets = {},
    formatterPlans,
  }: {
    storesPayloads?: boolean;
    otherDynamic?: DynamicActivity;
    toolsets?: Readonly<Record<string, Toolset>>;
    /** Shared with this process's Claude-queue worker (claudeQueueWorkerOptions). */
    formatterPlans?: FormatterPlans;
  } = {},
) {
  const workerDefaults: WorkerTurnDefaults = {
    model: claudeConfig.model,
    ...(claudeConfig.maxToolsPerRequest !== undefined ? { maxToolsPerRequest: claudeConfig.maxToolsPerRequest } : {}),
    claudeOnTurnQueue: claudeConfig.rateLimitPerSecond === undefined,
    ...(claudeConfig.serverTools ? { serverTools: claudeConfig.serverTools } : {}),
    ...(claudeConfig.toolSearch ? { toolSearch: claudeConfig.toolSearch } : {}),
    ...(claudeConfig.alwaysLoad ? { alwaysLoad: claudeConfig.alwaysLoad } : {}),
    ...(claudeConfig.effort ? { effort: claudeConfig.effort } : {}),
    ...(claudeConfig.stopSequences ? { stopSequences: claudeConfig.stopSequences } : {}),
    ...(claudeConfig.toolChoice !== undefined ? { toolChoice: claudeConfig.toolChoice } : {}),
    ...(claudeConfig.cache ? { cache: claudeConfig.cache } : {}),
  };
  return {
    ...makeToolCallActivities(tools, otherDynamic), // its dynamic activity runs the local tool calls
    ...makeTurnStartActivities({ tools, workerDefaults, toolsets }), // local: run beside the workflow that asks
    ...makeMessageBatchSubmitActivities({ config: claudeConfig, storesPayloads, ...(formatterPlans ? { formatterPlans } : {}) }),
    ...makeUsageLedgerActivities(), // local: the usage ledger's look at its owner's running turns
    ...claude,
  };
}

/**
 * Options of the worker on the turn queue that mcp-turns sets: its activities' beats reach the
 * server every 2 s at most, so a cancelled Claude or tool call learns of it within ~2 s
 * (activities/heartbeat.ts).
 */
export const TURN_QUEUE_WORKER_OPTIONS = { maxHeartbeatThrottleInterval: MAX_BEAT_INTERVAL_MS } as const satisfies Partial<WorkerOptions>;

/**
 * Options of the worker on the Claude queue of `turnTaskQueue` (without connection and namespace):
 * the Claude calls (`claude`, the same set the turn queue registers) and the Message Batch
 * collector's activities, under the config's concurrency and rate caps.
 */
export function claudeQueueWorkerOptions(
  turnTaskQueue: string,
  claudeClient: Anthropic,
  claudeConfig: ClaudeConfig,
  claude: ClaudeActivities,
  formatterPlans?: FormatterPlans,
): Pick<
  WorkerOptions,
  | 'taskQueue'
  | 'activities'
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxTaskQueueActivitiesPerSecond'
  | 'maxHeartbeatThrottleInterval'
> {
  return {
    taskQueue: claudeTaskQueue(turnTaskQueue),
    // A streamed call's deltas reach subscribers as heartbeat details: send them at this pace at most.
    maxHeartbeatThrottleInterval: STREAM_PUBLISH_INTERVAL_MS,
    activities: { ...claude, ...makeMessageBatchActivities({ client: claudeClient, config: claudeConfig, ...(formatterPlans ? { formatterPlans } : {}) }) },
    maxConcurrentActivityTaskExecutions: claudeConfig.maxConcurrentCalls,
    ...(claudeConfig.rateLimitPerSecond !== undefined
      ? { maxTaskQueueActivitiesPerSecond: claudeConfig.rateLimitPerSecond }
      : {}),
  };
}

/**
 * Both queues' payload options: mcp-turns' data converter and, when it stores no payloads, the
 * interceptor that fails an activity whose result is over Temporal's limit with a line that says so.
 */
export function payloadWorkerOptions(
  dataConverter: DataConverter,
): Pick<WorkerOptions, 'dataConverter' | 'interceptors'> {
  return {
    dataConverter,
    interceptors: storesPayloads(dataConverter) ? {} : { activity: [activityResultLimit()] },
  };
}
