/** A worker's Prometheus metrics (`mcp-turns worker --metrics`), as the benches read them over a run. */

/** Counters and gauges of a worker's Prometheus metrics, summed by name over their label sets. */
export async function metricsSnapshot(metricsUrl: string | undefined): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  if (!metricsUrl) return sums;
  try {
    const text = await (await fetch(metricsUrl)).text();
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (name && Number.isFinite(value)) sums.set(name, (sums.get(name) ?? 0) + value);
    }
  } catch {
    // no metrics: figures left out
  }
  return sums;
}

/** A counter's growth between two snapshots (0 when the worker never reported it). */
export function counterGrowth(before: Map<string, number>, after: Map<string, number>, name: string): number {
  return (after.get(name) ?? 0) - (before.get(name) ?? 0);
}

/**
 * Workflow tasks replayed from the start of their history: a task for a workflow the worker's sticky
 * cache no longer holds. (`workflow_task_replay_latency` is recorded for every task applied, cached
 * or not, so its count is the number of workflow tasks, not of replays.)
 */
export const REPLAYS = 'temporal_sticky_cache_miss';
/** Workflow tasks the worker applied, from the cache or by replay. */
export const WORKFLOW_TASKS = 'temporal_workflow_task_replay_latency_count';

const WORKER_METRICS = /sticky_cache_(hit|miss|total_forced_eviction)|workflow_task_replay_latency_count|workflow_task_execution_failed|payload_download_count/;

/** The worker's sticky cache, replays and failed workflow tasks over a run, as one line. */
export function metricsDelta(before: Map<string, number>, after: Map<string, number>): string {
  const parts = [...after]
    .filter(([name]) => WORKER_METRICS.test(name))
    .map(([name, v]) => `${name.replace(/^temporal_/, '')} ${Math.round(v - (before.get(name) ?? 0))}`);
  return parts.length ? parts.join(', ') : 'no metrics';
}
