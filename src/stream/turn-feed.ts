/**
 * One turn's events as this process follows them: one reader of its history and of its running
 * Claude calls' records, shared by every subscriber to the turn on the same client, so a hundred
 * people watching through one process cost the server what one does. The events only grow; the
 * feed stops reading when its last subscriber leaves or the turn's stream has ended.
 */
import type { Client } from '@temporalio/client';
import type { UnnumberedEvent } from '../core/stream-events';
import type { StreamRecord } from '../core/stream-record';
import { runningClaudeCalls, type TurnFact } from './turn-facts';
import { TurnHistory } from './turn-history';
import { projectTurn } from './turn-projection';

/** How soon a Claude call that has published nothing yet is looked at again. */
const FIRST_LOOK_MS = 150;

export class TurnFeed {
  /** The turn's events so far, in order; the index is the offset in the turn. */
  readonly events: UnnumberedEvent[] = [];
  ended = false;
  failure: unknown;
  private readonly history: TurnHistory;
  private readonly facts: TurnFact[] = [];
  private live = new Map<string, StreamRecord>();
  private wake: (() => void) | undefined;
  private changedAt = signal();
  private subscribers = 0;
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

  /** Adds a subscriber; the returned function removes it. */
  join(): () => void {
    this.subscribers++;
    if (!this.following && !this.ended) void this.follow();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.subscribers--;
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
        // A running call is looked at soon after it starts (its first delta is published at once),
        // then at the pace it publishes.
        const running = runningClaudeCalls(this.facts);
        const published = [...running].some((id) => this.live.has(id));
        const timer = running.size ? sleep(published ? this.pollMs : FIRST_LOOK_MS) : undefined;
        const arrived = await Promise.race([pendingFacts, woken, ...(timer ? [timer] : [])]);
        this.wake = undefined;
        if (arrived) {
          this.facts.push(...arrived);
          pendingFacts = undefined;
          if (!runningClaudeCalls(this.facts).size) this.live = new Map();
        } else if (timer && this.subscribers > 0) {
          this.live = await this.history.liveRecords();
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
