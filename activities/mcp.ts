/**
 * The MCP activities: thin wrappers binding the worker's pool to the activity context. They
 * heartbeat on every progress notification and periodically while waiting (so a dead worker is
 * noticed within the heartbeat timeout, and cancellation, which arrives with heartbeats, is seen),
 * and turn the activity's cancellation into an AbortSignal on the MCP request (the server gets
 * `notifications/cancelled`).
 */
import { Context } from '@temporalio/activity';
import type { CallToolInput, CallToolOutput, ListToolsInput, ListToolsOutput } from '../src/core/contracts';
import type { McpPool } from '../src/mcp/pool';

/** Beat at least this often while waiting; Temporal throttles beats to the heartbeat timeout anyway. */
const MAX_BEAT_INTERVAL_MS = 2000;

/** Heartbeats every few seconds until the returned stop function is called. */
function keepBeating(ctx: Context): () => void {
  const timeout = ctx.info.heartbeatTimeoutMs;
  const every = timeout
    ? Math.max(100, Math.min(MAX_BEAT_INTERVAL_MS, Math.floor(timeout / 3)))
    : MAX_BEAT_INTERVAL_MS;
  const timer = setInterval(() => ctx.heartbeat(), every);
  return () => clearInterval(timer);
}

/** The activities over one pool: `listTools` and `callTool` (see ChatTurnActivities). */
export function makeMcpActivities(pool: McpPool) {
  return {
    /**
     * The tool list of the turn's servers, recorded once per turn so replay never asks a server.
     * Each server is bounded by its `listTimeoutMs`, well under the activity's timeout, so a hung
     * server costs one slow listing, not every retry.
     */
    async listTools(input: ListToolsInput): Promise<ListToolsOutput> {
      const ctx = Context.current();
      const stop = keepBeating(ctx);
      try {
        return await pool.listTools(input, { signal: ctx.cancellationSignal });
      } finally {
        stop();
      }
    },

    /** One MCP tool call; see McpPool.callTool for what is returned and what is thrown. */
    async callTool(input: CallToolInput): Promise<CallToolOutput> {
      const ctx = Context.current();
      const stop = keepBeating(ctx);
      try {
        const out = await pool.callTool(input, {
          signal: ctx.cancellationSignal,
          onProgress: (p) =>
            ctx.heartbeat({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}) }),
        });
        return { ...out, attempt: ctx.info.attempt };
      } finally {
        stop();
      }
    },
  };
}

/** The activities' type, for registration and tests. */
export type McpActivities = ReturnType<typeof makeMcpActivities>;
