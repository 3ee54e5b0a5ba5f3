/**
 * What the benches read about the machine and its processes: the load averages printed beside
 * every absolute figure, and a process's CPU time from /proc.
 */
import fs from 'node:fs';
import os from 'node:os';

/** The 1, 5 and 15 minute load averages, e.g. `2.14 / 1.86 / 1.85`. */
export function loadAverages(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

/** CPU seconds (utime + stime, all threads) of a process, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks
}
