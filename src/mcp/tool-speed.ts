/**
 * Which of a server's tools run as local activities. A local call costs a turn one workflow task
 * per round instead of two and records only its result, but while it runs the turn's workflow task
 * stays open: the turn's progress cannot be read and a cancellation waits until the call ends or
 * the task heartbeats (every 8 s). So a tool runs locally once its last {@link QUICK_CALLS} calls in
 * this worker each ended within {@link QUICK_CALL_MS}; a tool not yet seen, or seen slow, runs as an
 * activity of its own — except in a batch's turn, which runs a tool not yet seen locally too
 * (ServerCallPolicy.unseenTools). The server's `local_activity` setting can say always or never instead.
 */

/** Calls a tool must have made, each quick, before it runs locally. */
export const QUICK_CALLS = 3;
/** The longest a call may take and count as quick. */
export const QUICK_CALL_MS = 1000;

export class ToolSpeed {
  /** Tool → durations of its latest calls, newest last. */
  private readonly recent = new Map<string, number[]>();

  /** A call of `tool` that reached the server ended after `ms`. */
  record(tool: string, ms: number): void {
    const durations = this.recent.get(tool) ?? [];
    durations.push(ms);
    if (durations.length > QUICK_CALLS) durations.shift();
    this.recent.set(tool, durations);
  }

  /** True when `tool`'s latest calls were enough and all quick. */
  isQuick(tool: string): boolean {
    const durations = this.recent.get(tool) ?? [];
    return durations.length === QUICK_CALLS && durations.every((ms) => ms <= QUICK_CALL_MS);
  }

  /** The tools of `tools` never called yet under `setting` `auto` (none otherwise). */
  unseenTools(tools: readonly string[], setting: boolean | 'auto'): string[] {
    return setting === 'auto' ? tools.filter((t) => !this.recent.has(t)) : [];
  }

  /** The tools of `tools` that run locally under `setting`. */
  localTools(tools: readonly string[], setting: boolean | 'auto'): string[] {
    if (setting === true) return [...tools];
    if (setting === false) return [];
    return tools.filter((t) => this.isQuick(t));
  }
}
