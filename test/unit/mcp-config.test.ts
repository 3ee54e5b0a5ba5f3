/** The servers section on its own: both spellings, defaults, and problems named by their path in the file. */
import { parseMcpServers, SERVER_DEFAULTS } from '../../src/mcp';

/** Where OAuth token files would default to. */
const STATE_DIR = '/state';

describe('parseMcpServers', () => {
  it('resolves camelCase mcpServers and snake_case mcp_servers to the same servers', () => {
    const camel = parseMcpServers({ files: { command: 'node', allowedTools: ['read'], retry: { maximumAttempts: 5 } } }, 'mcpServers', STATE_DIR);
    const snake = parseMcpServers({ files: { command: 'node', allowed_tools: ['read'], retry: { maximum_attempts: 5 } } }, 'mcp_servers', STATE_DIR);
    expect(camel).toEqual(snake);
    expect(camel.problems).toEqual([]);
    expect(camel.servers).toHaveLength(1);
    expect(camel.servers![0]).toMatchObject({
      name: 'files',
      transport: 'stdio',
      allowedTools: ['read'],
      timeoutMs: SERVER_DEFAULTS.timeoutMs,
      retry: { ...SERVER_DEFAULTS.retry, maximumAttempts: 5 },
    });
  });

  it('takes an absent section as no servers', () => {
    expect(parseMcpServers(undefined, 'mcp_servers', STATE_DIR)).toEqual({ servers: [], problems: [] });
  });

  it('names each problem by its path as the file spells it', () => {
    expect(parseMcpServers({ f: { command: 'x', timeoutMs: 5 }, g: {} }, 'mcpServers', STATE_DIR).problems).toEqual([
      expect.stringMatching(/^mcpServers\.f\.timeoutMs: /),
      'mcpServers.g.command: required for a stdio server',
    ]);
    expect(parseMcpServers({ f: { command: 'x', timeoutMs: 5 } }, 'mcp_servers', STATE_DIR)).toEqual({
      problems: ['mcp_servers.f.timeoutMs: unknown key (mcp_servers uses timeout_ms)'],
    });
    expect(parseMcpServers({ f: { command: 'x', exclude_tools: [] } }, 'mcpServers', STATE_DIR).problems).toEqual([
      'mcpServers.f.exclude_tools: unknown key (mcpServers uses excludeTools)',
    ]);
    expect(parseMcpServers({ 'my files': { command: 'x' } }, 'mcp_servers', STATE_DIR).problems).toEqual([
      'mcp_servers.my files: server names are 1-40 characters of A-Z a-z 0-9 _ -',
    ]);
    expect(parseMcpServers(['a'], 'mcpServers', STATE_DIR).problems).toEqual([expect.stringMatching(/^mcpServers: /)]);
  });

  it('leaves out schema problems at paths already reported, but not a key spelled the other way', () => {
    const reported = new Set(['mcp_servers.f.command', 'mcpServers.g.timeout_ms']);
    expect(parseMcpServers({ f: { command: '' } }, 'mcp_servers', STATE_DIR, reported)).toEqual({ problems: [] });
    expect(parseMcpServers({ g: { command: 'x', timeout_ms: 1 } }, 'mcpServers', STATE_DIR, reported).problems).toEqual([
      'mcpServers.g.timeout_ms: unknown key (mcpServers uses timeoutMs)',
    ]);
  });
});
