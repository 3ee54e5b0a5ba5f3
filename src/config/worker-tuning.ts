/**
 * The config file's optional `worker:` section: Temporal worker capacity. Defaults suit a small
 * machine running many short turns: a bounded workflow cache (the SDK's default grows with the heap
 * limit, to thousands of cached turns and gigabytes of memory) and workflow threads that leave a core
 * to the activities.
 */
import os from 'node:os';
import type { Duration } from '@temporalio/common';
import { z } from 'zod';

export const WorkerTuningSchema = z
  .object({
    /**
     * Workflows kept in the worker's sticky cache. A turn that ends leaves it; a turn waiting for a
     * Message Batch stays until evicted, and one evicted is replayed when its result comes: a cache
     * as large as the turns waiting in one round keeps a batch through Message Batches near the
     * interactive run's CPU (bench:batch, 10,000 turns: 500 → 0.30 replays and 43.2 ms worker CPU
     * per turn; 2,000 → none and 34.4 ms; the same 1.4 GB peak RSS). @default 2000
     */
    maxCachedWorkflows: z.number().int().min(0).default(2000),
    /**
     * Threads running workflow code, each with its own V8 heap. One core is left to the main thread,
     * which runs the activities (Claude and MCP I/O): on 2 cores, 2 threads cost ~100 MB more peak RSS
     * than 1 for the same throughput (bench:batch). @default cores - 1 (1 to 4)
     */
    workflowThreadPoolSize: z.number().int().min(1).max(64).default(Math.min(4, Math.max(1, os.cpus().length - 1))),
    /** Workflow tasks processed at once. @default 100 */
    maxConcurrentWorkflowTaskExecutions: z.number().int().min(2).default(100),
    /** MCP calls running as activities of their own at once on this worker. @default 200 */
    maxConcurrentActivityTaskExecutions: z.number().int().min(1).default(200),
    /** MCP calls running as local activities (quick tools: src/mcp/tool-speed.ts) and turn starts at once. @default 200 */
    maxConcurrentLocalActivityExecutions: z.number().int().min(1).default(200),
    /**
     * How long a workflow task waits on this worker's sticky queue before any worker may take it.
     * After a worker dies without shutting down (SIGKILL, OOM, a lost machine), the next task of each
     * workflow it had cached waits this long; a live worker picks sticky tasks up at once, so only a
     * worker saturated for this long pays a replay. Milliseconds, or a duration such as "3s".
     * @default "3s" (Temporal's default is 10 s)
     */
    stickyQueueScheduleToStartTimeout: z
      .union([
        z.number().int().min(1),
        z
          .string()
          .regex(/^\d+(ms|s|m)$/, 'must be milliseconds or a duration such as "3s"')
          .transform((d) => d as Duration),
      ])
      .default('3s' as Duration),
  })
  .strict();

export type WorkerTuning = z.output<typeof WorkerTuningSchema>;

export function resolveWorkerTuning(raw: unknown): { tuning?: WorkerTuning; problems: string[] } {
  const parsed = WorkerTuningSchema.safeParse(raw ?? {});
  if (parsed.success) return { tuning: parsed.data, problems: [] };
  return {
    problems: parsed.error.issues.flatMap((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((k) => `worker.${[...i.path, k].join('.')}: unknown key`)
        : [`worker.${i.path.join('.')}: ${i.message}`],
    ),
  };
}
