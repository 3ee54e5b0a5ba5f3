/**
 * What `mcp-turns batch` shows while it runs. On a terminal: a progress bar, with other lines (a
 * failing call's) printed above it. Without one (a log, CI, a pipe): a progress line every
 * {@link PROGRESS_LINE_EVERY_MS} whether or not anything changed, so a log shows the batch is alive,
 * and a line whenever the set of turns waiting for approval changes.
 *
 * A batch through Message Batches also shows where its turns wait (one line per Message Batch
 * holding some, one per collector gathering some): asked at most every {@link MESSAGE_BATCHES_ASK_EVERY_MS},
 * never holding up the view (the last answer is shown meanwhile). Without a terminal the lines follow
 * every progress line; on a terminal they are printed above the bar whenever they change.
 *
 * The ETA: at this run's rate of results, or, through Message Batches, from the progress of the
 * Message Batches the turns wait in (their own request counts), since their results come in bursts
 * when a Message Batch ends and a rate of results says nothing of when the next one does.
 */
import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import type { BatchProgress } from '../core/batch';
import { messageBatchEtaSeconds, messageBatchLine, type MessageBatchWait } from '../client/message-batch-status';
import { formatDuration } from './duration';

/** Without a terminal, the longest a batch stays silent. */
export const PROGRESS_LINE_EVERY_MS = 5_000;

/** The least time between two asks of where the batch's turns wait for Message Batches. */
export const MESSAGE_BATCHES_ASK_EVERY_MS = 5_000;

/** Where a batch stands: results written so far (with those kept from an earlier run) and its last progress. */
export interface BatchStanding {
  total: number;
  /** Queries with a result line (completed or failed), those kept from an earlier run included. */
  done: number;
  /** Of those: answered in part (exit code 3), not approved (4), failed (1), as the results file says. */
  partial: number;
  notApproved: number;
  failed: number;
  /** Turns running now; undefined before the batch workflow first answered. */
  running?: number;
  waitingApproval: number;
  /** Running turns whose Claude call waits for a Message Batch. */
  waitingMessageBatch: number;
  /** Results per second written by this run; 0 before its first. */
  ratePerSecond: number;
}

/** Seconds left at this run's rate; undefined before its first result or once all are done. */
export function rateEtaSeconds(s: BatchStanding): number | undefined {
  return s.ratePerSecond > 0 && s.done < s.total ? (s.total - s.done) / s.ratePerSecond : undefined;
}

function etaPart(seconds: number | undefined): string | undefined {
  return seconds === undefined ? undefined : `ETA ${formatDuration(seconds)}`;
}

/** `1 partial · 1 not approved · 2 failed`: partial and not approved only when there are any. */
function outcomeParts(s: BatchStanding): string[] {
  const parts: string[] = [];
  if (s.partial) parts.push(`${s.partial} partial`);
  if (s.notApproved) parts.push(`${s.notApproved} not approved`);
  parts.push(`${s.failed} failed`);
  return parts;
}

/** What running turns wait for: `2 waiting for approval`, `412 waiting for a Message Batch`. */
function waitingParts(s: BatchStanding): string[] {
  const parts: string[] = [];
  if (s.waitingApproval) parts.push(`${s.waitingApproval} waiting for approval`);
  if (s.waitingMessageBatch) parts.push(`${s.waitingMessageBatch} waiting for a Message Batch`);
  return parts;
}

/**
 * `batch NAME: 12/40 done · 1 partial · 1 failed · 10 running · 2 waiting for approval · 0.8/s · ETA 35 s`.
 * @param etaSeconds the time left (undefined: not known), e.g. {@link rateEtaSeconds}.
 */
export function progressLine(name: string, s: BatchStanding, etaSeconds: number | undefined): string {
  const parts = [`${s.done}/${s.total} done`, ...outcomeParts(s)];
  if (s.running !== undefined) parts.push(`${s.running} running`);
  parts.push(...waitingParts(s));
  parts.push(`${s.ratePerSecond.toFixed(1)}/s`);
  const left = etaPart(etaSeconds);
  if (left) parts.push(left);
  return `batch ${name}: ${parts.join(' · ')}`;
}

/** What changes a Message Batch wait's line, its age aside. */
function waitsKey(waits: readonly MessageBatchWait[]): string {
  return waits.map((w) => `${w.model}:${w.batchId ?? ''}:${w.turns}:${w.requests}`).join(' ');
}

export interface BatchProgressViewOptions {
  /** @default whether stderr is a terminal */
  tty?: boolean;
  /** Where the batch's turns wait for Message Batches (a batch through Message Batches only). */
  messageBatchWaits?: () => Promise<MessageBatchWait[]>;
}

