/**
 * The checks the Messages API makes on prompt-cache breakpoints: each `cache_control` is
 * `{ type: "ephemeral", ttl?: "5m" | "1h" }`, a request has at most 4 of them (a top-level
 * `cache_control` counts as one), and in prefix order (tools, system, messages) a 1-hour breakpoint
 * never comes after a 5-minute one. Returns the 400 message naming the field, or undefined.
 */
import { cacheLayout, ttlOf } from './cache-layout';
import { isRecord } from '../core/is-record';

export const MAX_CACHE_BREAKPOINTS = 4;
const TTLS = ['5m', '1h'];

function controlProblem(control: unknown, path: string): string | undefined {
  if (!isRecord(control)) return `${path}: Input should be a valid dictionary`;
  if (control.type !== 'ephemeral') return `${path}.type: Input should be 'ephemeral'`;
  const extra = Object.keys(control).find((k) => k !== 'type' && k !== 'ttl');
  if (extra) return `${path}.${extra}: Extra inputs are not permitted`;
  if ('ttl' in control && !TTLS.includes(control.ttl as string)) return `${path}.ttl: Input should be '5m' or '1h'`;
  return undefined;
}

export function cacheControlProblem(body: Record<string, unknown>): string | undefined {
  const { breakpoints } = cacheLayout(body);
  for (const b of breakpoints) {
    const problem = controlProblem(b.control, b.path);
    if (problem) return problem;
  }
  if (breakpoints.length > MAX_CACHE_BREAKPOINTS) {
    return `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints.length}.`;
  }
  const firstShort = breakpoints.findIndex((b) => ttlOf(b) === '5m');
  const longAfter = firstShort === -1 ? undefined : breakpoints.slice(firstShort + 1).find((b) => ttlOf(b) === '1h');
  if (longAfter) return `${longAfter.path}: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block`;
  return undefined;
}
