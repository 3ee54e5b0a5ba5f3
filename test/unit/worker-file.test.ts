/** The config file: both shapes users already have, ${VAR} substitution, and one clear line per problem. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { McpPool, SERVER_DEFAULTS } from '../../src/mcp';
import { parseConfig, loadConfig, ConfigError } from '../../src/config/config-file';
import { testStateDir } from '../support/settings';

const env = { HOME_DIR: '/home/x', TOKEN: 'sekret-token', EMPTY: '' };
const stateDir = testStateDir();

function problems(text: string, format: 'json' | 'yaml' = 'json'): string[] {
  try {
    parseConfig(text, format, env, 'test', stateDir);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('valid configs', () => {
  it('reads the .mcp.json shape (stdio, http, sse) with camelCase extras', () => {
    const c = parseConfig(
      JSON.stringify({
        mcpServers: {
          files: {
            command: 'node',
            args: ['fs.js', '${HOME_DIR}'],
            env: { A: '${MISSING:-fallback}' },
            allowedTools: ['read'],
          },
          remote: {
            type: 'http',
            url: 'http://127.0.0.1:3001/mcp',
            headers: { Authorization: 'Bearer ${TOKEN}' },
            timeoutMs: 5000,
            breaker: { failureThreshold: 2 },
            retry: { maximumAttempts: 5 },
          },
          legacy: { type: 'sse', url: 'http://127.0.0.1:3002/sse' },
          inferred: { url: 'https://mcp.example.com/mcp' },
        },
      }),
      'json',
      env,
      '(config)',
      stateDir,
    );
    expect(c.servers.map((s) => [s.name, s.transport])).toEqual([
      ['files', 'stdio'],
      ['remote', 'streamable-http'],
      ['legacy', 'sse'],
      ['inferred', 'streamable-http'],
    ]);
    const [files, remote] = c.servers;
    expect(files!.args).toEqual(['fs.js', '/home/x']);
    expect(files!.env).toEqual({ A: 'fallback' });
    expect(files!.allowedTools).toEqual(['read']);
    expect(remote!.headers).toEqual({ Authorization: 'Bearer sekret-token' });
    expect(remote!.timeoutMs).toBe(5000);
    expect(remote!.maxTotalTimeoutMs).toBe(5000);
    expect(remote!.breaker).toEqual({ failureThreshold: 2, cooldownMs: 30_000, maxCooldownMs: 300_000 });
    expect(remote!.retry).toEqual({ ...SERVER_DEFAULTS.retry, maximumAttempts: 5 });
  });

  it('reads the snake_case YAML shape (mcp_servers), and the claude section as it is', () => {
    const c = parseConfig(
      [
        'mcp_servers:',
        '  files:',
        '    type: stdio',
        '    command: node',
        '    exclude_tools: [write_file]',
        '    inject: { access_token: "${TOKEN}", depth: 2 }',
        '  api:',
        '    type: streamable-http',
        '    url: http://localhost:9000/mcp',
        '    authorization: ${TOKEN}',
        '    max_total_timeout_ms: 600000',
        '    retry: { maximum_attempts: 5 }',
        'claude:',
        '  model: claude-sonnet-4-5',
        '  pricing:',
        '    claude-sonnet-4-5: { input: 3, output: 15 }',
      ].join('\n'),
      'yaml',
      env,
      '(config)',
      stateDir,
    );
    expect(c.servers[0]!.excludeTools).toEqual(['write_file']);
    expect(c.servers[0]!.inject).toEqual({ access_token: 'sekret-token', depth: 2 });
    expect(c.servers[1]!.headers).toEqual({ Authorization: 'Bearer sekret-token' });
    expect(c.servers[1]!.retry.maximumAttempts).toBe(5);
    expect(c.claude).toEqual({ model: 'claude-sonnet-4-5', pricing: { 'claude-sonnet-4-5': { input: 3, output: 15 } } });
  });

  it('local_activity (localActivity in .mcp.json) takes true, false or auto; anything else is one line naming the field', () => {
    const servers = parseConfig(
      '{"mcp_servers":{"a":{"command":"x","local_activity":true},"b":{"command":"x","local_activity":false},"c":{"command":"x","local_activity":"auto"}}}',
      'json',
      env,
      '(config)',
      stateDir,
    ).servers;
    expect(servers.map((s) => s.localActivity)).toEqual([true, false, 'auto']);
    expect(parseConfig('{"mcpServers":{"a":{"command":"x","localActivity":false}}}', 'json', env, '(config)', stateDir).servers[0]!.localActivity).toBe(false);
    const found = problems('{"mcp_servers":{"a":{"command":"x","local_activity":"sometimes"}}}');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/mcp_servers\.a\.local_activity/);
  });

  it('applies the documented defaults, and derives the activity policy from them', () => {
    const [s] = parseConfig('{"mcp_servers":{"f":{"command":"x"}}}', 'json', env, '(config)', stateDir).servers;
    expect(s).toMatchObject({
      transport: 'stdio',
      args: [],
      env: {},
      headers: {},
      excludeTools: [],
      timeoutMs: 30_000,
      heartbeatTimeoutMs: 15_000,
      listTimeoutMs: 20_000,
      maxResultBytes: 102_400,
      retry: {
        maximumAttempts: 3,
        initialIntervalMs: 1000,
        backoffCoefficient: 2,
        maximumIntervalMs: 10_000,
      },
      breaker: { failureThreshold: 5, cooldownMs: 30_000, maxCooldownMs: 300_000 },
      localActivity: 'auto',
    });
    // Which tools run locally is decided per listing (src/mcp/tool-speed.ts); the static policy names none.
    expect(McpPool.policy(s!)).toEqual({
      localTools: [],
      startToCloseTimeoutMs: 40_000,
      heartbeatTimeoutMs: 15_000,
      inputTimeoutMs: 600_000,
      retry: {
        maximumAttempts: 3,
        initialIntervalMs: 1000,
        backoffCoefficient: 2,
        maximumIntervalMs: 10_000,
      },
    });
    expect(McpPool.policy({ ...s!, maxTotalTimeoutMs: 600_000 }).startToCloseTimeoutMs).toBe(610_000);
  });

  it('substitutes shell style: ${VAR}, ${VAR:-default} (also for empty), $${ as a literal', () => {
    const c = parseConfig(
      JSON.stringify({
        mcpServers: {
          f: {
            command: 'x',
            args: ['${EMPTY}', '${EMPTY:-d}', '${TOKEN:-d}', 'a$${NOT}b', '${HOME_DIR}/${TOKEN}'],
          },
        },
      }),
      'json',
      env,
      '(config)',
      stateDir,
    );
    expect(c.servers[0]!.args).toEqual(['', 'd', 'sekret-token', 'a${NOT}b', '/home/x/sekret-token']);
  });

  it('loads .json, .mcp.json and .yaml files by extension', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-config-'));
    fs.writeFileSync(path.join(dir, '.mcp.json'), '{"mcpServers":{"a":{"command":"x"}}}');
    fs.writeFileSync(path.join(dir, 'c.yaml'), 'mcp_servers:\n  b:\n    command: y\n');
    expect(loadConfig(path.join(dir, '.mcp.json'), env, stateDir).servers[0]!.name).toBe('a');
    expect(loadConfig(path.join(dir, 'c.yaml'), env, stateDir).servers[0]!.name).toBe('b');
    expect(() => loadConfig(path.join(dir, 'nope.yaml'), env, stateDir)).toThrow(/cannot read: ENOENT/);
  });
});

describe('malformed configs are refused with the path of each problem', () => {
  const cases: Array<[string, string, 'json' | 'yaml', RegExp]> = [
    ['not JSON', '{ mcpServers: ', 'json', /^\(file\): not valid JSON/],
    ['not YAML', 'mcp_servers: [unclosed', 'yaml', /^\(file\): not valid YAML/],
    ['a list at top level', '[]', 'json', /^\(file\): must be an object/],
    ['a string at top level (yaml)', 'just text', 'yaml', /^\(file\): must be an object/],
    ['both shapes', '{"mcpServers":{},"mcp_servers":{}}', 'json', /either mcpServers or mcp_servers/],
    ['unknown top-level key', '{"mcpServers":{},"servers":{}}', 'json', /^servers: unknown key/],
    ['unknown top-level key (yaml)', 'mcp_servers: {}\nmodel: x\n', 'yaml', /^model: unknown key/],
    ['claude not an object', 'mcp_servers: {}\nclaude: fast\n', 'yaml', /^claude: /],
    ['prices at the top level', 'mcp_servers: {}\npricing: { m: { input: 1, output: 1 } }\n', 'yaml', /^pricing: model prices go under claude\.pricing/],
    ['mcp_servers not an object', 'mcp_servers: [a, b]\n', 'yaml', /^mcp_servers: /],
    [
      'stdio without command',
      '{"mcp_servers":{"files":{"type":"stdio"}}}',
      'json',
      /^mcp_servers\.files\.command: required for a stdio server/,
    ],
    [
      'empty entry (yaml)',
      'mcp_servers:\n  files: {}\n',
      'yaml',
      /^mcp_servers\.files\.command: required for a stdio server/,
    ],
    [
      'http without url',
      '{"mcpServers":{"api":{"type":"http"}}}',
      'json',
      /^mcpServers\.api\.url: required for a streamable-http server/,
    ],
    [
      'url on stdio',
      '{"mcp_servers":{"f":{"type":"stdio","command":"x","url":"http://a"}}}',
      'json',
      /^mcp_servers\.f\.url: not allowed for a stdio server/,
    ],
    [
      'headers on stdio (.mcp.json)',
      '{"mcpServers":{"f":{"command":"x","headers":{"A":"b"}}}}',
      'json',
      /^mcpServers\.f\.headers: not allowed for a stdio server/,
    ],
    [
      'command on sse',
      'mcp_servers:\n  f: { type: sse, url: "http://a/sse", command: x }\n',
      'yaml',
      /^mcp_servers\.f\.command: not allowed for a sse server/,
    ],
    [
      'env on http',
      '{"mcpServers":{"f":{"type":"http","url":"http://a/mcp","env":{"A":"b"}}}}',
      'json',
      /^mcpServers\.f\.env: not allowed for a streamable-http server/,
    ],
    [
      'bad url',
      '{"mcpServers":{"api":{"type":"http","url":"not a url"}}}',
      'json',
      /^mcpServers\.api\.url: must be an http\(s\) URL/,
    ],
    [
      'ws url',
      'mcp_servers:\n  api: { type: streamable-http, url: "ws://a/mcp" }\n',
      'yaml',
      /^mcp_servers\.api\.url: must be an http\(s\) URL/,
    ],
    [
      'bad type',
      '{"mcp_servers":{"f":{"type":"websocket","url":"http://a"}}}',
      'json',
      /^mcp_servers\.f\.type: /,
    ],
    [
      'typo in a key (yaml)',
      'mcp_servers:\n  f:\n    command: x\n    alowed_tools: [a]\n',
      'yaml',
      /^mcp_servers\.f\.alowed_tools: unknown key$/,
    ],
    [
      'typo in a key (.mcp.json)',
      '{"mcpServers":{"f":{"command":"x","allowedTool":["a"]}}}',
      'json',
      /^mcpServers\.f\.allowedTool: unknown key$/,
    ],
    [
      'camelCase in the yaml shape',
      'mcp_servers:\n  f:\n    command: x\n    timeoutMs: 100\n',
      'yaml',
      /^mcp_servers\.f\.timeoutMs: unknown key \(mcp_servers uses timeout_ms\)/,
    ],
    [
      'snake_case in the .mcp.json shape',
      '{"mcpServers":{"f":{"command":"x","exclude_tools":["a"]}}}',
      'json',
      /^mcpServers\.f\.exclude_tools: unknown key \(mcpServers uses excludeTools\)/,
    ],
    [
      'args not a list',
      '{"mcpServers":{"f":{"command":"x","args":"a b"}}}',
      'json',
      /^mcpServers\.f\.args: /,
    ],
    [
      'args item not a string',
      'mcp_servers:\n  f: { command: x, args: [a, 2] }\n',
      'yaml',
      /^mcp_servers\.f\.args\.1: /,
    ],
    [
      'env value not a string',
      '{"mcpServers":{"f":{"command":"x","env":{"A":1}}}}',
      'json',
      /^mcpServers\.f\.env\.A: /,
    ],
    [
      'header value not a string',
      'mcp_servers:\n  f: { url: "http://a/mcp", headers: { X-Key: [1] } }\n',
      'yaml',
      /^mcp_servers\.f\.headers\.X-Key: /,
    ],
    [
      'timeout too small',
      '{"mcpServers":{"f":{"command":"x","timeoutMs":5}}}',
      'json',
      /^mcpServers\.f\.timeoutMs: /,
    ],
    [
      'timeout not a number (yaml)',
      'mcp_servers:\n  f: { command: x, timeout_ms: soon }\n',
      'yaml',
      /^mcp_servers\.f\.timeout_ms: /,
    ],
    [
      'list timeout above the listTools activity',
      '{"mcpServers":{"f":{"command":"x","listTimeoutMs":60000}}}',
      'json',
      /^mcpServers\.f\.listTimeoutMs: /,
    ],
    [
      'total timeout below the request timeout',
      'mcp_servers:\n  f: { command: x, timeout_ms: 5000, max_total_timeout_ms: 1000 }\n',
      'yaml',
      /^mcp_servers\.f\.max_total_timeout_ms: must be at least timeout_ms/,
    ],
    [
      'zero breaker threshold',
      '{"mcp_servers":{"f":{"command":"x","breaker":{"failure_threshold":0}}}}',
      'json',
      /^mcp_servers\.f\.breaker\.failure_threshold: /,
    ],
    [
      'unknown retry key (.mcp.json)',
      '{"mcpServers":{"f":{"command":"x","retry":{"attempts":3}}}}',
      'json',
      /^mcpServers\.f\.retry\.attempts: unknown key/,
    ],
    [
      'snake retry key in .mcp.json',
      '{"mcpServers":{"f":{"command":"x","retry":{"maximum_attempts":3}}}}',
      'json',
      /^mcpServers\.f\.retry\.maximum_attempts: unknown key \(mcpServers uses maximumAttempts\)/,
    ],
    [
      'bad camel breaker value',
      '{"mcpServers":{"f":{"command":"x","breaker":{"cooldownMs":-1}}}}',
      'json',
      /^mcpServers\.f\.breaker\.cooldownMs: /,
    ],
    [
      'max cooldown below cooldown',
      '{"mcp_servers":{"f":{"command":"x","breaker":{"cooldown_ms":1000,"max_cooldown_ms":10}}}}',
      'json',
      /^mcp_servers\.f\.breaker\.max_cooldown_ms: must be at least cooldown_ms/,
    ],
    [
      'bad server name',
      '{"mcp_servers":{"my files":{"command":"x"}}}',
      'json',
      /^mcp_servers\.my files: server names are/,
    ],
    [
      'server name too long',
      `{"mcpServers":{"${'a'.repeat(41)}":{"command":"x"}}}`,
      'json',
      /^mcpServers\.a{41}: server names are/,
    ],
    [
      'authorization and an Authorization header',
      'mcp_servers:\n  f: { url: "http://a/mcp", authorization: t, headers: { authorization: u } }\n',
      'yaml',
      /^mcp_servers\.f\.authorization: conflicts with headers\.Authorization/,
    ],
    [
      'inject not an object',
      'mcp_servers:\n  f:\n    command: x\n    inject: token\n',
      'yaml',
      /^mcp_servers\.f\.inject: /,
    ],
    [
      'allowed_tools not a list of names',
      'mcp_servers:\n  f: { command: x, allowed_tools: read }\n',
      'yaml',
      /^mcp_servers\.f\.allowed_tools: /,
    ],
    [
      'max_result_bytes too small',
      '{"mcpServers":{"f":{"command":"x","maxResultBytes":10}}}',
      'json',
      /^mcpServers\.f\.maxResultBytes: /,
    ],
    [
      'missing variable names server and field',
      '{"mcpServers":{"api":{"type":"http","url":"http://a/mcp","headers":{"X-Key":"${NOPE}"}}}}',
      'json',
      /^mcpServers\.api\.headers\.X-Key: environment variable NOPE is not set$/,
    ],
    [
      'missing variable in yaml',
      'mcp_servers:\n  files:\n    command: ${NODE_BIN}\n',
      'yaml',
      /^mcp_servers\.files\.command: environment variable NODE_BIN is not set$/,
    ],
    [
      'missing variable in an args item',
      '{"mcp_servers":{"files":{"command":"x","args":["--root","${ROOT}"]}}}',
      'json',
      /^mcp_servers\.files\.args\.1: environment variable ROOT is not set$/,
    ],
  ];

  it('has more than 20 cases', () => expect(cases.length).toBeGreaterThan(20));

  it.each(cases)('%s', (_name, text, format, expected) => {
    const found = problems(text, format);
    expect(found).toEqual(expect.arrayContaining([expect.stringMatching(expected)]));
  });

  it('lists every problem of a file, one line each, path first', () => {
    const found = problems(
      '{"mcpServers":{"a":{},"b":{"type":"http"},"c":{"command":"x","bogus":1},"d":{"command":"${NOPE}"}}}',
    );
    expect(found).toEqual([
      'mcpServers.d.command: environment variable NOPE is not set',
      'mcpServers.a.command: required for a stdio server',
      'mcpServers.b.url: required for a streamable-http server',
      'mcpServers.c.bogus: unknown key',
    ]);
  });

  it('says which variables are missing without echoing any value, and names two in one string', () => {
    const err = (() => {
      try {
        parseConfig(
          'mcp_servers:\n  api:\n    url: "http://${H}:${P}/mcp"\n    authorization: ${TOKEN}\n',
          'yaml',
          env,
          'f.yaml',
          stateDir,
        );
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.problems).toEqual([
      'mcp_servers.api.url: environment variable H is not set; environment variable P is not set',
    ]);
    expect(err.message).toContain('invalid config f.yaml');
    expect(err.message).not.toContain('sekret-token');
  });
});
