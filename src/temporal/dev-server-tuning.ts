/**
 * Dynamic config for the local dev server. The dev server keeps every workflow on one history
 * shard, and each shard's transfer queue (which hands new workflow and activity tasks to matching)
 * is polled at most `history.transferProcessorMaxPollRPS` times a second: 20 by default. On one shard
 * that cap, not the worker, sets the pace: every hop of a turn waited 25–40 ms for the next poll
 * (measured: 950 ms for a 5-round turn against the stub at 0 ms latency; 250 ms with the cap raised).
 * A production cluster spreads workflows over many shards, each with its own processor, so it does
 * not need this; the README says so. (Partitions, below, are what spread a busy task queue there.)
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number | boolean>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.timerProcessorMaxPollRPS': 1000,
  'history.visibilityProcessorMaxPollRPS': 1000,
  // Activities scheduled on the workflow's own queue start in the same round trip.
  'system.enableActivityEagerExecution': true,
  // One partition per task queue: with the default 4, polls and tasks are forwarded between
  // partitions, which on a 2-core machine cost ~15% of the server's CPU in bench:batch.
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

/** `--dynamic-config-value KEY=VALUE` pairs for `temporal server start-dev`. */
export function devServerDynamicConfigArgs(): string[] {
  return Object.entries(DEV_SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
}
