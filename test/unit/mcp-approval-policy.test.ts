/** A server's `approval` key: both spellings, defaults, one line per problem, and the tools it marks. */
import { parseMcpServers } from '../../src/mcp';

/** Where OAuth token files would default to. */
const STATE_DIR = '/state';
import { toolApproval } from '../../src/mcp/approval-policy';
import { matchesGlob } from '../../src/core/tool-patterns';

const policyOf = (approval: unknown, key: 'mcpServers' | 'mcp_servers' = 'mcp_servers') => {
  const parsed = parseMcpServers({ files: { command: 'node', approval } }, key, STATE_DIR);
  expect(parsed.problems).toEqual([]);
  return parsed.servers![0]!.approval;
};

const problemsOf = (approval: unknown, key: 'mcpServers' | 'mcp_servers' = 'mcp_servers') =>
  parseMcpServers({ files: { command: 'node', approval } }, key, STATE_DIR).problems;

describe('the approval key', () => {
  it('defaults to no tool needing approval', () => {
    expect(parseMcpServers({ files: { command: 'node' } }, 'mcp_servers', STATE_DIR).servers![0]!.approval).toEqual({ always: [], never: [] });
    expect(policyOf('never')).toEqual({ always: [], never: [] });
  });

  it('takes always for every tool, and an object of patterns with a timeout', () => {
    expect(policyOf('always')).toEqual({ always: ['*'], never: [] });
    expect(policyOf({ always: ['write_*', 'move_file'], timeout_ms: 60_000 })).toEqual({
      always: ['write_*', 'move_file'],
      never: [],
      timeoutMs: 60_000,
    });
    // `never` alone exempts tools from an implied "every tool".
    expect(policyOf({ never: ['read_*'] })).toEqual({ always: ['*'], never: ['read_*'] });
  });

  it('reads the camelCase shape to the same policy', () => {
    const written = { always: ['write_*'], never: ['write_safe'] };
    expect(policyOf({ ...written, timeoutMs: 5000 }, 'mcpServers')).toEqual(policyOf({ ...written, timeout_ms: 5000 }));
  });

  it('names the bad field in one line', () => {
    expect(problemsOf('sometimes')).toEqual([
      'mcp_servers.files.approval: must be "always", "never" or an object of tool patterns (always, never) and a timeout',
    ]);
    expect(problemsOf({ always: ['write_file'], timeout_ms: 10 })).toEqual([
      'mcp_servers.files.approval.timeout_ms: Too small: expected number to be >=1000',
    ]);
    expect(problemsOf({ always: [''] })).toEqual([expect.stringMatching(/^mcp_servers\.files\.approval\.always\.0: /)]);
    expect(problemsOf({ always: ['x'], timeoutMs: 5000 })).toEqual([
      'mcp_servers.files.approval.timeoutMs: unknown key (mcp_servers uses timeout_ms)',
    ]);
    expect(problemsOf({ always: ['x'], timeout_ms: 5000 }, 'mcpServers')).toEqual([
      'mcpServers.files.approval.timeout_ms: unknown key (mcpServers uses timeoutMs)',
    ]);
    expect(problemsOf({ always: ['x'], timeoutMs: 10 }, 'mcpServers')).toEqual([
      'mcpServers.files.approval.timeoutMs: Too small: expected number to be >=1000',
    ]);
    expect(problemsOf({ sometimes: ['x'] })).toEqual(['mcp_servers.files.approval.sometimes: unknown key']);
  });
});

describe('tool name patterns', () => {
  it('match the whole MCP name, * standing for any run of characters', () => {
    expect(matchesGlob('write_file', 'write_file')).toBe(true);
    expect(matchesGlob('write_file', 'write_file_2')).toBe(false);
    expect(matchesGlob('write_*', 'write_file')).toBe(true);
    expect(matchesGlob('*_file', 'move_file')).toBe(true);
    expect(matchesGlob('*', 'anything.at-all')).toBe(true);
    expect(matchesGlob('a*c*e', 'abcde')).toBe(true);
    // Everything but * is literal: a dot is a dot.
    expect(matchesGlob('files.read', 'filesXread')).toBe(false);
    expect(matchesGlob('files.read', 'files.read')).toBe(true);
  });

  it('mark a tool that matches always and no never, with the timeout', () => {
    const policy = { always: ['write_*', 'edit_file'], never: ['write_log'], timeoutMs: 5000 };
    expect(toolApproval(policy, 'write_file')).toEqual({ timeoutMs: 5000 });
    expect(toolApproval(policy, 'edit_file')).toEqual({ timeoutMs: 5000 });
    expect(toolApproval(policy, 'write_log')).toBeUndefined();
    expect(toolApproval(policy, 'read_file')).toBeUndefined();
    expect(toolApproval({ always: ['*'], never: [] }, 'read_file')).toEqual({});
    expect(toolApproval({ always: [], never: [] }, 'write_file')).toBeUndefined();
  });
});
