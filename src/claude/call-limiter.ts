/**
 * The cap on Claude calls one worker process runs at once (`claude.maxConcurrentCalls`), across
 * both queues a call can arrive on (src/core/task-queues.ts): the Claude queue's worker has that
 * many activity slots, but a call on the turn's queue takes one of the turn worker's slots, so the
 * cap is kept here too. A call over the cap waits, in arrival order, while its activity heartbeats;
 * a cancelled call leaves the line.
 */
export class CallLimiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  /** Calls running now. */
  get active(): number {
    return this.running;
  }

  /** Calls waiting for one of the running ones to end. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `fn` once fewer than `limit` calls run; rejects with the signal's reason if it aborts first. */
  async run<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const admit = (): void => {
        signal?.removeEventListener('abort', leave);
        this.running++;
        resolve();
      };
      const leave = (): void => {
        const at = this.waiting.indexOf(admit);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', leave, { once: true });
      this.waiting.push(admit);
    });
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}
