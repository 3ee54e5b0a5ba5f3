/**
 * The MCP activities: thin wrappers binding the worker's pool to the activity context (heartbeats
 * on progress and while waiting; cancellation through the heartbeat-delivered signal).
 */
import { Context } from '@temporalio/activity';
import type { CallToolInput, CallToolOutput, ListToolsInput, ListToolsOutput } from '../src/core/contracts';
import type { McpPool } from '../src/mcp/pool';

const HEARTBEAT_EVERY_MS = 2000;

export function makeMcpActivities(pool: McpPool) {
  return {
    /** The tool list of the turn's servers, recorded once per turn so replay never asks a server. */
    async listTools(input: ListToolsInput): Promise<ListToolsOutput> {
      return pool.listTools(input);
    },

    /** One MCP tool call. */
    async callTool(input: CallToolInput): Promise<CallToolOutput> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        const out = await pool.callTool(input, { signal: ctx.cancellationSignal, onProgress: () => ctx.heartbeat() });
        return { ...out, attempt: ctx.info.attempt };
      } finally {
        clearInterval(beat);
      }
    },
  };
}

export type McpActivities = ReturnType<typeof makeMcpActivities>;
