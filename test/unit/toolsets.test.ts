/**
 * Tool sets (src/core/toolsets.ts, src/config/toolsets-section.ts) and the config file's tool modules
 * (src/tools/tool-modules-config.ts through src/config/config-file.ts): what a turn naming a toolset
 * lists and offers, and why the rest is left out; the sections as a file spells them, each problem
 * one line at its path; a turn's `context` and `toolset` in its input.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ToolListing } from '../../src/core/contracts';
import { selectTools, unknownToolsetProblem, type Toolset } from '../../src/core/toolsets';
import { prepareTurnOf } from '../../src/core/turn-toolset';
import { ConfigError, loadConfig, parseConfig, type ConfigFile } from '../../src/config/config-file';
import { parseToolsets } from '../../src/config/toolsets-section';
import { SERVER_DEFAULTS } from '../../src/mcp';
import { ChatTurnInputError, parseChatTurnInput } from '../../src/schemas/turn-input';
import { defaultModuleConfig, parseToolModules } from '../../src/tools/tool-modules-config';

const STATE_DIR = '/state';

describe('selectTools', () => {
  const research: Toolset = { servers: ['search', 'crm'], allow: ['search__*', 'crm__lookup'], deny: ['search__admin'] };

  it('without a toolset: the turn\'s own servers and its allow/deny lists, nothing outside', () => {
    expect(selectTools({ servers: ['a'], tools: { allow: ['x'], deny: ['y'] } }, undefined, undefined)).toEqual({
      servers: ['a'],
      outside: [],
      filters: [{ allow: ['x'], deny: ['y'] }],
    });
    expect(selectTools({}, undefined, undefined)).toEqual({ outside: [], filters: [{}] });
    // A name without a toolset (the caller checks it is defined) selects nothing more.
    expect(selectTools({ tools: { deny: ['y'] } }, 'research', undefined)).toEqual({ outside: [], filters: [{ deny: ['y'] }] });
  });

  it("with a toolset: its servers, its filter labelled toolsets.<name> first, then the turn's", () => {
    expect(selectTools({ tools: { deny: ['crm__lookup'] } }, 'research', research)).toEqual({
      servers: ['search', 'crm'],
      outside: [],
      filters: [
        { allow: ['search__*', 'crm__lookup'], deny: ['search__admin'], label: 'toolsets.research' },
        { deny: ['crm__lookup'] },
      ],
    });
  });

  it('a toolset without servers lists every server; one without allow/deny filters by label only', () => {
    expect(selectTools({}, 'all', {})).toEqual({ outside: [], filters: [{ label: 'toolsets.all' }, {}] });
    expect(selectTools({ servers: ['x'] }, 'all', { deny: ['d'] })).toEqual({ servers: ['x'], outside: [], filters: [{ deny: ['d'], label: 'toolsets.all' }, {}] });
  });

  it("narrows the turn's servers to the toolset's, naming those outside it, never widening", () => {
    expect(selectTools({ servers: ['crm', 'files', 'web'] }, 'research', research)).toEqual({
      servers: ['crm'],
      outside: ['files', 'web'],
      filters: [{ allow: research.allow, deny: research.deny, label: 'toolsets.research' }, {}],
    });
    expect(selectTools({ servers: ['files'] }, 'research', research)).toMatchObject({ servers: [], outside: ['files'] });
  });
});

describe('unknownToolsetProblem', () => {
  it('names the toolsets the worker defines, or says it defines none', () => {
    expect(unknownToolsetProblem('writing', { research: {}, ops: {} })).toBe('toolset: "writing" is not defined on the worker (defined: research, ops)');
    expect(unknownToolsetProblem('writing', {})).toBe('toolset: "writing" is not defined on the worker (its config defines no toolsets)');
  });
});

describe('prepareTurnOf with a toolset', () => {
  const schema = { type: 'object' as const };
  const listing: ToolListing = {
    tools: [
      { server: 'search', name: 'query', inputSchema: schema },
      { server: 'search', name: 'admin', inputSchema: schema },
      { server: 'crm', name: 'lookup', inputSchema: schema },
      { server: 'crm', name: 'update', inputSchema: schema, approval: {} },
      { server: 'crm', name: 'note', inputSchema: schema },
    ],
    policies: {},
    unavailable: [{ server: 'crm-backup', reason: 'circuit open, next probe in 30 s' }],
    unknownServers: [],
    unusableTools: [
      { server: 'search', name: 'odd', reason: 'its input schema is not an object' },
      { server: 'crm', name: 'broken', reason: 'its input schema is not an object' },
    ],
  };
  const research: Toolset = { servers: ['search', 'crm'], allow: ['search__*', 'crm__lookup', 'crm__note'], deny: ['search__admin'] };

  it("offers what the toolset and the turn both let in; each other tool dropped with the list that left it out", () => {
    const input = parseChatTurnInput({ question: 'q', toolset: 'research', servers: ['search', 'crm', 'files'], tools: { deny: ['note'] } });
    const selection = selectTools(input, input.toolset, research);
    const prepared = prepareTurnOf(input, listing, {}, selection);
    expect(prepared.catalog.tools.map((t) => t.name)).toEqual(['search__query', 'crm__lookup']);
    expect(prepared.catalog.dropped).toEqual([
      { name: 'search__admin', reason: 'in toolsets.research.deny' },
      { name: 'crm__update', reason: 'not in toolsets.research.allow' },
      { name: 'crm__note', reason: 'in tools.deny' },
      // An unusable tool the toolset lets in keeps the listing's reason; one it leaves out, the toolset's.
      { name: 'search__odd', reason: 'its input schema is not an object' },
      { name: 'crm__broken', reason: 'not in toolsets.research.allow' },
    ]);
    expect(prepared.unavailable).toEqual([
      { server: 'crm-backup', reason: 'circuit open, next probe in 30 s' },
      { server: 'files', reason: 'not in toolset research' },
    ]);
    // A tool not offered waits for no approval.
    expect(prepared.approvals).toEqual({});
  });

  it("checks the toolset's lists before the turn's: a tool both leave out is named by the toolset's", () => {
    const input = { question: 'q', toolset: 'research', tools: { allow: ['crm__update'] } };
    const prepared = prepareTurnOf(input, listing, {}, selectTools(input, 'research', research));
    expect(prepared.catalog.tools).toEqual([]);
    expect(prepared.catalog.dropped.find((d) => d.name === 'crm__update')).toEqual({ name: 'crm__update', reason: 'not in toolsets.research.allow' });
    expect(prepared.catalog.dropped.find((d) => d.name === 'crm__lookup')).toEqual({ name: 'crm__lookup', reason: 'not in tools.allow' });
  });

  it('without a selection, uses the turn\'s own lists under the label tools', () => {
    const prepared = prepareTurnOf({ question: 'q', tools: { allow: ['crm__*'] } }, listing, {});
    expect(prepared.catalog.tools.map((t) => t.name)).toEqual(['crm__lookup', 'crm__update', 'crm__note']);
    expect(prepared.catalog.dropped.slice(0, 2)).toEqual([
      { name: 'search__query', reason: 'not in tools.allow' },
      { name: 'search__admin', reason: 'not in tools.allow' },
    ]);
    expect(prepared.approvals).toEqual({ crm__update: {} });
    expect(prepared.unavailable).toEqual(listing.unavailable);
  });
});

describe('parseToolsets', () => {
  it('takes named selections of the known servers and modules', () => {
    const section = { research: { servers: ['search', 'crm'], allow: ['search__*'], deny: ['crm__delete'] }, everything: {} };
    expect(parseToolsets(section, ['search', 'crm', 'files'])).toEqual({ toolsets: section, problems: [] });
  });

  it('takes an absent section as none', () => {
    expect(parseToolsets(undefined, [])).toEqual({ toolsets: {}, problems: [] });
    expect(parseToolsets(null, ['a'])).toEqual({ toolsets: {}, problems: [] });
  });

  it('names an unknown server at its path, with the names the file has', () => {
    expect(parseToolsets({ x: { servers: ['search', 'nope'] }, y: { servers: ['gone'] } }, ['search', 'crm'])).toEqual({
      problems: [
        'toolsets.x.servers.1: nope is neither an MCP server nor a tool module of this file (search, crm)',
        'toolsets.y.servers.0: gone is neither an MCP server nor a tool module of this file (search, crm)',
      ],
    });
    expect(parseToolsets({ x: { servers: ['nope'] } }, []).problems).toEqual(['toolsets.x.servers.0: nope is neither an MCP server nor a tool module of this file (it has none)']);
  });

  it('names every other problem at its path: a bad toolset name, an unknown key, a list that is not one', () => {
    const { toolsets, problems } = parseToolsets({ 'bad name': {}, x: { servers: 'search', allowed: ['a'] } }, ['search']);
    expect(toolsets).toBeUndefined();
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^toolsets\.bad name: toolset names are 1-64 characters of A-Z a-z 0-9 _ -/),
        expect.stringMatching(/^toolsets\.x\.servers: /),
        'toolsets.x.allowed: unknown key',
      ]),
    );
    expect(problems).toHaveLength(3);
    expect(parseToolsets(['a'], []).problems).toEqual([expect.stringMatching(/^toolsets: /)]);
  });
});

describe('parseToolModules', () => {
  it('takes an absent section as none, and refuses one that is not an object', () => {
    expect(parseToolModules(undefined, 'toolModules', '/cfg')).toEqual({ modules: [], problems: [] });
    expect(parseToolModules(['x.mjs'], 'tool_modules', '/cfg')).toEqual({ problems: ['tool_modules: must be an object of module name → module path'] });
  });

  it('resolves a bare path against the base directory, with every default', () => {
    expect(parseToolModules({ crm: './tools/crm.mjs', abs: '/opt/t.js' }, 'toolModules', '/cfg')).toEqual({
      modules: [
        { ...defaultModuleConfig('crm'), path: '/cfg/tools/crm.mjs' },
        { ...defaultModuleConfig('abs'), path: '/opt/t.js' },
      ],
      problems: [],
    });
    expect(defaultModuleConfig('crm')).toEqual({
      name: 'crm',
      path: undefined,
      allowedTools: undefined,
      excludeTools: [],
      timeoutMs: SERVER_DEFAULTS.timeoutMs,
      maxTotalTimeoutMs: SERVER_DEFAULTS.timeoutMs,
      heartbeatTimeoutMs: SERVER_DEFAULTS.heartbeatTimeoutMs,
      localActivity: 'auto',
      retry: SERVER_DEFAULTS.retry,
      approval: { always: [], never: [] },
      maxResultBytes: SERVER_DEFAULTS.maxResultBytes,
      maxBinaryBytes: SERVER_DEFAULTS.maxBinaryBytes,
    });
  });

  it('names a bad module name, a bad entry, an unknown key and a key spelled the other way', () => {
    expect(parseToolModules({ 'my tools': 'a.mjs' }, 'toolModules', '/cfg').problems).toEqual(['toolModules.my tools: module names are 1-40 characters of A-Z a-z 0-9 _ -']);
    expect(parseToolModules({ crm: 5 }, 'tool_modules', '/cfg').problems).toEqual(['tool_modules.crm: must be a module path, or an object with module and its policies']);
    expect(parseToolModules({ crm: { module: 'a.mjs', timeout: 5 } }, 'toolModules', '/cfg').problems).toEqual(['toolModules.crm.timeout: unknown key']);
    expect(parseToolModules({ crm: { module: 'a.mjs', timeoutMs: 5000 } }, 'tool_modules', '/cfg').problems).toEqual([
      'tool_modules.crm.timeoutMs: unknown key (tool_modules uses timeout_ms)',
    ]);
    expect(parseToolModules({ crm: { module: 'a.mjs', timeout_ms: 5000 } }, 'toolModules', '/cfg').problems).toEqual([
      'toolModules.crm.timeout_ms: unknown key (toolModules uses timeoutMs)',
    ]);
    expect(parseToolModules({ crm: { module: 'a.mjs', timeoutMs: 5 } }, 'toolModules', '/cfg').problems).toEqual([expect.stringMatching(/^toolModules\.crm\.timeoutMs: /)]);
    expect(parseToolModules({ crm: { module: 'a.mjs', retry: { maximumAttempts: 0 } } }, 'toolModules', '/cfg').problems).toEqual([
      expect.stringMatching(/^toolModules\.crm\.retry\.maximumAttempts: /),
    ]);
  });
});

describe('the config file\'s tool modules and toolsets', () => {
  function problemsOf(text: string, format: 'json' | 'yaml' = 'json', source = '/etc/mcp-turns/config.json'): string[] {
    try {
      parseConfig(text, format, {}, source, STATE_DIR);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
    throw new Error('expected the config to be refused');
  }

  const policies = {
    allowedTools: ['lookup', 'update'],
    excludeTools: ['update'],
    approval: { always: ['lookup'], timeoutMs: 60_000 },
    timeoutMs: 5000,
    heartbeatTimeoutMs: 2000,
    retry: { maximumAttempts: 5, initialIntervalMs: 200 },
    localActivity: false,
    maxResultBytes: 4096,
    maxBinaryBytes: 0,
  };
  const resolved = {
    name: 'crm',
    path: '/etc/mcp-turns/tools/crm.mjs',
    allowedTools: ['lookup', 'update'],
    excludeTools: ['update'],
    approval: { always: ['lookup'], never: [], timeoutMs: 60_000 },
    timeoutMs: 5000,
    maxTotalTimeoutMs: 5000,
    heartbeatTimeoutMs: 2000,
    retry: { ...SERVER_DEFAULTS.retry, maximumAttempts: 5, initialIntervalMs: 200 },
    localActivity: false,
    maxResultBytes: 4096,
    maxBinaryBytes: 0,
  };

  it('reads toolModules beside mcpServers (camelCase keys), paths relative to the file', () => {
    const config = parseConfig(
      JSON.stringify({
        mcpServers: { files: { command: 'node' } },
        toolModules: { crm: { module: './tools/crm.mjs', ...policies }, util: '../shared/util.cjs' },
        toolsets: { research: { servers: ['files', 'crm'], deny: ['crm__update'] } },
      }),
      'json',
      {},
      '/etc/mcp-turns/config.json',
      STATE_DIR,
    );
    expect(config.servers.map((s) => s.name)).toEqual(['files']);
    expect(config.toolModules).toEqual([resolved, { ...defaultModuleConfig('util'), path: '/etc/shared/util.cjs' }]);
    expect(config.toolsets).toEqual({ research: { servers: ['files', 'crm'], deny: ['crm__update'] } });
  });

  it('reads tool_modules beside mcp_servers (snake_case keys) to the same modules', () => {
    const yaml = [
      'mcp_servers:',
      '  files: { command: node }',
      'tool_modules:',
      '  crm:',
      '    module: tools/crm.mjs',
      '    allowed_tools: [lookup, update]',
      '    exclude_tools: [update]',
      '    approval: { always: [lookup], timeout_ms: 60000 }',
      '    timeout_ms: 5000',
      '    heartbeat_timeout_ms: 2000',
      '    retry: { maximum_attempts: 5, initial_interval_ms: 200 }',
      '    local_activity: false',
      '    max_result_bytes: 4096',
      '    max_binary_bytes: 0',
      'toolsets:',
      '  research: { servers: [crm] }',
    ].join('\n');
    const config = parseConfig(yaml, 'yaml', {}, '/etc/mcp-turns/config.yaml', STATE_DIR);
    expect(config.toolModules).toEqual([resolved]);
    expect(config.toolsets).toEqual({ research: { servers: ['crm'] } });
  });

  it('takes a file of tool modules alone, in either spelling', () => {
    expect(parseConfig(JSON.stringify({ toolModules: { crm: 'crm.mjs' } }), 'json', {}, '/a/c.json', STATE_DIR)).toMatchObject({
      servers: [],
      toolModules: [{ name: 'crm', path: '/a/crm.mjs' }],
      toolsets: {},
    });
    expect(parseConfig(JSON.stringify({ tool_modules: { crm: 'crm.mjs' } }), 'json', {}, '/a/c.json', STATE_DIR).toolModules).toEqual([
      { ...defaultModuleConfig('crm'), path: '/a/crm.mjs' },
    ]);
  });

  it('refuses the other spelling of the modules section with one line', () => {
    expect(problemsOf(JSON.stringify({ mcpServers: {}, tool_modules: { crm: 'crm.mjs' } }))).toEqual([
      '(file): tool_modules: a file with mcpServers names its modules toolModules',
    ]);
    expect(problemsOf(JSON.stringify({ mcp_servers: {}, toolModules: { crm: 'crm.mjs' } }))).toEqual([
      '(file): toolModules: a file with mcp_servers names its modules tool_modules',
    ]);
    expect(problemsOf(JSON.stringify({ toolModules: {}, tool_modules: {} }))).toEqual(['(file): tool_modules: a file with mcpServers names its modules toolModules']);
  });

  it("refuses a module named as a server, and names each problem of the file's sections at its path", () => {
    expect(problemsOf(JSON.stringify({ mcpServers: { crm: { command: 'node' } }, toolModules: { crm: 'crm.mjs' } }))).toEqual([
      "toolModules.crm: crm is an MCP server's name too (one name is one server or one module)",
    ]);
    expect(
      problemsOf(
        JSON.stringify({
          mcp_servers: { files: { command: 'node' } },
          tool_modules: { crm: { module: 'crm.mjs', allowedTools: ['x'] } },
          toolsets: { research: { servers: ['files', 'web'] } },
        }),
      ),
    ).toEqual([
      'tool_modules.crm.allowedTools: unknown key (tool_modules uses allowed_tools)',
      'toolsets.research.servers.1: web is neither an MCP server nor a tool module of this file (files, crm)',
    ]);
  });

  it('does not call a server or module with a problem of its own unknown to the toolsets, nor miss a name clash for it', () => {
    expect(
      problemsOf(
        JSON.stringify({
          mcp_servers: { files: { command: 'node', timeoutMs: 5000 }, web: { command: 'node' } },
          tool_modules: { crm: { module: 'crm.mjs', timeout_ms: 1 }, web: 'web.mjs' },
          toolsets: { research: { servers: ['files', 'crm', 'web'] } },
        }),
      ),
    ).toEqual([
      'mcp_servers.files.timeoutMs: unknown key (mcp_servers uses timeout_ms)',
      expect.stringMatching(/^tool_modules\.crm\.timeout_ms: /),
      "tool_modules.web: web is an MCP server's name too (one name is one server or one module)",
    ]);
  });

  it("keeps an inject's ${context.…} templates as written: they are not environment variables", () => {
    const config = parseConfig(
      JSON.stringify({ mcp_servers: { crm: { command: 'node', inject: { tenant: '${context.tenant}', key: '${CRM_KEY}' } } } }),
      'json',
      { CRM_KEY: 'k-123' },
      '/a/c.json',
      STATE_DIR,
    );
    expect(config.servers[0]!.inject).toEqual({ tenant: '${context.tenant}', key: 'k-123' });
  });

  describe('paths relative to the config file', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsets-'));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("resolves a module's path against the file's directory, not the working directory", () => {
      fs.mkdirSync(path.join(dir, 'conf'));
      const file = path.join(dir, 'conf', 'mcp-turns.yaml');
      fs.writeFileSync(file, 'tool_modules:\n  crm: ./tools/crm.mjs\n  up: { module: ../up.cjs }\n');
      const config: ConfigFile = loadConfig(file, {}, STATE_DIR);
      expect(config.toolModules.map((m) => [m.name, m.path])).toEqual([
        ['crm', path.join(dir, 'conf', 'tools', 'crm.mjs')],
        ['up', path.join(dir, 'up.cjs')],
      ]);
    });

    it('resolves against the working directory for config text that names no file', () => {
      const config = parseConfig(JSON.stringify({ toolModules: { crm: 'crm.mjs' } }), 'json', {}, 'demo', STATE_DIR);
      expect(config.toolModules[0]!.path).toBe(path.resolve(process.cwd(), 'crm.mjs'));
    });
  });
});

describe("a turn's context and toolset in its input", () => {
  function problemsOf(input: unknown): string[] {
    try {
      parseChatTurnInput(input);
    } catch (err) {
      expect(err).toBeInstanceOf(ChatTurnInputError);
      return (err as ChatTurnInputError).problems;
    }
    throw new Error('expected the input to be refused');
  }

  it('accepts a context of JSON values and a toolset name', () => {
    const context = { tenant: 'acme', 'user-id': 7, flags: [true, null], nested: { a: { b: 'c' } }, tenant_2: 1.5 };
    expect(parseChatTurnInput({ question: 'q', context, toolset: 'research-2' })).toEqual({ question: 'q', context, toolset: 'research-2' });
    expect(parseChatTurnInput({ question: 'q', context: {} }).context).toEqual({});
  });

  it('refuses a context key with a dot, or over 64 characters, naming the field', () => {
    expect(problemsOf({ question: 'q', context: { 'user.id': 1 } })).toEqual(['context.user.id: context keys are 1-64 characters of A-Z a-z 0-9 _ -']);
    const long = 'k'.repeat(65);
    expect(problemsOf({ question: 'q', context: { [long]: 1 } })).toEqual([`context.${long}: context keys are 1-64 characters of A-Z a-z 0-9 _ -`]);
    expect(parseChatTurnInput({ question: 'q', context: { ['k'.repeat(64)]: 1 } }).context).toEqual({ ['k'.repeat(64)]: 1 });
  });

  it('refuses a context over 16 KB of JSON', () => {
    expect(problemsOf({ question: 'q', context: { big: 'x'.repeat(16 * 1024) } })).toEqual(['context: at most 16384 bytes of JSON']);
    // Counted in bytes of UTF-8, not characters.
    expect(problemsOf({ question: 'q', context: { big: 'é'.repeat(8 * 1024) } })).toEqual(['context: at most 16384 bytes of JSON']);
    const fits = 'x'.repeat(16 * 1024 - JSON.stringify({ big: '' }).length);
    expect(parseChatTurnInput({ question: 'q', context: { big: fits } }).context).toEqual({ big: fits });
  });

  it('refuses a context that is not a JSON object, and values that are not JSON', () => {
    expect(problemsOf({ question: 'q', context: ['a'] })).toEqual([expect.stringMatching(/^context: /)]);
    expect(problemsOf({ question: 'q', context: 'tenant=acme' })).toEqual([expect.stringMatching(/^context: /)]);
    expect(problemsOf({ question: 'q', context: { when: new Date(0) } })).toEqual([expect.stringMatching(/^context\.when: /)]);
    expect(problemsOf({ question: 'q', context: { n: Number.NaN } })).toEqual([expect.stringMatching(/^context\.n: /)]);
  });

  it('refuses a toolset name that is not one, naming the field', () => {
    expect(problemsOf({ question: 'q', toolset: 'my set' })).toEqual(['toolset: a toolset name: 1-64 characters of A-Z a-z 0-9 _ -']);
    expect(problemsOf({ question: 'q', toolset: '' })).toEqual(['toolset: a toolset name: 1-64 characters of A-Z a-z 0-9 _ -']);
    expect(problemsOf({ question: 'q', toolset: 't'.repeat(65) })).toEqual(['toolset: a toolset name: 1-64 characters of A-Z a-z 0-9 _ -']);
  });
});
