/**
 * One turn's events as this process follows them: one reader of its history and of its running
 * Claude calls' records, shared by every subscriber to the turn on the same client, so a hundred
 * people watching through one process cost the server what one does. The events only grow; the
 * feed stops reading when its last subscriber leaves or the turn's stream has ended.
 *
 * While a subscriber wants them, it also reads the failed attempts of the turn's running activities
 * (retried: Claude unreachable, a tool's server down), each once, from the same describe as the
 * records. They are not events: a later subscriber, or the closed turn's history, no longer has them.
 */
import type { Client } from '@temporalio/client';
import type { UnnumberedEvent } from '../core/stream-events';
import type { StreamRecord } from '../core/stream-record';
import { runningActivities, runningClaudeCalls, type RunningActivity, type TurnFact } from './turn-facts';
import { TurnHistory } from './turn-history';
import { projectTurn } from './turn-projection';

/** How soon a Claude call that has published nothing yet is looked at again. */
const FIRST_LOOK_MS = 150;

/**
 * How often a turn whose failed attempts are wanted is described while an activity runs: half a
 * Claude call's first retry interval (1 s), so each failed attempt is seen before the next.
 */
export const FAILING_CALLS_EVERY_MS = 500;

export class TurnFeed {
  /** The turn's events so far, in order; the index is the offset in the turn. */
  readonly events: UnnumberedEvent[] = [];
  /** The lines of the failed attempts read so far (each attempt once), while any subscriber wants them. */
  readonly failing: string[] = [];
  ended = false;
  failure: unknown;
  private readonly history: TurnHistory;
  private readonly facts: TurnFact[] = [];
  private live = new Map<string, StreamRecord>();
  private wake: (() => void) | undefined;
  private changedAt = signal();
  private subscribers = 0;
  private failureWatchers = 0;
  private readonly failingSeen = new Set<string>();
  private following = false;

  constructor(
    client: Client,
    readonly workflowId: string,
    runId: string,
    private readonly pollMs: number,
    private readonly onIdle: () => void,
  ) {
    this.history = new TurnHistory(client, workflowId, runId);
  }

  /** Adds a subscriber (one that wants the failed attempts too, with `failingCalls`); the returned function removes it. */
  join({ failingCalls = false }: { failingCalls?: boolean } = {}): () => void {
    this.subscribers++;
    if (failingCalls) this.failureWatchers++;
    if (!this.following && !this.ended) void this.follow();
    else if (failingCalls) this.wake?.(); // the next look may come sooner now
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.subscribers--;
      if (failingCalls) this.failureWatchers--;
      this.wake?.();
    };
  }

  /** Resolves when events are added or the feed has ended. */
  changed(): Promise<void> {
    return this.changedAt.promise;
  }

  private async follow(): Promise<void> {
    this.following = true;
    // The long poll is given up when the feed stops, so nothing outlives the last subscriber.
    const stopped = new AbortController();
    let pendingFacts: Promise<TurnFact[]> | undefined;
    try {
      for (;;) {
        this.project();
        if (this.ended || this.subscribers === 0) break;
        pendingFacts ??= this.history.next(stopped.signal);
        const woken = new Promise<undefined>((resolve) => (this.wake = () => resolve(undefined)));
        const running = runningActivities(this.facts);
        const lookMs = this.nextLookMs(running);
        const timer = lookMs !== undefined ? sleep(lookMs) : undefined;
        const arrived = await Promise.race([pendingFacts, woken, ...(timer ? [timer] : [])]);
        this.wake = undefined;
        if (arrived) {
          this.facts.push(...arrived);
          pendingFacts = undefined;
          if (!runningClaudeCalls(this.facts).size) this.live = new Map();
        } else if (timer && this.subscribers > 0) {
          const look = await this.history.running();
          this.live = look.records;
          this.addFailing(look.failing);
        }
      }
    } catch (err) {
      this.failure = err;
      this.ended = true;
    }
    stopped.abort();
    this.following = false;
    this.onIdle();
    this.notify();
  }

  /**
   * When the running activities are described next: a streamed Claude call soon after it starts
   * (its first delta is published at once), then at the pace it publishes; any running activity
   * (and a failing workflow task) every {@link FAILING_CALLS_EVERY_MS} while failed attempts are
   * wanted; else not at all.
   */
  private nextLookMs(running: ReadonlyMap<string, RunningActivity>): number | undefined {
    const looks: number[] = [];
    const streaming = [...running].filter(([, a]) => a.streams);
    if (streaming.length) looks.push(streaming.some(([id]) => this.live.has(id)) ? this.pollMs : FIRST_LOOK_MS);
    if ((running.size || this.history.taskFailure !== undefined) && this.failureWatchers > 0) looks.push(FAILING_CALLS_EVERY_MS);
    return looks.length ? Math.min(...looks) : undefined;
  }

  private addFailing(attempts: readonly { key: string; line: string }[]): void {
    let added = false;
    for (const { key, line } of attempts) {
      if (this.failingSeen.has(key)) continue;
      this.failingSeen.add(key);
      this.failing.push(line);
      added = true;
    }
    if (added) this.notify();
  }

  private project(): void {
    const events = projectTurn({ facts: this.facts, live: this.live });
    if (events.length > this.events.length) {
      this.events.push(...events.slice(this.events.length));
      this.notify();
    }
    const last = this.events[this.events.length - 1];
    if (last?.type === 'finish' || (this.history.closed && this.facts.some((f) => f.kind === 'closed'))) {
      this.ended = true;
      this.notify();
    }
  }

  private notify(): void {
    this.changedAt.resolve();
    this.changedAt = signal();
  }
}

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function sleep(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}