/** The batch's progress on stderr: a bar on a terminal, else lines (see the module comment). */
export class BatchProgressView {
  private readonly bars?: MultiBar;
  private readonly bar?: SingleBar;
  private readonly ticker?: NodeJS.Timeout;
  private readonly tty: boolean;
  private readonly askWaits?: () => Promise<MessageBatchWait[]>;
  private waitingShown = '';
  private waits: MessageBatchWait[] = [];
  private waitsShown = '';
  private waitsAskedAt = -Infinity;
  private asking = false;
  private stopped = false;
  /** Without a terminal: the last progress line printed. */
  private lastLine = '';

  /** @param standing where the batch stands now; asked on every update and every tick. */
  constructor(
    private readonly name: string,
    private readonly standing: () => BatchStanding,
    opts: BatchProgressViewOptions = {},
  ) {
    this.tty = opts.tty ?? Boolean(process.stderr.isTTY);
    this.askWaits = opts.messageBatchWaits;
    const s = standing();
    if (this.tty) {
      this.bars = new MultiBar(
        {
          format: 'batch {bar} {value}/{total} · {outcomes} · {running} running{waiting} · {rate}/s{etaLeft}',
          hideCursor: true,
        },
        Presets.shades_classic,
      );
      this.bar = this.bars.create(s.total, s.done, this.payload(s));
    } else {
      this.ticker = setInterval(() => this.tick(), PROGRESS_LINE_EVERY_MS);
      this.ticker.unref();
    }
  }

  /** Without a terminal: the progress line, then where the turns wait for Message Batches. */
  private tick(): void {
    const s = this.standing();
    this.lastLine = progressLine(this.name, s, this.etaSeconds(s));
    console.error(this.lastLine);
    for (const line of this.waitLines(s)) console.error(line);
    this.refreshWaits();
  }

  /** The last answer's lines; none once no turn waits (the answer may be older than that). */
  private waitLines(s: BatchStanding): string[] {
    if (!s.waitingMessageBatch) return [];
    const now = Date.now();
    return this.waits.map((w) => `batch ${this.name}: ${messageBatchLine(w, now)}`);
  }

  /** Asks where the turns wait, unless an ask is under way or the last began less than the interval ago. */
  private refreshWaits(): void {
    if (!this.askWaits || this.asking || this.stopped || Date.now() - this.waitsAskedAt < MESSAGE_BATCHES_ASK_EVERY_MS) return;
    this.asking = true;
    this.waitsAskedAt = Date.now();
    this.askWaits()
      .then(
        (waits) => {
          this.waits = waits;
          if (this.tty) this.logChangedWaits();
        },
        () => undefined, // asked again after the interval; the last answer stays shown
      )
      .finally(() => (this.asking = false));
  }

  /** On a terminal: the wait lines above the bar, when a count or a Message Batch changed. */
  private logChangedWaits(): void {
    const s = this.standing();
    const shown = s.waitingMessageBatch ? waitsKey(this.waits) : '';
    if (shown === this.waitsShown) return;
    this.waitsShown = shown;
    for (const line of this.waitLines(s)) this.log(line);
  }

  /**
   * The time left: through Message Batches, from the last answer of where the turns wait (none
   * while no turn waits for one); otherwise at this run's rate.
   */
  private etaSeconds(s: BatchStanding): number | undefined {
    if (!this.askWaits) return rateEtaSeconds(s);
    return s.waitingMessageBatch && s.done < s.total ? messageBatchEtaSeconds(this.waits) : undefined;
  }

  private payload(s: BatchStanding): Record<string, string | number> {
    const left = etaPart(this.etaSeconds(s));
    const waiting = waitingParts(s);
    return {
      outcomes: outcomeParts(s).join(' · '),
      running: s.running ?? 0,
      waiting: waiting.length ? ` (${waiting.join(', ')})` : '',
      rate: s.ratePerSecond.toFixed(1),
      etaLeft: left ? ` · ${left}` : '',
    };
  }

  /** Called with each progress of the batch workflow (and after each result). */
  update(p?: BatchProgress): void {
    if (this.stopped) return;
    const s = this.standing();
    this.bar?.update(s.done, this.payload(s));
    this.refreshWaits();
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

  /**
   * Ends the bar (showing its last state and any line logged last) or the progress lines (with a
   * last one when the batch moved since the one before, so it counts every result written); idempotent.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.ticker) {
      clearInterval(this.ticker);
      const s = this.standing();
      const line = progressLine(this.name, s, this.etaSeconds(s));
      if (line !== this.lastLine) console.error(line);
    }
    if (this.bars) {
      this.bars.update(); // prints the lines logged since its last redraw
      this.bars.stop();
    }
  }
}
