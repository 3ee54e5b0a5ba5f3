/** Token usage: the cache writes by TTL read from the API's usage, summed, and shown. */
import { addUsage, cacheWriteText, fromApiUsage, ZERO_USAGE } from '../../src/core/usage';

const api = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0 };

describe('cache writes by TTL', () => {
  it('reads the 1-hour share of the cache writes from cache_creation', () => {
    const usage = fromApiUsage({ ...api, cache_creation_input_tokens: 1200, cache_creation: { ephemeral_1h_input_tokens: 800, ephemeral_5m_input_tokens: 400 } });
    expect(usage).toEqual({ inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 1200, cacheCreation1hInputTokens: 800 });
  });

  it('leaves the 1-hour share out when there is none, or no breakdown (older replies)', () => {
    const plain = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 1200 };
    expect(fromApiUsage({ ...api, cache_creation_input_tokens: 1200, cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 1200 } })).toEqual(plain);
    expect(fromApiUsage({ ...api, cache_creation_input_tokens: 1200, cache_creation: null })).toEqual(plain);
    expect(fromApiUsage({ ...api, cache_creation_input_tokens: 1200 })).toEqual(plain);
    expect(fromApiUsage({ ...api, cache_creation_input_tokens: 1200, cache_creation: { ephemeral_1h_input_tokens: null } })).toEqual(plain);
  });

  it('never counts more 1-hour writes than cache writes in all', () => {
    expect(fromApiUsage({ ...api, cache_creation_input_tokens: 300, cache_creation: { ephemeral_1h_input_tokens: 800 } }).cacheCreation1hInputTokens).toBe(300);
    expect(fromApiUsage({ ...api, cache_creation_input_tokens: null, cache_creation: { ephemeral_1h_input_tokens: 800 } })).not.toHaveProperty('cacheCreation1hInputTokens');
  });

  it('sums the 1-hour share, present only when the sum is not 0', () => {
    const oneHour = { ...ZERO_USAGE, cacheCreationInputTokens: 1200, cacheCreation1hInputTokens: 800 };
    const fiveMinutes = { ...ZERO_USAGE, cacheCreationInputTokens: 500 };
    expect(addUsage(oneHour, fiveMinutes)).toEqual({ ...ZERO_USAGE, cacheCreationInputTokens: 1700, cacheCreation1hInputTokens: 800 });
    expect(addUsage(fiveMinutes, oneHour)).toEqual({ ...ZERO_USAGE, cacheCreationInputTokens: 1700, cacheCreation1hInputTokens: 800 });
    expect(addUsage(oneHour, oneHour)).toMatchObject({ cacheCreationInputTokens: 2400, cacheCreation1hInputTokens: 1600 });
    expect(addUsage(fiveMinutes, fiveMinutes)).not.toHaveProperty('cacheCreation1hInputTokens');
  });

  it('shows the 1-hour share beside the cache writes when there is one', () => {
    expect(cacheWriteText({ ...ZERO_USAGE, cacheCreationInputTokens: 1200, cacheCreation1hInputTokens: 800 })).toBe('1200 cache write (1h 800)');
    expect(cacheWriteText({ ...ZERO_USAGE, cacheCreationInputTokens: 1200 })).toBe('1200 cache write');
  });
});
