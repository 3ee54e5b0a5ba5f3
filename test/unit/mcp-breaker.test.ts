import { CircuitBreaker } from '../../src/mcp';

function breaker() {
  let now = 0;
  const transitions: string[] = [];
  const b = new CircuitBreaker({ failureThreshold: 3, cooldownMs: 1000, maxCooldownMs: 3000 }, (t) => transitions.push(`${t.from}->${t.to}`), () => now);
  return { b, transitions, advance: (ms: number) => (now += ms) };
}

it('opens after N consecutive failures and refuses at once while open', () => {
  const { b, transitions } = breaker();
  b.onFailure();
  b.onFailure();
  b.onSuccess(); // a success resets the count
  b.onFailure();
  b.onFailure();
  expect(b.state).toBe('closed');
  b.onFailure();
  expect(b.state).toBe('open');
  expect(b.request()).toEqual({ allowed: false, retryInMs: 1000 });
  expect(transitions).toEqual(['closed->open']);
});

it('half-opens after the cooldown, lets one probe through, and closes on success', () => {
  const { b, advance, transitions } = breaker();
  for (let i = 0; i < 3; i++) b.onFailure();
  advance(1000);
  expect(b.state).toBe('half-open');
  expect(b.request()).toEqual({ allowed: true, probe: true });
  expect(b.request().allowed).toBe(false); // only one probe at a time
  b.onSuccess();
  expect(b.state).toBe('closed');
  expect(transitions).toEqual(['closed->open', 'open->half-open', 'half-open->closed']);
});

it('doubles the cooldown on a failed probe, up to the maximum', () => {
  const { b, advance } = breaker();
  for (let i = 0; i < 3; i++) b.onFailure();
  for (const expected of [2000, 3000, 3000]) {
    advance(5000);
    expect(b.request()).toEqual({ allowed: true, probe: true });
    b.onFailure();
    expect(b.state).toBe('open');
    expect(b.nextProbeAt! - (b.nextProbeAt! - expected)).toBe(expected);
    expect(b.request()).toEqual({ allowed: false, retryInMs: expected });
  }
  expect(b.opens).toBe(4);
});
