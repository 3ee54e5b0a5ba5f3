import { ClaudeConfigError, ClaudeConfigSchema, claudeErrorPolicy, resolveClaudeConfig } from '../../src/claude/config';

describe('resolveClaudeConfig', () => {
  const defaults = {
    model: 'claude-sonnet-4-5',
    maxTokens: 4096,
    stream: false,
    promptCaching: true,
    taskQueue: 'mcp-turns-claude',
    maxConcurrentCalls: 10,
    retryAfterCapMs: 60_000,
    noRetryAfterDelayMs: 30_000,
  };

  it('gives the defaults for a missing or empty section', () => {
    expect(resolveClaudeConfig(undefined)).toEqual(defaults);
    expect(resolveClaudeConfig(null)).toEqual(defaults);
    expect(resolveClaudeConfig({})).toEqual(defaults);
  });

  it('keeps given values', () => {
    const c = resolveClaudeConfig({
      model: 'claude-haiku-4-5',
      maxTokens: 8000,
      stream: true,
      promptCaching: false,
      thinking: { budgetTokens: 2048 },
      rateLimitPerSecond: 2.5,
      pricing: { 'claude-haiku': { input: 1, output: 5 } },
    });
    expect(c).toMatchObject({ model: 'claude-haiku-4-5', stream: true, promptCaching: false, rateLimitPerSecond: 2.5 });
    expect(c.thinking).toEqual({ budgetTokens: 2048 });
    expect(claudeErrorPolicy(c)).toEqual({ retryAfterCapMs: 60_000, noRetryAfterDelayMs: 30_000 });
  });

  it('names unknown and bad keys with their claude.* path', () => {
    let err: unknown;
    try {
      resolveClaudeConfig({
        maxTokenz: 5,
        maxTokens: 0,
        thinking: { budget: 1 },
        pricing: { m: { input: -1, output: 1, extra: 1 } },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClaudeConfigError);
    const problems = (err as ClaudeConfigError).problems;
    expect(problems).toContain('claude.maxTokenz: unknown key');
    expect(problems).toContain('claude.thinking.budget: unknown key');
    expect(problems).toContain('claude.pricing.m.extra: unknown key');
    expect(problems.some((p) => p.startsWith('claude.maxTokens: '))).toBe(true);
    expect(problems.some((p) => p.startsWith('claude.thinking.budgetTokens: '))).toBe(true);
    expect(problems.some((p) => p.startsWith('claude.pricing.m.input: '))).toBe(true);
  });

  it('requires max tokens above the thinking budget', () => {
    expect(() => resolveClaudeConfig({ maxTokens: 2000, thinking: { budgetTokens: 2048 } })).toThrow(
      /claude\.thinking\.budgetTokens: must be less than maxTokens \(2000\)/,
    );
  });

  it('rejects a section that is not an object', () => {
    expect(() => resolveClaudeConfig('sonnet')).toThrow(ClaudeConfigError);
  });

  it('can be embedded in a larger schema', () => {
    expect(ClaudeConfigSchema.safeParse({ model: 'x' }).success).toBe(true);
  });
});
