import { costOf, DEFAULT_PRICES, makePriceTable } from '../../src/claude/pricing';
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
    expect(DEFAULT_PRICES['claude-opus-4-1']).toEqual({ input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5 });
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
    expect(table.lookup('tool-loop')?.price).toEqual({ input: 1, output: 2, cacheWrite: 1.25, cacheRead: 0.1 });
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
