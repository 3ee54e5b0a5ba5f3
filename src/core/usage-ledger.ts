/**
 * One caller's usage, counted in Temporal: a ledger workflow per owner (id
 * `mcp-turns-usage-<owner key>`) holds the slots of their turns in flight and the tokens their
 * turns used today (UTC). `serve` asks it to admit each turn it starts (an update: the ledger
 * answers every process alike, so several `serve` processes share one count) and the turn releases
 * its slot at its end with the tokens it used (a signal).
 *
 * What the limits guarantee:
 * - `turnsInFlight`: admissions are decided one at a time by the one ledger, so a caller never holds
 *   more slots than the limit, whichever process asks. A turn that ended without releasing its slot
 *   (terminated, timed out) keeps it until the ledger finds it gone: when a caller is refused for
 *   this limit and holds a slot older than the stale age, the ledger lists the caller's running
 *   turns and frees the slots none of them holds.
 * - `tokensPerDay`: a turn is admitted while the tokens of the turns that ended today are under the
 *   limit; the turns in flight when it is reached still finish, so a day may end over it by what
 *   they use.
 *
 * Sandbox-safe: the rules here are pure; time is the caller's (the workflow clock).
 */

/** The limits a caller's turns are admitted under; an absent one is no limit. */
export interface UsageLimits {
  turnsInFlight?: number;
  tokensPerDay?: number;
}

export type LimitName = keyof UsageLimits;

/** What `serve` asks the ledger: a slot for one turn (its workflow id, or `<conversation>/<message id>`). */
export interface AdmitRequest {
  slot: string;
  limits: UsageLimits;
}

export type Admission =
  /** `fresh`: the slot was taken now (not held or released before). */
  | { admitted: true; fresh: boolean }
  | { admitted: false; limit: LimitName; retryAfterSeconds: number; message: string };

/** What a turn tells its owner's ledger at its end. */
export interface SlotRelease {
  slot: string;
  /** Every token the turn's Claude calls used (input, cache included, and output). */
  tokens: number;
}

/** The ledger's state, carried across continue-as-new. */
export interface LedgerState {
  /** The UTC day `tokensToday` counts (YYYY-MM-DD). */
  day: string;
  tokensToday: number;
  /** Slots held: the slot and when it was admitted (epoch ms). */
  held: Array<[slot: string, since: number]>;
  /** The slots released lately: a late admission of one (a request sent again) is not counted again. */
  released: string[];
}

/** What the ledger's query answers. */
export interface UsageSummary {
  day: string;
  tokensToday: number;
  inFlight: number;
}

/** The one line that refuses an admission while the ledger continues as new: the client asks again. */
export const LEDGER_CONTINUING = 'the ledger is continuing as new: ask again';

/** The memo key under which a turn names the slot it holds. */
export const USAGE_SLOT_MEMO = 'usageSlot';
/** The workflow type of the ledger. */
export const USAGE_LEDGER_WORKFLOW = 'usageLedger';
/** How many released slots a ledger remembers. */
const RELEASED_REMEMBERED = 1000;
/** A caller at `turnsInFlight` is told to retry after this long: a slot frees when a turn ends. */
const IN_FLIGHT_RETRY_SECONDS = 5;

/** The ledger workflow's id of the owner with key `ownerKey`. */
export function usageLedgerId(ownerKey: string): string {
  return `mcp-turns-usage-${ownerKey}`;
}

/** The slot of a conversation's message. */
export function messageSlot(conversationId: string, messageId: string): string {
  return `${conversationId}/${messageId}`;
}

/** The UTC day of `nowMs` (YYYY-MM-DD). */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/** Seconds from `nowMs` to the next UTC midnight (at least 1). */
export function secondsToUtcMidnight(nowMs: number): number {
  const now = new Date(nowMs);
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - nowMs) / 1000));
}

export class UsageLedger {
  private day: string;
  private tokensToday: number;
  private readonly held: Map<string, number>;
  private readonly released: Set<string>;

  constructor(state: LedgerState | undefined, nowMs: number) {
    this.day = state?.day ?? utcDay(nowMs);
    this.tokensToday = state?.tokensToday ?? 0;
    this.held = new Map(state?.held ?? []);
    this.released = new Set(state?.released ?? []);
  }

  /** Admits `request` now, or says which limit refuses it. A slot held or released already is admitted again, uncounted. */
  admit({ slot, limits }: AdmitRequest, nowMs: number): Admission {
    this.rollDay(nowMs);
    if (this.held.has(slot) || this.released.has(slot)) return { admitted: true, fresh: false };
    if (limits.tokensPerDay !== undefined && this.tokensToday >= limits.tokensPerDay) {
      return {
        admitted: false,
        limit: 'tokensPerDay',
        retryAfterSeconds: secondsToUtcMidnight(nowMs),
        message: `limit tokensPerDay: ${this.tokensToday} of ${limits.tokensPerDay} tokens used today (UTC): retry after midnight UTC`,
      };
    }
    if (limits.turnsInFlight !== undefined && this.held.size >= limits.turnsInFlight) {
      return {
        admitted: false,
        limit: 'turnsInFlight',
        retryAfterSeconds: IN_FLIGHT_RETRY_SECONDS,
        message: `limit turnsInFlight: ${this.held.size} of ${limits.turnsInFlight} turns in flight: retry when one ends`,
      };
    }
    this.held.set(slot, nowMs);
    return { admitted: true, fresh: true };
  }

  /** Frees a turn's slot and counts its tokens today. A slot released twice counts once. */
  release({ slot, tokens }: SlotRelease, nowMs: number): void {
    this.rollDay(nowMs);
    if (this.released.has(slot)) return;
    this.held.delete(slot);
    this.remember(slot);
    if (Number.isFinite(tokens) && tokens > 0) this.tokensToday += tokens;
  }

  /** The slots held since before `nowMs - ageMs`: those a missing release may have left held. */
  staleSlots(nowMs: number, ageMs: number): string[] {
    return [...this.held].filter(([, since]) => since <= nowMs - ageMs).map(([slot]) => slot);
  }

  /** Frees `slots` without tokens (their turns ended without saying so). */
  free(slots: readonly string[]): void {
    for (const slot of slots) {
      if (this.held.delete(slot)) this.remember(slot);
    }
  }

  get inFlight(): number {
    return this.held.size;
  }

  summary(nowMs: number): UsageSummary {
    this.rollDay(nowMs);
    return { day: this.day, tokensToday: this.tokensToday, inFlight: this.held.size };
  }

  state(): LedgerState {
    return { day: this.day, tokensToday: this.tokensToday, held: [...this.held], released: [...this.released] };
  }

  private rollDay(nowMs: number): void {
    const today = utcDay(nowMs);
    if (today !== this.day) {
      this.day = today;
      this.tokensToday = 0;
    }
  }

  private remember(slot: string): void {
    this.released.add(slot);
    if (this.released.size > RELEASED_REMEMBERED) this.released.delete(this.released.values().next().value!);
  }
}
