import { ClaudeClientConfigError, createClaudeClient, DEFAULT_CLAUDE_TIMEOUT_MS } from '../../src/claude/client';
import { loadSettings } from '../../src/config/settings';
import { startFakeApi, type FakeApi } from './claude-fake-api';

/** The Anthropic API settings an environment gives (the settings read ANTHROPIC_* once). */
const apiOf = (env: NodeJS.ProcessEnv) => loadSettings({ env }).claudeApi.get();

describe('createClaudeClient', () => {
  let api: FakeApi;
  beforeAll(async () => {
    api = await startFakeApi();
  });
  afterAll(() => api.close());

  it('never retries in the SDK and sets an explicit timeout', () => {
    const client = createClaudeClient({ apiKey: 'sk-x' });
    expect(client.maxRetries).toBe(0);
    expect(client.timeout).toBe(DEFAULT_CLAUDE_TIMEOUT_MS);
    expect(client.baseURL).toBe('https://api.anthropic.com');
    expect(createClaudeClient({ apiKey: 'sk-x', timeoutMs: 1234 }).timeout).toBe(1234);
  });

  it('reads the key and base URL from the environment', async () => {
    const client = createClaudeClient(apiOf({ ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: api.url }));
    expect(client.baseURL).toBe(api.url);
    await client.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    // This SDK version sends the key as a bearer token.
    expect(api.requests.at(-1)?.headers.authorization).toBe('Bearer sk-env');
  });

  it('options win over the environment', () => {
    const client = createClaudeClient({
      ...apiOf({ ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: 'http://example.invalid' }),
      apiKey: 'sk-opt',
      baseURL: 'http://127.0.0.1:1',
    });
    expect(client.apiKey).toBe('sk-opt');
    expect(client.baseURL).toBe('http://127.0.0.1:1');
  });

  it('works against a base URL without a key (the stub model)', async () => {
    const client = createClaudeClient(apiOf({ ANTHROPIC_BASE_URL: api.url }));
    const msg = await client.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content[0]).toEqual({ type: 'text', text: 'ok' });
  });

  it('uses ANTHROPIC_AUTH_TOKEN when there is no key', () => {
    const client = createClaudeClient(apiOf({ ANTHROPIC_AUTH_TOKEN: 'tok' }));
    expect(client.authToken).toBe('tok');
    expect(client.apiKey).toBeNull();
  });

  it('fails clearly with neither a key nor a base URL', () => {
    expect(() => createClaudeClient(apiOf({}))).toThrow(ClaudeClientConfigError);
    expect(() => createClaudeClient(apiOf({ ANTHROPIC_API_KEY: '  ' }))).toThrow(
      /set ANTHROPIC_API_KEY, or run `mcp-turns stub-model`/,
    );
  });
});
