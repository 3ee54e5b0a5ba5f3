/**
 * The usage ledger's rules (src/core/usage-ledger.ts): a slot per turn in flight up to the limit,
 * the tokens of ended turns counted per UTC day, a request sent again never counted twice, stale
 * slots found for repair, and its state carried whole across continue-as-new.
 */
import { messageSlot, secondsToUtcMidnight, UsageLedger, usageLedgerId, utcDay } from '../../src/core/usage-ledger';

const NOON = Date.UTC(2026, 10, 27, 12, 0, 0);

describe('the usage ledger', () => {
  it('admits up to turnsInFlight, refuses the next with the limit named, and admits again once one is released', () => {
    const ledger = new UsageLedger(undefined, NOON);
    const limits = { turnsInFlight: 2 };
    expect(ledger.admit({ slot: 't1', limits }, NOON)).toEqual({ admitted: true, fresh: true });
    expect(ledger.admit({ slot: 't2', limits }, NOON)).toEqual({ admitted: true, fresh: true });
    expect(ledger.admit({ slot: 't3', limits }, NOON)).toEqual({
      admitted: false,
      limit: 'turnsInFlight',
      retryAfterSeconds: 5,
      message: 'limit turnsInFlight: 2 of 2 turns in flight: retry when one ends',
    });
    ledger.release({ slot: 't1', tokens: 10 }, NOON + 1000);
    expect(ledger.admit({ slot: 't3', limits }, NOON + 2000)).toEqual({ admitted: true, fresh: true });
    expect(ledger.inFlight).toBe(2);
  });

  it('counts the tokens of ended turns per UTC day, refuses past tokensPerDay until midnight, and starts afresh the next day', () => {
    const ledger = new UsageLedger(undefined, NOON);
    const limits = { tokensPerDay: 100 };
    ledger.admit({ slot: 'a', limits }, NOON);
    ledger.release({ slot: 'a', tokens: 120 }, NOON + 1000);
    expect(ledger.admit({ slot: 'b', limits }, NOON + 2000)).toEqual({
      admitted: false,
      limit: 'tokensPerDay',
      retryAfterSeconds: 12 * 3600 - 2,
      message: 'limit tokensPerDay: 120 of 100 tokens used today (UTC): retry after midnight UTC',
    });
    const tomorrow = NOON + 12 * 3600 * 1000;
    expect(ledger.admit({ slot: 'b', limits }, tomorrow)).toEqual({ admitted: true, fresh: true });
    expect(ledger.summary(tomorrow)).toEqual({ day: '2026-11-28', tokensToday: 0, inFlight: 1 });
  });

  it('never counts a slot twice: held or released before, it is admitted again, not fresh; a second release adds nothing', () => {
    const ledger = new UsageLedger(undefined, NOON);
    const limits = { turnsInFlight: 1, tokensPerDay: 1000 };
    ledger.admit({ slot: 'm', limits }, NOON);
    expect(ledger.admit({ slot: 'm', limits }, NOON)).toEqual({ admitted: true, fresh: false });
    ledger.release({ slot: 'm', tokens: 50 }, NOON);
    ledger.release({ slot: 'm', tokens: 50 }, NOON);
    expect(ledger.admit({ slot: 'm', limits }, NOON)).toEqual({ admitted: true, fresh: false });
    expect(ledger.summary(NOON)).toEqual({ day: '2026-11-27', tokensToday: 50, inFlight: 0 });
  });

  it('names the slots held longer than the stale age, and frees them without tokens', () => {
    const ledger = new UsageLedger(undefined, NOON);
    ledger.admit({ slot: 'old', limits: {} }, NOON);
    ledger.admit({ slot: 'new', limits: {} }, NOON + 50_000);
    expect(ledger.staleSlots(NOON + 60_000, 60_000)).toEqual(['old']);
    ledger.free(['old']);
    expect(ledger.summary(NOON + 60_000)).toEqual({ day: '2026-11-27', tokensToday: 0, inFlight: 1 });
  });

  it('carries its state whole into a new run', () => {
    const ledger = new UsageLedger(undefined, NOON);
    ledger.admit({ slot: 'x', limits: {} }, NOON);
    ledger.admit({ slot: 'y', limits: {} }, NOON);
    ledger.release({ slot: 'y', tokens: 7 }, NOON);
    const next = new UsageLedger(ledger.state(), NOON + 1000);
    expect(next.summary(NOON + 1000)).toEqual({ day: '2026-11-27', tokensToday: 7, inFlight: 1 });
    expect(next.admit({ slot: 'y', limits: { turnsInFlight: 1 } }, NOON + 1000)).toEqual({ admitted: true, fresh: false });
  });

  it('names ledgers, slots and days', () => {
    expect(usageLedgerId('oKEY')).toBe('mcp-turns-usage-oKEY');
    expect(messageSlot('conv-1', 'msg-2')).toBe('conv-1/msg-2');
    expect(utcDay(NOON)).toBe('2026-11-27');
    expect(secondsToUtcMidnight(Date.UTC(2026, 10, 27, 23, 59, 59, 500))).toBe(1);
  });
});
