import { ClaudeConfigError, ClaudeConfigSchema, claudeErrorPolicy, resolveClaudeConfig } from '../../src/claude/config';

describe('resolveClaudeConfig', () => {
  const defaults = {
    model: 'claude-sonnet-4-6',
    stream: false,
    promptCaching: true,
    maxConcurrentCalls: 10,
    retryAfterCapMs: 60_000,
    maxSpendCapAttempts: 3,
    noRetryAfterDelayMs: 30_000,
    messageBatches: { maxRequests: 5000, maxWaitMs: 30_000, maxBytes: 256 * 1024 * 1024, pollInitialMs: 10_000, pollMaxMs: 60_000, idleMs: 600_000 },
  };

  it('gives the defaults for a missing or empty section', () => {
    expect(resolveClaudeConfig(undefined)).toEqual(defaults);
    expect(resolveClaudeConfig(null)).toEqual(defaults);
    expect(resolveClaudeConfig({})).toEqual(defaults);
  });

  it('keeps given values', () => {
    const c = resolveClaudeConfig({
      model: 'claude-haiku-4-5',
      stream: true,
      promptCaching: false,
      rateLimitPerSecond: 2.5,
      pricing: { 'claude-haiku': { input: 1, output: 5 } },
    });
    expect(c).toMatchObject({ model: 'claude-haiku-4-5', stream: true, promptCaching: false, rateLimitPerSecond: 2.5 });
    expect(claudeErrorPolicy(c)).toEqual({ retryAfterCapMs: 60_000, noRetryAfterDelayMs: 30_000 });
  });

  it('names unknown and bad keys with their claude.* path', () => {
    let err: unknown;
    try {
      resolveClaudeConfig({
        maxTokenz: 5,
        maxConcurrentCalls: 0,
        pricing: { m: { input: -1, output: 1, extra: 1 } },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClaudeConfigError);
    const problems = (err as ClaudeConfigError).problems;
    expect(problems).toContain('claude.maxTokenz: unknown key');
    expect(problems).toContain('claude.pricing.m.extra: unknown key');
    expect(problems.some((p) => p.startsWith('claude.maxConcurrentCalls: '))).toBe(true);
    expect(problems.some((p) => p.startsWith('claude.pricing.m.input: '))).toBe(true);
  });

  it("takes maxToolsPerRequest, the turns' default tools per request, from 1 to 128", () => {
    expect(resolveClaudeConfig({ maxToolsPerRequest: 40 }).maxToolsPerRequest).toBe(40);
    expect(resolveClaudeConfig({}).maxToolsPerRequest).toBeUndefined(); // turns then get 15
    for (const bad of [0, 129, 2.5, '40']) {
      expect(() => resolveClaudeConfig({ maxToolsPerRequest: bad })).toThrow(/claude\.maxToolsPerRequest: /);
    }
  });

  it('rejects a section that is not an object', () => {
    expect(() => resolveClaudeConfig('sonnet')).toThrow(ClaudeConfigError);
  });

  it('can be embedded in a larger schema', () => {
    expect(ClaudeConfigSchema.safeParse({ model: 'x' }).success).toBe(true);
  });
});
