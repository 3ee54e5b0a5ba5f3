/**
 * Dynamic config for the local dev server. The dev server keeps every workflow on one history
 * shard, and each shard's transfer queue (which hands new workflow and activity tasks to matching)
 * is polled at most `history.transferProcessorMaxPollRPS` times a second: 20 by default. On one shard
 * that cap, not the worker, sets the pace: every hop of a turn waited 25–40 ms for the next poll
 * (measured: 950 ms for a 5-round turn against the stub at 0 ms latency; 250 ms with the cap raised).
 * A production cluster spreads workflows over many shards, each with its own processor, so it does
 * not need this; the README says so. (Partitions, below, are what spread a busy task queue there.)
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number | boolean | string>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.timerProcessorMaxPollRPS': 1000,
  'history.visibilityProcessorMaxPollRPS': 1000,
  // Each queue tracks the tasks it has read until its next checkpoint (30 s by default), and every poll
  // splits that set: at 1000 polls/s that grew to 26 % of the server's CPU after ~1000 turns, and the
  // server's CPU per turn rose with every batch (49 -> 66 ms over 4 x 300 turns). A checkpoint a second
  // keeps it flat (48-53 ms).
  'history.transferProcessorUpdateAckInterval': '1s',
  'history.visibilityProcessorUpdateAckInterval': '1s',
  'history.timerProcessorUpdateAckInterval': '1s',
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

/**
 * Environment for the dev server process. GOGC=400 lets the Go heap grow to 5× the live data before
 * a collection instead of 2×: the server's garbage collector ran in 8 % of its CPU samples and its
 * allocations in 7 %, and with 400 the server's CPU per turn in bench:batch fell by ~8 % (ratio to
 * the worker's CPU in the same run, 4 pairs of runs), for more memory in a process that holds only a
 * dev database. A GOGC already in the environment wins.
 */
export function devServerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, GOGC: env.GOGC ?? '400' };
}
