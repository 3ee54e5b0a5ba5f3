/**
 * Dynamic config for the local dev server. The dev server keeps every workflow on one history
 * shard, and each shard's transfer queue (which hands new workflow and activity tasks to matching)
 * is polled at most `history.transferProcessorMaxPollRPS` times a second: 20 by default. On one shard
 * that cap, not the worker, sets the pace (every hop of a turn waits 25–40 ms for the next poll), so
 * the poll rates are raised here. A production cluster spreads workflows over many shards, each with
 * its own processor, and needs none of this (docs/operations.md, "The Temporal server"). Partitions, below, are
 * what spread a busy task queue on a cluster.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number | boolean | string>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.timerProcessorMaxPollRPS': 1000,
  'history.visibilityProcessorMaxPollRPS': 1000,
  // Each queue keeps the tasks it has read until its next checkpoint (30 s by default), and every poll
  // splits that set: at 1000 polls/s the server's CPU per turn grows with every turn run until the
  // checkpoint. A checkpoint every second keeps the set, and the CPU per turn, small and flat.
  'history.transferProcessorUpdateAckInterval': '1s',
  'history.visibilityProcessorUpdateAckInterval': '1s',
  'history.timerProcessorUpdateAckInterval': '1s',
  // Activities scheduled on the workflow's own queue start in the same round trip.
  'system.enableActivityEagerExecution': true,
  // One partition per task queue: with the default 4, polls and tasks are forwarded between
  // partitions, CPU that a one-machine dev server shares with its workers (~15 % of its own in
  // bench:batch on 2 cores).
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
  // Tasks carrying a fairness key (a turn's owner's, src/client/owner.ts) are dispatched fairly
  // among keys: one owner's thousand turns do not hold back another's one.
  'matching.enableFairness': true,
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
 * a collection instead of 2×: the server spends less CPU on garbage collection (about 8 % less per
 * turn in bench:batch) for more memory, in a process that holds only a dev database. A GOGC already
 * in the environment wins.
 */
export function devServerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, GOGC: env.GOGC ?? '400' };
}
