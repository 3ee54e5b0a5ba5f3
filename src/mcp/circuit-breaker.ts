/**
 * A circuit breaker per MCP server. Only transport failures and timeouts count: a tool's `isError`
 * result proves the server is alive. closed → open after N consecutive failures → half-open (one
 * probe) after a cooldown that doubles with each failed probe → closed on a success.
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

export type BreakerDecision = { allowed: true; probe: boolean } | { allowed: false; retryInMs: number };

export interface BreakerTransition {
  from: BreakerState;
  to: BreakerState;
  consecutiveFailures: number;
}

export class CircuitBreaker {
  private _state: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private cooldown: number;
  private probing = false;
  /** Times the circuit opened. */
  opens = 0;

  constructor(
    readonly opts: BreakerOptions,
    private readonly onTransition: (t: BreakerTransition) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.cooldown = opts.cooldownMs;
  }

  get state(): BreakerState {
    if (this._state === 'open' && this.now() >= this.openedAt + this.cooldown) this.move('half-open');
    return this._state;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** When the next probe may go through (open), else undefined. */
  get nextProbeAt(): number | undefined {
    return this._state === 'open' ? this.openedAt + this.cooldown : undefined;
  }

  /** Asks to make a call. In half-open only one probe is let through at a time. */
  request(): BreakerDecision {
    const state = this.state;
    if (state === 'closed') return { allowed: true, probe: false };
    if (state === 'half-open' && !this.probing) {
      this.probing = true;
      return { allowed: true, probe: true };
    }
    const retryInMs = state === 'open' ? this.openedAt + this.cooldown - this.now() : this.cooldown;
    return { allowed: false, retryInMs: Math.max(0, retryInMs) };
  }

  onSuccess(): void {
    this.failures = 0;
    this.probing = false;
    this.cooldown = this.opts.cooldownMs;
    if (this._state !== 'closed') this.move('closed');
  }

  onFailure(): void {
    this.failures++;
    if (this._state === 'half-open' || this.probing) {
      this.probing = false;
      this.cooldown = Math.min(this.cooldown * 2, this.opts.maxCooldownMs);
      this.open();
    } else if (this._state === 'closed' && this.failures >= this.opts.failureThreshold) {
      this.open();
    }
  }

  /** A call let through that ended without telling anything (e.g. cancelled). */
  onAbandon(): void {
    this.probing = false;
  }

  private open(): void {
    this.openedAt = this.now();
    this.opens++;
    this.move('open');
  }

  private move(to: BreakerState): void {
    const from = this._state;
    if (from === to && to !== 'open') return;
    this._state = to;
    this.onTransition({ from, to, consecutiveFailures: this.failures });
  }
}
