/** The config file: both shapes users already have, ${VAR} substitution, and one clear line per problem. */
import { parseConfig, ConfigError } from '../../src/mcp';

const env = { HOME_DIR: '/home/x', TOKEN: 'sekret' };

function problems(text: string, format: 'json' | 'yaml' = 'json'): string[] {
  try {
    parseConfig(text, format, env, 'test');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('valid configs', () => {
  it('reads the .mcp.json shape (stdio and http), with camelCase extras', () => {
    const c = parseConfig(
      JSON.stringify({
        mcpServers: {
          files: { command: 'node', args: ['fs.js', '${HOME_DIR}'], env: { A: '${MISSING:-fallback}' }, allowedTools: ['read'] },
          remote: { type: 'http', url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer ${TOKEN}' }, timeoutMs: 5000, breaker: { failureThreshold: 2 } },
          legacy: { type: 'sse', url: 'http://127.0.0.1:3002/sse' },
        },
      }),
      'json',
      env,
    );
    expect(c.servers.map((s) => [s.name, s.transport])).toEqual([
      ['files', 'stdio'],
      ['remote', 'streamable-http'],
      ['legacy', 'sse'],
    ]);
    const [files, remote] = c.servers;
    expect(files!.args).toEqual(['fs.js', '/home/x']);
    expect(files!.env).toEqual({ A: 'fallback' });
    expect(files!.allowedTools).toEqual(['read']);
    expect(remote!.headers).toEqual({ Authorization: 'Bearer sekret' });
    expect(remote!.timeoutMs).toBe(5000);
    expect(remote!.breaker).toEqual({ failureThreshold: 2, cooldownMs: 30_000, maxCooldownMs: 300_000 });
  });

  it("reads design note 03's YAML shape", () => {
    const c = parseConfig(
      [
        'mcp_servers:',
        '  files:',
        '    type: stdio',
        '    command: node',
        '    exclude_tools: [write_file]',
        '    inject: { access_token: "${TOKEN}" }',
        '  api:',
        '    type: streamable-http',
        '    url: http://localhost:9000/mcp',
        '    authorization: ${TOKEN}',
        '    retry: { maximum_attempts: 5 }',
        'claude:',
        '  model: claude-sonnet-4-5',
      ].join('\n'),
      'yaml',
      env,
    );
    expect(c.servers[0]!.excludeTools).toEqual(['write_file']);
    expect(c.servers[0]!.inject).toEqual({ access_token: 'sekret' });
    expect(c.servers[1]!.headers).toEqual({ Authorization: 'Bearer sekret' });
    expect(c.servers[1]!.retry.maximumAttempts).toBe(5);
    expect(c.claude).toEqual({ model: 'claude-sonnet-4-5' });
  });
});

describe('malformed configs are refused with the path of each problem', () => {
  const cases: Array<[string, string, 'json' | 'yaml', RegExp]> = [
    ['not JSON', '{ mcpServers: ', 'json', /^\(file\): not valid JSON/],
    ['not YAML', 'mcp_servers: [unclosed', 'yaml', /^\(file\): not valid YAML/],
    ['a list at top level', '[]', 'json', /^\(file\): must be an object/],
    ['both shapes', '{"mcpServers":{},"mcp_servers":{}}', 'json', /either mcpServers or mcp_servers/],
    ['unknown top-level key', '{"mcpServers":{},"servers":{}}', 'json', /^servers: unknown key/],
    ['stdio without command', '{"mcp_servers":{"files":{"type":"stdio"}}}', 'json', /^mcp_servers\.files\.command: required for a stdio server/],
    ['http without url', '{"mcpServers":{"api":{"type":"http"}}}', 'json', /^mcpServers\.api\.url: required for a streamable-http server/],
    ['url on stdio', '{"mcp_servers":{"f":{"type":"stdio","command":"x","url":"http://a"}}}', 'json', /^mcp_servers\.f\.url: not allowed for a stdio server/],
    ['command on sse', '{"mcp_servers":{"f":{"type":"sse","url":"http://a/sse","command":"x"}}}', 'json', /^mcp_servers\.f\.command: not allowed for a sse server/],
    ['bad url', '{"mcpServers":{"api":{"type":"http","url":"not a url"}}}', 'json', /^mcpServers\.api\.url: /],
    ['bad type', '{"mcp_servers":{"f":{"type":"websocket","url":"ws://a"}}}', 'json', /^mcp_servers\.f\.type: /],
    ['typo in a key (yaml)', 'mcp_servers:\n  f:\n    command: x\n    alowed_tools: [a]\n', 'yaml', /^mcp_servers\.f\.alowed_tools: unknown key/],
    ['typo in a key (.mcp.json)', '{"mcpServers":{"f":{"command":"x","allowedTool":["a"]}}}', 'json', /^mcpServers\.f\.allowedTool: unknown key/],
    ['args not a list', '{"mcpServers":{"f":{"command":"x","args":"a b"}}}', 'json', /^mcpServers\.f\.args: /],
    ['env value not a string', '{"mcpServers":{"f":{"command":"x","env":{"A":1}}}}', 'json', /^mcpServers\.f\.env\.A: /],
    ['timeout too small', '{"mcpServers":{"f":{"command":"x","timeoutMs":5}}}', 'json', /^mcpServers\.f\.timeoutMs: /],
    ['negative breaker threshold', '{"mcp_servers":{"f":{"command":"x","breaker":{"failure_threshold":0}}}}', 'json', /^mcp_servers\.f\.breaker\.failure_threshold: /],
    ['unknown retry key', '{"mcpServers":{"f":{"command":"x","retry":{"attempts":3}}}}', 'json', /^mcpServers\.f\.retry\.attempts: unknown key/],
    ['max cooldown below cooldown', '{"mcp_servers":{"f":{"command":"x","breaker":{"cooldown_ms":1000,"max_cooldown_ms":10}}}}', 'json', /^mcp_servers\.f\.breaker\.max_cooldown_ms: must be at least cooldown_ms/],
    ['bad server name', '{"mcp_servers":{"my files":{"command":"x"}}}', 'json', /^mcp_servers\.my files: server names are/],
    ['missing variable names server and field', '{"mcpServers":{"api":{"type":"http","url":"http://a/mcp","headers":{"X-Key":"${NOPE}"}}}}', 'json', /^mcpServers\.api\.headers\.X-Key: environment variable NOPE is not set/],
    ['inject not an object', 'mcp_servers:\n  f:\n    command: x\n    inject: token\n', 'yaml', /^mcp_servers\.f\.inject: /],
  ];

  it.each(cases)('%s', (_name, text, format, expected) => {
    const found = problems(text, format);
    expect(found.some((p) => expected.test(p))).toBe(true);
  });

  it('lists every problem of a file, one line each', () => {
    const found = problems('{"mcpServers":{"a":{},"b":{"type":"http"},"c":{"command":"x","bogus":1}}}');
    expect(found).toEqual([
      'mcpServers.a.command: required for a stdio server',
      'mcpServers.b.url: required for a streamable-http server',
      'mcpServers.c.bogus: unknown key',
    ]);
  });
});
