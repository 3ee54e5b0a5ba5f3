/**
 * What a Claude call cost, from a per-model price table. Costs are estimates for the Web UI and the
 * turn result (users ask for per-workflow totals); the invoice is the authority.
 */
import { z } from 'zod';
import { inputTokensOf, type TokenUsage } from '../core/usage';

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** 5-minute cache write. @default 1.25 × input */
  cacheWrite: number;
  /** 1-hour cache write. @default 2 × input */
  cacheWrite1h: number;
  /** Cache read (hit or refresh). @default 0.1 × input */
  cacheRead: number;
  /**
   * Prices that apply instead to every token of a request whose prompt (input + cache reads +
   * cache writes) is longer than `thresholdTokens`.
   */
  longPrompt?: {
    thresholdTokens: number;
    input: number;
    output: number;
    cacheWrite: number;
    cacheWrite1h: number;
    cacheRead: number;
  };
}

const price = (
  input: number,
  output: number,
  cacheWrite = input * 1.25,
  cacheRead = input * 0.1,
  cacheWrite1h = input * 2,
): ModelPrice => ({
  input,
  output,
  cacheWrite,
  cacheWrite1h,
  cacheRead,
});

/**
 * Built-in prices, USD per million tokens, keyed by model id (matched exactly, then as a prefix of
 * dated or platform-suffixed ids). Figures from Anthropic's pricing page
 * (platform.claude.com/docs/en/about-claude/pricing) and model overview pages as of 2026-10;
 * `cacheWrite` is the 5-minute rate, and every 1-hour cache write costs 2 × input. They change:
 * override them with `claude.pricing` in the config file rather than editing here.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  // Fable / Mythos 5.1 cache hits cost 0.025 × input.
  'claude-fable-5-1': price(10, 50, 12.5, 0.25),
  'claude-mythos-5-1': price(10, 50, 12.5, 0.25),
  'claude-fable-5': price(10, 50, 12.5, 1),
  'claude-mythos-5': price(10, 50, 12.5, 1),
  // Opus 5.5 cache hits cost 0.05 × input.
  'claude-opus-5-5': price(4, 20, 5, 0.2),
  'claude-opus-5': price(5, 25),
  'claude-opus-4-8': price(5, 25),
  'claude-opus-4-7': price(5, 25),
  'claude-opus-4-6': price(5, 25),
  'claude-opus-4-5': price(5, 25),
  'claude-opus-4-1': price(15, 75),
  'claude-opus-4-0': price(15, 75),
  'claude-opus-4': price(15, 75),
  'claude-3-opus': price(15, 75),
  // Sonnet 5.5 cache hits cost 0.05 × input.
  'claude-sonnet-5-5': price(2, 10, 2.5, 0.1),
  'claude-sonnet-5': price(2, 10),
  'claude-sonnet-4-6': price(3, 15),
  'claude-sonnet-4-5': price(3, 15),
  'claude-sonnet-4-0': price(3, 15),
  'claude-sonnet-4': price(3, 15),
  'claude-3-7-sonnet': price(3, 15),
  'claude-3-5-sonnet': price(3, 15),
  // Haiku 5.5 is priced by prompt length: above 100k prompt tokens every token costs 5×.
  'claude-haiku-5-5': {
    ...price(0.1, 0.5, 0.125, 0.01),
    longPrompt: { thresholdTokens: 100_000, input: 0.5, output: 2.5, cacheWrite: 0.625, cacheWrite1h: 1, cacheRead: 0.05 },
  },
  'claude-haiku-4-5': price(1, 5),
  'claude-3-5-haiku': price(0.8, 4),
  'claude-3-haiku': price(0.25, 1.25, 0.3, 0.03),
});

/**
 * Fallback by family for Claude ids not in the table (e.g. a new minor version): the price of the
 * current model of that family, so costs are not silently reported as 0 for a real model.
 */
const FAMILY_FALLBACK: ReadonlyArray<readonly [RegExp, string]> = [
  [/^claude-fable/, 'claude-fable-5-1'],
  [/^claude-mythos/, 'claude-mythos-5-1'],
  [/^claude-opus/, 'claude-opus-5-5'],
  [/^claude-sonnet/, 'claude-sonnet-5-5'],
  [/^claude-haiku/, 'claude-haiku-5-5'],
];

/**
 * One override: USD per million tokens; cache prices default to 1.25 × input (5-minute write),
 * 2 × input (1-hour write) and 0.1 × input (read), of the override's own input.
 */
export const ModelPriceOverrideSchema = z
  .object({
    input: z.number().nonnegative(),
    output: z.number().nonnegative(),
    cacheWrite: z.number().nonnegative().optional(),
    cacheWrite1h: z.number().nonnegative().optional(),
    cacheRead: z.number().nonnegative().optional(),
  })
  .strict();

/** `pricing:` in the config: `{ "<model id or prefix>": { input, output, cacheWrite?, cacheWrite1h?, cacheRead? } }`. */
export const PricingOverridesSchema = z.record(z.string().min(1), ModelPriceOverrideSchema);

export type PricingOverrides = z.infer<typeof PricingOverridesSchema>;

/** The cost of one call or a sum of calls. */
export interface Cost {
  usd: number;
  /** False when the model has no price (e.g. the stub's scenario names): `usd` is then 0. */
  known: boolean;
  /** The table key that priced it, for logs. */
  priceKey?: string;
}

