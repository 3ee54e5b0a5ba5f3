/** "35 s", "4 min 10 s", "2 h 5 min": how long a run took or is left to take, to the second. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** "24h", "30m", "90s", "1500ms": a duration as the flags take it (parseDurationMs), in the largest unit that divides it. */
export function compactDuration(ms: number): string {
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
