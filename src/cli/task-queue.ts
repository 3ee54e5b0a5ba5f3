/** The task queue a CLI command uses: its `--task-queue` flag, else `MCP_TURNS_TASK_QUEUE`, else the default. */
import { DEFAULT_TASK_QUEUE } from '../core/task-queues';

/** `flag` when given, else `MCP_TURNS_TASK_QUEUE`, else {@link DEFAULT_TASK_QUEUE}. */
export function taskQueueFromEnv(flag?: string): string {
  return flag ?? process.env.MCP_TURNS_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
}