/**
 * A web search the API ran for a call: $10 per 1,000 searches, on top of the tokens (its results
 * count as input tokens). Web fetch costs only its tokens. Code execution is billed by container
 * time, which the API's usage does not report: no cost here includes it.
 */
export const WEB_SEARCH_USD = 0.01;

/** What a call answered through the Message Batches API costs, as a share of the standard price. */
export const MESSAGE_BATCH_PRICE_FACTOR = 0.5;

/** How a call was made, where that changes its price. */
export interface CallPricing {
  /** Answered in a Message Batch: every token at {@link MESSAGE_BATCH_PRICE_FACTOR} of its price. */
  batch?: boolean;
}

/** A price table: built-in prices with config overrides on top. */
export interface PriceTable {
  /** The price for a model id, or undefined for an unknown model. */
  lookup(model: string): { key: string; price: ModelPrice } | undefined;
  costOf(usage: TokenUsage, model: string, pricing?: CallPricing): Cost;
}

/**
 * Builds a price table. Overrides are matched first (exactly, then by prefix), so a config entry
 * for a prefix such as `claude-sonnet` wins over the built-in entries under it.
 */
export function makePriceTable(overrides: PricingOverrides = {}): PriceTable {
  const custom: Record<string, ModelPrice> = {};
  for (const [key, o] of Object.entries(PricingOverridesSchema.parse(overrides))) {
    custom[normalizeModelId(key)] = price(o.input, o.output, o.cacheWrite, o.cacheRead, o.cacheWrite1h);
  }

  const lookup = (model: string): { key: string; price: ModelPrice } | undefined => {
    const id = normalizeModelId(model);
    const found = match(custom, id, false) ?? match(DEFAULT_PRICES, id, true);
    if (found) return found;
    for (const [family, key] of FAMILY_FALLBACK) {
      const fallback = DEFAULT_PRICES[key];
      if (family.test(id) && fallback) return { key, price: fallback };
    }
    return undefined;
  };

  return {
    lookup,
    costOf(usage, model, pricing = {}) {
      const found = lookup(model);
      if (!found) return { usd: 0, known: false };
      return { usd: priceUsage(usage, found.price, pricing.batch ? MESSAGE_BATCH_PRICE_FACTOR : 1), known: true, priceKey: found.key };
    },
  };
}

/** The table without overrides. */
export const DEFAULT_PRICE_TABLE: PriceTable = makePriceTable();

/** Cost of `usage` on `model` from `table` (default: the built-in prices). */
export function costOf(usage: TokenUsage, model: string, table: PriceTable = DEFAULT_PRICE_TABLE, pricing: CallPricing = {}): Cost {
  return table.costOf(usage, model, pricing);
}

/**
 * The cost of `usage` at `p`, its tokens at `factor` of their price: the 1-hour cache writes at
 * `cacheWrite1h`, the rest of the cache writes (5-minute) at `cacheWrite`.
 */
function priceUsage(usage: TokenUsage, p: ModelPrice, factor: number): number {
  const prompt = inputTokensOf(usage);
  const rates = p.longPrompt && prompt > p.longPrompt.thresholdTokens ? p.longPrompt : p;
  const oneHourWrites = usage.cacheCreation1hInputTokens ?? 0;
  const micro =
    usage.inputTokens * rates.input +
    usage.outputTokens * rates.output +
    (usage.cacheCreationInputTokens - oneHourWrites) * rates.cacheWrite +
    oneHourWrites * rates.cacheWrite1h +
    usage.cacheReadInputTokens * rates.cacheRead;
  const searches = (usage.webSearchRequests ?? 0) * WEB_SEARCH_USD * 1e6;
  // Round to a millionth of a cent so sums of many calls don't show float noise.
  return Math.round((micro * factor + searches) * 100) / 1e8;
}

/**
 * Matches `id` exactly, else the longest key that is a prefix of it at a boundary (`-`, `@`, `[`,
 * `:`). With `strictVersion`, a key does not cover a longer id whose next part is a bare minor
 * version (`claude-opus-4` must not price `claude-opus-4-9`), only dates and platform suffixes.
 */
function match(
  table: Readonly<Record<string, ModelPrice>>,
  id: string,
  strictVersion: boolean,
): { key: string; price: ModelPrice } | undefined {
  const exact = table[id];
  if (exact) return { key: id, price: exact };
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (!id.startsWith(key) || (best !== undefined && key.length <= best.length)) continue;
    const rest = id.slice(key.length);
    if (!/^[-@[:]/.test(rest)) continue;
    if (strictVersion && /^-\d{1,2}(?:$|[-@[:])/.test(rest)) continue;
    best = key;
  }
  const p = best !== undefined ? table[best] : undefined;
  return best !== undefined && p ? { key: best, price: p } : undefined;
}

/**
 * Lower-cases and strips platform decorations so Bedrock (`us.anthropic.claude-...-v1:0`) and
 * Vertex (`claude-...@20250514`) ids match the table.
 */
function normalizeModelId(model: string): string {
  const id = model.trim().toLowerCase();
  const at = id.indexOf('claude-');
  return at > 0 && /anthropic\.$/.test(id.slice(0, at)) ? id.slice(at) : id;
}
