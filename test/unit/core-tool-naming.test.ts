import { buildToolCatalog, claudeToolName, CLAUDE_TOOL_NAME } from '../../src/core/tool-naming';
import { matchesToolPattern } from '../../src/core/tool-patterns';
import type { McpToolDescriptor } from '../../src/core/contracts';

const schema = { type: 'object' as const, properties: { q: { type: 'string' } } };
const tool = (server: string, name: string, description?: string): McpToolDescriptor => ({
  server,
  name,
  inputSchema: schema,
  ...(description ? { description } : {}),
});

describe('claudeToolName', () => {
  it('keeps valid names as server__tool', () => {
    expect(claudeToolName('files', 'read_text_file')).toBe('files__read_text_file');
  });

  it('sanitises invalid characters with a hash suffix, so distinct names stay distinct', () => {
    const a = claudeToolName('my.server', 'get.item');
    const b = claudeToolName('my_server', 'get_item');
    expect(a).toMatch(CLAUDE_TOOL_NAME);
    expect(b).toBe('my_server__get_item');
    expect(a).not.toBe(b);
  });

  it('shortens long names to 64 characters without collisions between shared prefixes', () => {
    const long = 'x'.repeat(120);
    const a = claudeToolName('srv', `${long}_alpha`);
    const b = claudeToolName('srv', `${long}_beta`);
    expect(a).toHaveLength(64);
    expect(b).toHaveLength(64);
    expect(a).toMatch(CLAUDE_TOOL_NAME);
    expect(a).not.toBe(b);
  });

  it('is deterministic', () => {
    expect(claudeToolName('a.b', 'c')).toBe(claudeToolName('a.b', 'c'));
  });
});

describe('buildToolCatalog', () => {
  const tools = [tool('one', 'echo', 'Echo it'), tool('two', 'echo'), tool('one', 'add'), tool('two', 'sub.tract')];

  it('keeps the same tool name on two servers distinct, with a reverse map', () => {
    const catalog = buildToolCatalog(tools, {}, 15);
    expect(catalog.tools.map((t) => t.name)).toEqual(['one__echo', 'two__echo', 'one__add', expect.stringMatching(/^two__sub_tract_/)]);
    expect(catalog.targets['two__echo']).toEqual({ server: 'two', tool: 'echo' });
    const odd = catalog.tools[3]!.name;
    expect(catalog.targets[odd]).toEqual({ server: 'two', tool: 'sub.tract' });
    expect(catalog.tools[0]).toEqual({ name: 'one__echo', description: 'Echo it', input_schema: schema });
  });

  it('applies allow and deny by full name, bare name and server prefix', () => {
    expect(buildToolCatalog(tools, { allow: ['echo'] }, 15).tools.map((t) => t.name)).toEqual(['one__echo', 'two__echo']);
    expect(buildToolCatalog(tools, { allow: ['one__*'] }, 15).tools.map((t) => t.name)).toEqual(['one__echo', 'one__add']);
    const denied = buildToolCatalog(tools, { deny: ['two__echo', 'add'] }, 15);
    expect(denied.tools.map((t) => t.name)).toEqual(['one__echo', expect.stringMatching(/^two__sub_tract_/)]);
    expect(denied.dropped).toEqual([
      { name: 'two__echo', reason: 'in tools.deny' },
      { name: 'one__add', reason: 'in tools.deny' },
    ]);
  });

  it('caps the number of tools per request and says which were dropped', () => {
    const catalog = buildToolCatalog(tools, {}, 2);
    expect(catalog.tools).toHaveLength(2);
    expect(catalog.dropped.map((d) => d.reason)).toEqual(['over maxToolsPerRequest (2)', 'over maxToolsPerRequest (2)']);
  });
});

describe('matchesToolPattern (tools.allow/deny, approval.tools): one pattern language with the config\'s', () => {
  const hit = (pattern: string) => matchesToolPattern(pattern, 'fs', 'write_file', 'fs__write_file');
  it('matches server__tool, the bare name and the Claude-side name; * is any run of characters anywhere', () => {
    expect(['fs__write_file', 'write_file', 'fs__*', '*', '*write*', 'write_*', '*_file', 'fs__w*e'].map(hit)).toEqual(Array(8).fill(true));
    expect(['git__*', 'read_file', '*read*', 'fs__write', 'fs.write_file'].map(hit)).toEqual(Array(5).fill(false));
  });
});
