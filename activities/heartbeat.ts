/**
 * The one heartbeat rule of mcp-turns' activities: while an activity waits on Claude or an MCP
 * server, it heartbeats at least every 2 s (a third of its heartbeat timeout when that is shorter),
 * so a dead worker is noticed within the heartbeat timeout and a cancellation, which reaches a
 * running activity only with a heartbeat's answer, arrives within ~2 s: the workers send beats at
 * that pace at most (their `maxHeartbeatThrottleInterval`, src/worker/queue-registrations.ts), not at
 * the SDK's default of 0.8 × the heartbeat timeout (8 s for a Claude call, 12 s for a tool call).
 */
import type { Context } from '@temporalio/activity';

export const MAX_BEAT_INTERVAL_MS = 2000;
const MIN_BEAT_INTERVAL_MS = 100;

/**
 * Heartbeats until the returned function is called; with `details`, each beat carries what it
 * answers (a beat without them would clear the details the activity published).
 */
export function keepHeartbeating(ctx: Context, details?: () => unknown): () => void {
  const timeout = ctx.info.heartbeatTimeoutMs;
  const every = timeout ? Math.max(MIN_BEAT_INTERVAL_MS, Math.min(MAX_BEAT_INTERVAL_MS, Math.floor(timeout / 3))) : MAX_BEAT_INTERVAL_MS;
  const timer = setInterval(() => ctx.heartbeat(details?.()), every);
  return () => clearInterval(timer);
}

/** Runs `fn` while heartbeating (with `details`, see {@link keepHeartbeating}). */
export async function heartbeatingWhile<T>(ctx: Context, fn: () => Promise<T>, details?: () => unknown): Promise<T> {
  const stop = keepHeartbeating(ctx, details);
  try {
    return await fn();
  } finally {
    stop();
  }
}
