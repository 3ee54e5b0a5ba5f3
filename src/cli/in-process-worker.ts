/**
 * The worker `run`, `chat`, `batch` and `serve` start in their own process when no worker polls the
 * task queue: the same worker as `mcp-turns worker` (src/worker/turn-worker.ts, from the same
 * settings), for the command's duration.
 */
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { Settings } from '../config/settings';
import type { WorkerConfig } from '../config/worker-config';
import { useTaskQueue } from '../client/client-task-queue';
import { clientStorageOptions } from '../data-converter/client-storage-options';
import type { TemporalTarget } from '../temporal/connection';
import { startWorkers } from '../worker/turn-worker';

/** What an in-process worker needs, checked before anything is started. */
export interface InProcessWorkerSetup {
  config: WorkerConfig;
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

/** The worker config of `settings`, the Claude API settings checked too; a settings error (exit 2) when either is wrong. */
export function inProcessWorkerSetup(settings: Settings): InProcessWorkerSetup {
  settings.claudeApi.get();
  return { config: settings.worker.get() };
}

/** Starts the worker on `taskQueue` (and its Claude queue) at `target` and returns once it polls. */
export async function startInProcessWorker(
  setup: InProcessWorkerSetup,
  target: TemporalTarget,
  taskQueue: string,
  settings: Settings,
  dataConverter: DataConverter,
): Promise<InProcessWorker> {
  const worker = await startWorkers({
    settings,
    target,
    taskQueue,
    dataConverter,
    config: setup.config,
    logLevel: 'ERROR',
  });
  const { connection, namespace } = worker;
  const running = worker.run();
  const failed = running.then(
    () => Promise.reject(new Error('the in-process worker stopped')),
    (err: unknown) =>
      Promise.reject(
        new Error(`the in-process worker failed: ${err instanceof Error ? err.message : String(err)}`),
      ),
  );
  failed.catch(() => undefined); // only the command's wait observes it
  const client = new Client({ connection, namespace, ...clientStorageOptions(dataConverter) });
  useTaskQueue(client, taskQueue);
  return {
    client,
    failed,
    async stop() {
      worker.shutdown();
      await running.catch(() => undefined);
      await worker.close();
    },
  };
}
