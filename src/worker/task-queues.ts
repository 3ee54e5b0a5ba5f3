/** Task queue names: the turn workflows and MCP calls on one, Claude calls optionally on their own. */
export const DEFAULT_TASK_QUEUE = 'mcp-turns';

export function taskQueueFromEnv(flag?: string): string {
  return flag ?? process.env.MCP_TURNS_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
}
