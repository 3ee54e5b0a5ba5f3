/**
 * The MCP tool-call activity: a thin wrapper binding the worker's pool to the activity context. It
 * heartbeats while it waits and on every progress notification, and turns the activity's
 * cancellation into an AbortSignal on the MCP request (the server gets `notifications/cancelled`).
 * Its failures carry the attempt they happened on (./attempt.ts).
 */
import { Context } from '@temporalio/activity';
import type { CallToolInput, CallToolOutput } from '../src/core/contracts';
import type { McpPool } from '../src/mcp/pool';
import { stampingAttempt } from './attempt';
import { heartbeatingWhile } from './heartbeat';

export function makeMcpActivities(pool: McpPool) {
  return {
    /** One MCP tool call; see McpPool.callTool for what is returned and what is thrown. */
    async callTool(input: CallToolInput): Promise<CallToolOutput> {
      const ctx = Context.current();
      const out = await stampingAttempt(ctx, () =>
        heartbeatingWhile(ctx, () =>
          pool.callTool(input, {
            signal: ctx.cancellationSignal,
            onProgress: (p) => ctx.heartbeat({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}) }),
          }),
        ),
      );
      return { ...out, attempt: ctx.info.attempt };
    },
  };
}

/** The MCP activities' type: what the workflow schedules and the worker registers. */
export type McpActivities = ReturnType<typeof makeMcpActivities>;
