import { CallLimiter } from '../../src/claude/call-limiter';
import { claudeCallQueue } from '../../src/core/task-queues';

/** A call that ends when its `end` is called. */
function pending(): { promise: Promise<string>; end: (v: string) => void } {
  let end!: (v: string) => void;
  const promise = new Promise<string>((resolve) => (end = resolve));
  return { promise, end };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('CallLimiter', () => {
  it('runs at most `limit` calls at once; the others start in arrival order as running ones end', async () => {
    const limiter = new CallLimiter(2);
    const calls = [pending(), pending(), pending(), pending()];
    const started: number[] = [];
    const results = calls.map((c, i) => limiter.run(undefined, () => (started.push(i), c.promise)));
    await tick();
    expect(started).toEqual([0, 1]);
    expect([limiter.active, limiter.queued]).toEqual([2, 2]);
    calls[1]!.end('b');
    await tick();
    expect(started).toEqual([0, 1, 2]);
    calls[0]!.end('a');
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    calls[2]!.end('c');
    calls[3]!.end('d');
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
  });

  it('a failed call frees its place', async () => {
    const limiter = new CallLimiter(1);
    await expect(limiter.run(undefined, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limiter.run(undefined, () => Promise.resolve('next'))).toBe('next');
  });

  it('a waiting call whose signal aborts leaves the line with the reason and never runs; one aborted before it asks never waits', async () => {
    const limiter = new CallLimiter(1);
    const first = pending();
    const running = limiter.run(undefined, () => first.promise);
    const abort = new AbortController();
    let ran = false;
    const waiting = limiter.run(abort.signal, async () => (ran = true, 'never'));
    await tick();
    expect(limiter.queued).toBe(1);
    abort.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    expect(limiter.queued).toBe(0);
    await expect(limiter.run(abort.signal, async () => 'never')).rejects.toThrow('cancelled');
    first.end('done');
    expect(await running).toBe('done');
    expect([ran, limiter.active]).toEqual([false, 0]);
  });
});

describe('claudeCallQueue', () => {
  it("names the turn's own queue for an unstreamed call of a worker without a rate cap across the queue, else the Claude queue", () => {
    expect(claudeCallQueue('q', { onTurnQueue: true, streamed: false })).toBe('q');
    expect(claudeCallQueue('q', { onTurnQueue: true, streamed: true })).toBe('q-claude');
    expect(claudeCallQueue('q', { onTurnQueue: false, streamed: false })).toBe('q-claude');
  });
});
