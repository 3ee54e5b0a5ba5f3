/**
 * A circuit breaker per MCP server. Only transport failures and timeouts count: a tool's `isError`
 * result proves the server is alive (counting it opens circuits on healthy servers).
 *
 *   closed --N consecutive failures--> open --cooldown--> half-open --probe succeeds--> closed
 *                                        ^                    |
 *                                        +---probe fails------+  (cooldown doubles, up to a max)
 *
 * In half-open exactly one probe call is let through at a time. The clock is injectable for tests.
 */

/** Where the circuit stands. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** Thresholds (see the config's `breaker` section). */
export interface BreakerOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** Wait before the first probe. */
  cooldownMs: number;
  /** Longest wait between probes (the cooldown doubles per failed probe up to this). */
  maxCooldownMs: number;
}

/** The answer to "may I call?": a ticket to report back with, or why not and for how long. */
export type BreakerDecision =
  { allowed: true; probe: boolean } | { allowed: false; state: 'open' | 'half-open'; retryInMs: number };

/** One state change, for logs and metrics. */
export interface BreakerTransition {
  from: BreakerState;
  to: BreakerState;
  consecutiveFailures: number;
  /** Wait before the next probe, when opening. */
  cooldownMs?: number;
}

/** See the file comment. */
export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private cooldown: number;
  private probing = false;
  /** Times the circuit opened. */
  opens = 0;
  /** State changes so far. */
  transitions = 0;

  constructor(
    readonly opts: BreakerOptions,
    private readonly onTransition: (t: BreakerTransition) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.cooldown = opts.cooldownMs;
  }

  /** The state now (an open circuit whose cooldown has passed reads as half-open). */
  get state(): BreakerState {
    if (this.current === 'open' && this.now() >= this.openedAt + this.cooldown) this.move('half-open');
    return this.current;
  }

  /** Transport failures since the last success. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** When the next probe may go through (epoch ms) while open; undefined otherwise. */
  get nextProbeAt(): number | undefined {
    return this.state === 'open' ? this.openedAt + this.cooldown : undefined;
  }

  /** Asks to make a call. Report its outcome with the returned `probe` flag. */
  request(): BreakerDecision {
    const state = this.state;
    if (state === 'closed') return { allowed: true, probe: false };
    if (state === 'half-open') {
      if (!this.probing) {
        this.probing = true;
        return { allowed: true, probe: true };
      }
      return { allowed: false, state, retryInMs: 0 };
    }
    return { allowed: false, state, retryInMs: Math.max(0, this.openedAt + this.cooldown - this.now()) };
  }

  /** The server answered (any answer, an `isError` result included). */
  onSuccess(): void {
    this.failures = 0;
    this.probing = false;
    this.cooldown = this.opts.cooldownMs;
    if (this.current !== 'closed') this.move('closed');
  }

  /** A transport failure or timeout. `probe`: the call was the half-open probe. */
  onFailure(probe = false): void {
    this.failures++;
    if (probe) {
      this.probing = false;
      this.cooldown = Math.min(this.cooldown * 2, this.opts.maxCooldownMs);
      this.open();
    } else if (this.current === 'closed' && this.failures >= this.opts.failureThreshold) {
      this.open();
    }
    // A late failure of a call started before the circuit opened changes nothing more.
  }

  /** A call let through ended without a verdict (cancelled, refused before reaching the server). */
  onAbandon(probe = false): void {
    if (probe) this.probing = false;
  }

  private open(): void {
    this.openedAt = this.now();
    this.opens++;
    this.move('open');
  }

  private move(to: BreakerState): void {
    const from = this.current;
    if (from === to) return;
    this.current = to;
    this.transitions++;
    this.onTransition({
      from,
      to,
      consecutiveFailures: this.failures,
      ...(to === 'open' ? { cooldownMs: this.cooldown } : {}),
    });
  }
}
