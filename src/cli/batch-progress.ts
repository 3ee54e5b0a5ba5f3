/**
 * What `mcp-turns batch` shows while it runs. On a terminal: a progress bar, with other lines (a
 * failing call's) printed above it. Without one (a log, CI, a pipe): a progress line every
 * {@link PROGRESS_LINE_EVERY_MS} whether or not anything changed, so a log shows the batch is alive,
 * and a line whenever the set of turns waiting for approval changes.
 */
import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import type { BatchProgress } from '../core/batch';
import { formatDuration } from './duration';

/** Without a terminal, the longest a batch stays silent. */
export const PROGRESS_LINE_EVERY_MS = 5_000;

/** Where a batch stands: results written so far (with those kept from an earlier run) and its last progress. */
export interface BatchStanding {
  total: number;
  /** Queries with a result line (completed or failed), those kept from an earlier run included. */
  done: number;
  failed: number;
  /** Turns running now; undefined before the batch workflow first answered. */
  running?: number;
  waitingApproval: number;
  /** Results per second written by this run; 0 before its first. */
  ratePerSecond: number;
}

/** `ETA 35 s` at this run's rate; undefined before its first result or once all are done. */
function eta(s: BatchStanding): string | undefined {
  return s.ratePerSecond > 0 && s.done < s.total ? `ETA ${formatDuration((s.total - s.done) / s.ratePerSecond)}` : undefined;
}

/** `batch NAME: 12/40 done · 1 failed · 10 running · 0.8/s · ETA 35 s`. */
export function progressLine(name: string, s: BatchStanding): string {
  const parts = [`${s.done}/${s.total} done`, `${s.failed} failed`];
  if (s.running !== undefined) parts.push(`${s.running} running`);
  if (s.waitingApproval) parts.push(`${s.waitingApproval} waiting for approval`);
  parts.push(`${s.ratePerSecond.toFixed(1)}/s`);
  const left = eta(s);
  if (left) parts.push(left);
  return `batch ${name}: ${parts.join(' · ')}`;
}

/** The batch's progress on stderr: a bar on a terminal, else lines (see the module comment). */
export class BatchProgressView {
  private readonly bars?: MultiBar;
  private readonly bar?: SingleBar;
  private readonly ticker?: NodeJS.Timeout;
  private waitingShown = '';
  private stopped = false;

  /** @param standing where the batch stands now; asked on every update and every tick. */
  constructor(
    private readonly name: string,
    private readonly standing: () => BatchStanding,
    private readonly tty = Boolean(process.stderr.isTTY),
  ) {
    const s = standing();
    if (tty) {
      this.bars = new MultiBar(
        {
          format: 'batch {bar} {value}/{total} · {failed} failed · {running} running{waiting} · {rate}/s{etaLeft}',
          hideCursor: true,
        },
        Presets.shades_classic,
      );
      this.bar = this.bars.create(s.total, s.done, this.payload(s));
    } else {
      this.ticker = setInterval(() => console.error(progressLine(this.name, this.standing())), PROGRESS_LINE_EVERY_MS);
      this.ticker.unref();
    }
  }

  private payload(s: BatchStanding): Record<string, string | number> {
    const left = eta(s);
    return {
      failed: s.failed,
      running: s.running ?? 0,
      waiting: s.waitingApproval ? ` (${s.waitingApproval} waiting for approval)` : '',
      rate: s.ratePerSecond.toFixed(1),
      etaLeft: left ? ` · ${left}` : '',
    };
  }

  /** Called with each progress of the batch workflow (and after each result). */
  update(p?: BatchProgress): void {
    if (this.stopped) return;
    const s = this.standing();
    this.bar?.update(s.done, this.payload(s));
    if (this.tty || !p) return;
    const shown = [...p.waitingApproval].sort().join(' ');
    if (shown === this.waitingShown) return;
    this.waitingShown = shown;
    console.error(
      p.waitingApproval.length
        ? `batch ${this.name}: ${p.waitingApproval.length} turn(s) waiting for approval (${shown}); see mcp-turns approvals --batch ${this.name}`
        : `batch ${this.name}: no turn waits for approval`,
    );
  }

  /** Prints a line: above the bar on a terminal. */
  log(line: string): void {
    if (this.stopped) return;
    if (this.bars) this.bars.log(`${line}\n`);
    else console.error(line);
  }

  /** Ends the bar (showing its last state and any line logged last) or the progress lines; idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.ticker) clearInterval(this.ticker);
    if (this.bars) {
      this.bars.update(); // prints the lines logged since its last redraw
      this.bars.stop();
    }
  }
}
