/**
 * `mcp-turns/worker`: add mcp-turns to a Temporal worker of your own (or create one with it):
 *
 *   const worker = await Worker.create({ connection, taskQueue: 'mcp-turns', workflowsPath, plugins: [new McpTurnsPlugin({ config: 'mcp.yaml' })] });
 *
 * Loads `@temporalio/worker`; client code imports `mcp-turns` instead.
 */
export { McpTurnsPlugin, type McpTurnsPluginOptions } from '../worker/mcp-turns-plugin';
export { loadWorkerConfig, WorkerConfigError, type WorkerConfig } from '../config/worker-config';
export { DEFAULT_TASK_QUEUE } from '../core/task-queues';
