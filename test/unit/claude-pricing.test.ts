import { costOf, DEFAULT_PRICES, makePriceTable, MESSAGE_BATCH_PRICE_FACTOR } from '../../src/claude/pricing';
import type { TokenUsage } from '../../src/core/usage';

const million = (over: Partial<TokenUsage> = {}): TokenUsage => ({
  inputTokens: 1_000_000,
  outputTokens: 1_000_000,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  ...over,
});

describe('pricing', () => {
  it('prices known models by exact id', () => {
    expect(costOf(million(), 'claude-sonnet-4-5')).toEqual({ usd: 18, known: true, priceKey: 'claude-sonnet-4-5' });
    expect(costOf(million(), 'claude-opus-4-1').usd).toBe(90);
    expect(costOf(million(), 'claude-opus-4-5').usd).toBe(30);
    expect(costOf(million(), 'claude-haiku-4-5').usd).toBe(6);
    expect(costOf(million(), 'claude-3-5-haiku').usd).toBe(4.8);
  });

  it('charges cache writes at 1.25x and reads at 0.1x input by default', () => {
    const usage = million({ inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 1_000_000, cacheReadInputTokens: 1_000_000 });
    expect(costOf(usage, 'claude-sonnet-4-6').usd).toBeCloseTo(3.75 + 0.3, 10);
    expect(DEFAULT_PRICES['claude-opus-4-1']).toEqual({ input: 15, output: 75, cacheWrite: 18.75, cacheWrite1h: 30, cacheRead: 1.5 });
  });

  describe('cache writes by TTL', () => {
    const writes = (total: number, oneHour?: number): TokenUsage => ({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: total,
      ...(oneHour !== undefined ? { cacheCreation1hInputTokens: oneHour } : {}),
    });

    it('prices 5-minute writes at 1.25x and 1-hour writes at 2x input', () => {
      expect(costOf(writes(1_000_000), 'claude-sonnet-4-6').usd).toBeCloseTo(3.75, 10);
      expect(costOf(writes(1_000_000, 1_000_000), 'claude-sonnet-4-6').usd).toBeCloseTo(6, 10);
      // 400k of the 1M written for 1 hour, the other 600k for 5 minutes.
      expect(costOf(writes(1_000_000, 400_000), 'claude-sonnet-4-6').usd).toBeCloseTo(0.6 * 3.75 + 0.4 * 6, 10);
    });

    it('keeps the special cases at their 5-minute rates and 2x input for 1 hour', () => {
      expect(DEFAULT_PRICES['claude-fable-5-1']).toEqual({ input: 10, output: 50, cacheWrite: 12.5, cacheWrite1h: 20, cacheRead: 0.25 });
      expect(DEFAULT_PRICES['claude-3-haiku']).toMatchObject({ cacheWrite: 0.3, cacheWrite1h: 0.5 });
      expect(DEFAULT_PRICES['claude-haiku-5-5']?.longPrompt).toMatchObject({ cacheWrite: 0.625, cacheWrite1h: 1 });
    });

    it('prices 1-hour writes at the long-prompt rate above the threshold', () => {
      const long = { ...writes(200_000, 150_000), inputTokens: 1 };
      expect(costOf(long, 'claude-haiku-5-5').usd).toBeCloseTo((0.5 + 50_000 * 0.625 + 150_000 * 1) / 1e6, 10);
    });

    it('prices them at half through Message Batches', () => {
      const usage = { ...writes(1_000_000, 400_000), inputTokens: 1_000_000 };
      const table = makePriceTable();
      const standard = table.costOf(usage, 'claude-sonnet-4-6').usd;
      expect(standard).toBeCloseTo(3 + 0.6 * 3.75 + 0.4 * 6, 10);
      expect(MESSAGE_BATCH_PRICE_FACTOR).toBe(0.5);
      expect(table.costOf(usage, 'claude-sonnet-4-6', { batch: true }).usd).toBeCloseTo(standard / 2, 10);
    });

    it('takes cacheWrite1h from an override, else 2x its input', () => {
      const table = makePriceTable({
        'claude-sonnet-4-6': { input: 4, output: 20, cacheWrite: 5, cacheWrite1h: 7 },
        'claude-opus-4-5': { input: 10, output: 50 },
      });
      expect(table.lookup('claude-sonnet-4-6')?.price).toEqual({ input: 4, output: 20, cacheWrite: 5, cacheWrite1h: 7, cacheRead: 0.4 });
      expect(table.costOf(writes(1_000_000, 400_000), 'claude-sonnet-4-6').usd).toBeCloseTo(0.6 * 5 + 0.4 * 7, 10);
      expect(table.lookup('claude-opus-4-5')?.price).toEqual({ input: 10, output: 50, cacheWrite: 12.5, cacheWrite1h: 20, cacheRead: 1 });
      expect(table.costOf(writes(1_000_000, 400_000), 'claude-opus-4-5').usd).toBeCloseTo(0.6 * 12.5 + 0.4 * 20, 10);
      expect(() => makePriceTable({ m: { input: 1, output: 1, cacheWrite1h: -1 } })).toThrow();
    });
  });

  it('matches dated, Vertex and Bedrock ids by prefix', () => {
    expect(costOf(million(), 'claude-sonnet-4-5-20250929').priceKey).toBe('claude-sonnet-4-5');
    expect(costOf(million(), 'claude-opus-4-1@20250805').priceKey).toBe('claude-opus-4-1');
    expect(costOf(million(), 'us.anthropic.claude-haiku-4-5-20251001-v1:0').priceKey).toBe('claude-haiku-4-5');
    expect(costOf(million(), 'claude-sonnet-4-20250514').priceKey).toBe('claude-sonnet-4');
    expect(costOf(million(), 'claude-3-5-sonnet-latest').priceKey).toBe('claude-3-5-sonnet');
  });

  it('does not let an older version key price a newer minor version', () => {
    // claude-opus-4 is Opus 4.0 ($15/$75); an unknown 4.9 falls back to the family's current price.
    const c = costOf(million(), 'claude-opus-4-9');
    expect(c.known).toBe(true);
    expect(c.priceKey).not.toBe('claude-opus-4');
  });

  it('reports unknown models (the stub scenarios) as unknown and free', () => {
    expect(costOf(million(), 'tool-loop')).toEqual({ usd: 0, known: false });
    expect(costOf(million(), 'gpt-4o')).toEqual({ usd: 0, known: false });
  });

  it('uses the long-prompt tier of Haiku 5.5 above 100k prompt tokens', () => {
    const short = { inputTokens: 100_000, outputTokens: 1000, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
    expect(costOf(short, 'claude-haiku-5-5').usd).toBeCloseTo((100_000 * 0.1 + 1000 * 0.5) / 1e6, 10);
    const long = { ...short, cacheReadInputTokens: 1 };
    expect(costOf(long, 'claude-haiku-5-5').usd).toBeCloseTo((100_000 * 0.5 + 1000 * 2.5 + 0.05) / 1e6, 10);
  });

  it('applies config overrides by exact id and by prefix, before the built-in table', () => {
    const table = makePriceTable({
      'tool-loop': { input: 1, output: 2 },
      'claude-sonnet': { input: 10, output: 20, cacheWrite: 0, cacheRead: 0 },
    });
    expect(table.costOf(million(), 'tool-loop')).toEqual({ usd: 3, known: true, priceKey: 'tool-loop' });
    expect(table.costOf(million({ cacheReadInputTokens: 1_000_000 }), 'claude-sonnet-4-5-20250929')).toEqual({
      usd: 30,
      known: true,
      priceKey: 'claude-sonnet',
    });
    expect(table.costOf(million(), 'claude-haiku-4-5').usd).toBe(6);
    expect(table.lookup('tool-loop')?.price).toEqual({ input: 1, output: 2, cacheWrite: 1.25, cacheWrite1h: 2, cacheRead: 0.1 });
  });

  it('validates overrides', () => {
    expect(() => makePriceTable({ m: { input: -1, output: 1 } })).toThrow();
    expect(() => makePriceTable({ m: { input: 1, output: 1, typo: 1 } as never })).toThrow();
  });

  it('rounds away float noise', () => {
    const usage = { inputTokens: 3, outputTokens: 7, cacheReadInputTokens: 11, cacheCreationInputTokens: 13 };
    const usd = costOf(usage, 'claude-sonnet-4-5').usd;
    expect(usd).toBe(Math.round(usd * 1e8) / 1e8);
  });
});
