/** The per-server circuit breaker, on an injected clock. */
import { CircuitBreaker, type BreakerTransition } from '../../src/mcp';

function breaker() {
  let now = 0;
  const transitions: BreakerTransition[] = [];
  const b = new CircuitBreaker(
    { failureThreshold: 3, cooldownMs: 1000, maxCooldownMs: 3000 },
    (t) => transitions.push(t),
    () => now,
  );
  const names = (): string[] => transitions.map((t) => `${t.from}->${t.to}`);
  return { b, transitions, names, advance: (ms: number) => (now += ms) };
}

it('opens after N consecutive failures and refuses at once while open', () => {
  const { b, names, advance } = breaker();
  b.onFailure();
  b.onFailure();
  b.onSuccess(); // a success resets the count
  b.onFailure();
  b.onFailure();
  expect(b.state).toBe('closed');
  expect(b.consecutiveFailures).toBe(2);
  b.onFailure();
  expect(b.state).toBe('open');
  expect(b.request()).toEqual({ allowed: false, state: 'open', retryInMs: 1000 });
  advance(400);
  expect(b.request()).toEqual({ allowed: false, state: 'open', retryInMs: 600 });
  expect(b.nextProbeAt).toBe(1000);
  expect(names()).toEqual(['closed->open']);
  expect(b.opens).toBe(1);
});

it('half-opens after the cooldown, lets one probe through at a time, and closes on success', () => {
  const { b, advance, names } = breaker();
  for (let i = 0; i < 3; i++) b.onFailure();
  advance(1000);
  expect(b.state).toBe('half-open');
  expect(b.nextProbeAt).toBeUndefined();
  expect(b.request()).toEqual({ allowed: true, probe: true });
  expect(b.request()).toEqual({ allowed: false, state: 'half-open', retryInMs: 0 }); // only one probe at a time
  b.onSuccess();
  expect(b.state).toBe('closed');
  expect(b.consecutiveFailures).toBe(0);
  expect(b.request()).toEqual({ allowed: true, probe: false });
  expect(names()).toEqual(['closed->open', 'open->half-open', 'half-open->closed']);
  expect(b.transitions).toBe(3);
});

it('doubles the cooldown on each failed probe, up to the maximum, and resets it on success', () => {
  const { b, advance, transitions } = breaker();
  for (let i = 0; i < 3; i++) b.onFailure();
  for (const expected of [2000, 3000, 3000]) {
    advance(expected === 2000 ? 1000 : 3000);
    const probe = b.request();
    expect(probe).toEqual({ allowed: true, probe: true });
    b.onFailure(true);
    expect(b.state).toBe('open');
    expect(b.request()).toEqual({ allowed: false, state: 'open', retryInMs: expected });
  }
  expect(b.opens).toBe(4);
  expect(transitions.filter((t) => t.to === 'open').map((t) => t.cooldownMs)).toEqual([
    1000, 2000, 3000, 3000,
  ]);
  advance(3000);
  expect(b.request()).toEqual({ allowed: true, probe: true });
  b.onSuccess();
  for (let i = 0; i < 3; i++) b.onFailure();
  expect(b.request()).toEqual({ allowed: false, state: 'open', retryInMs: 1000 });
});

it('ignores late failures of calls started before the circuit opened, and frees an abandoned probe', () => {
  const { b, advance, names } = breaker();
  for (let i = 0; i < 3; i++) b.onFailure();
  b.onFailure(); // a straggler: still open, cooldown unchanged
  expect(b.request()).toEqual({ allowed: false, state: 'open', retryInMs: 1000 });
  advance(1000);
  expect(b.request()).toEqual({ allowed: true, probe: true });
  b.onFailure(); // not the probe: half-open stays, the probe still decides
  expect(b.state).toBe('half-open');
  b.onAbandon(true); // the probe was cancelled: the next call may probe
  expect(b.request()).toEqual({ allowed: true, probe: true });
  expect(names()).toEqual(['closed->open', 'open->half-open']);
});
