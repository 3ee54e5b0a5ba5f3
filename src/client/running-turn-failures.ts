/**
 * The failing calls of a batch's running turns, as progress lines prefixed with the query id:
 * "q7: Claude unreachable: connection refused (http://…), attempt 4, next in 8 s". Each turn is
 * asked through {@link FailingCalls} (a describe of its workflow), so the cost is bounded: every
 * {@link ASK_EVERY_MS} at most {@link TURNS_PER_ASK} turns are asked, those asked longest ago first,
 * so every running turn is asked in turn however many run.
 */
import { batchChildId } from '../core/batch';
import type { FailingCalls } from './failing-calls';

/** How often the running turns are asked for failing calls. */
export const ASK_EVERY_MS = 3_000;
/** The most turns asked at once. */
export const TURNS_PER_ASK = 8;

export class RunningTurnFailures {
  private readonly lastAsked = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private asking: Promise<void> = Promise.resolve();
  private busy = false;
  private stopped = false;

  /**
   * @param running the ids of the batch's queries whose turns run now.
   * @param print gets each new line.
   */
  constructor(
    private readonly calls: FailingCalls,
    private readonly batchName: string,
    private readonly running: () => readonly string[],
    private readonly print: (line: string) => void,
  ) {
    this.timer = setInterval(() => {
      if (this.busy) return; // the last ask has not answered yet: skip this tick
      this.busy = true;
      this.asking = this.ask().finally(() => (this.busy = false));
    }, ASK_EVERY_MS);
    this.timer.unref();
  }

  private async ask(): Promise<void> {
    const running = new Set(this.running());
    for (const id of this.lastAsked.keys()) if (!running.has(id)) this.lastAsked.delete(id);
    const chosen = [...running].sort((a, b) => (this.lastAsked.get(a) ?? 0) - (this.lastAsked.get(b) ?? 0)).slice(0, TURNS_PER_ASK);
    const now = Date.now();
    for (const id of chosen) this.lastAsked.set(id, now);
    const answers = await Promise.all(
      // A turn that cannot be described now (it just closed, the server restarts) is asked again later.
      chosen.map((id) => this.calls.lines(batchChildId(this.batchName, id)).then((lines) => ({ id, lines }), () => ({ id, lines: [] }))),
    );
    if (this.stopped) return;
    for (const { id, lines } of answers) for (const line of lines) this.print(`${id}: ${line}`);
  }

  /** Stops asking; resolves once an ask under way has answered (its lines are dropped). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.asking;
  }
}
