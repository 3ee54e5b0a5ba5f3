/**
 * A turn's context reaching MCP servers through `inject` templates (src/core/context-templates.ts):
 * the paths a server's inject refers to, those a turn's context lacks, and the values filled in; and
 * the MCP pool using them (src/mcp/pool.ts): a server whose inject needs a value the turn's context
 * lacks is unavailable to it, and a call's injected arguments are filled from the context (against
 * the counting fixture, a real stdio MCP server spawned with node).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { contextPathsOf, fillContext, missingContextPaths } from '../../src/core/context-templates';
import { McpPool, parseMcpServers } from '../../src/mcp';
import { countingStdio } from '../support/mcp-servers';

describe('contextPathsOf', () => {
  it('finds every template in every string of the inject, nested paths included, each once', () => {
    const inject = {
      tenant: '${context.tenant}',
      headers: { user: 'user-${context.user.id}/${context.user.role}' },
      tags: ['${context.tenant}', 'fixed', { deep: ['${context.a_b-c.d}'] }],
      count: 3,
      flag: true,
      none: null,
    };
    expect(contextPathsOf(inject)).toEqual(['tenant', 'user.id', 'user.role', 'a_b-c.d']);
  });

  it('finds none in values without templates, or in forms that are not templates', () => {
    expect(contextPathsOf({})).toEqual([]);
    expect(contextPathsOf(undefined)).toEqual([]);
    expect(contextPathsOf({ a: 'plain', b: '${TENANT}', c: '$context.tenant', d: '${context.}', e: '${context.a..b}', f: '${ context.a }' })).toEqual([]);
  });

  it('reads a bare string', () => {
    expect(contextPathsOf('${context.x}')).toEqual(['x']);
  });
});

describe('missingContextPaths', () => {
  const inject = { tenant: '${context.tenant}', user: '${context.user.id}', region: 'eu-${context.region}' };

  it('names the paths the context does not set', () => {
    expect(missingContextPaths(inject, { tenant: 't1' })).toEqual(['user.id', 'region']);
    expect(missingContextPaths(inject, { tenant: 't1', user: { name: 'x' }, region: 'west' })).toEqual(['user.id']);
  });

  it('names every path when the turn has no context', () => {
    expect(missingContextPaths(inject, undefined)).toEqual(['tenant', 'user.id', 'region']);
  });

  it('names none when the context sets them all, whatever their values (false, 0, null and "" are set)', () => {
    expect(missingContextPaths(inject, { tenant: '', user: { id: 0 }, region: null })).toEqual([]);
    expect(missingContextPaths({ a: '${context.a}' }, { a: false })).toEqual([]);
  });

  it('does not go through a value that is not an object, nor take inherited keys', () => {
    expect(missingContextPaths({ a: '${context.user.id}' }, { user: 'u1' })).toEqual(['user.id']);
    expect(missingContextPaths({ a: '${context.toString}', b: '${context.user.constructor}' }, { user: {} })).toEqual(['toString', 'user.constructor']);
  });

  it('names none for an inject without templates', () => {
    expect(missingContextPaths({ key: 'fixed' }, undefined)).toEqual([]);
  });
});

describe('fillContext', () => {
  const context = {
    tenant: 'acme',
    limit: 25,
    enabled: false,
    nothing: null,
    user: { id: 7, name: 'Ann', roles: ['admin', 'dev'] },
    tags: ['a', 'b'],
  };

  it('gives a string that is only the template the value as it is: its type kept', () => {
    expect(fillContext('${context.tenant}', context)).toBe('acme');
    expect(fillContext('${context.limit}', context)).toBe(25);
    expect(fillContext('${context.enabled}', context)).toBe(false);
    expect(fillContext('${context.nothing}', context)).toBeNull();
    expect(fillContext('${context.user}', context)).toEqual({ id: 7, name: 'Ann', roles: ['admin', 'dev'] });
    expect(fillContext('${context.tags}', context)).toEqual(['a', 'b']);
  });

  it('replaces a template inside a longer string by the value\'s text (JSON for what is not a string)', () => {
    expect(fillContext('tenant=${context.tenant}', context)).toBe('tenant=acme');
    expect(fillContext('${context.tenant}/${context.user.id}', context)).toBe('acme/7');
    expect(fillContext('limit ${context.limit}, on: ${context.enabled}, x: ${context.nothing}', context)).toBe('limit 25, on: false, x: null');
    expect(fillContext('user ${context.user}', context)).toBe('user {"id":7,"name":"Ann","roles":["admin","dev"]}');
    expect(fillContext('tags ${context.tags}', context)).toBe('tags ["a","b"]');
    expect(fillContext(' ${context.tenant}', context)).toBe(' acme');
  });

  it('follows nested paths, into arrays by index too', () => {
    expect(fillContext('${context.user.name}', context)).toBe('Ann');
    expect(fillContext('${context.user.roles.1}', context)).toBe('dev');
    expect(fillContext('first role: ${context.user.roles.0}', context)).toBe('first role: admin');
  });

  it('leaves a template whose path the context lacks as written', () => {
    expect(fillContext('${context.region}', context)).toBe('${context.region}');
    expect(fillContext('${context.user.email}', context)).toBe('${context.user.email}');
    expect(fillContext('${context.tenant.name}', context)).toBe('${context.tenant.name}');
    expect(fillContext('${context.tenant}-${context.region}', context)).toBe('acme-${context.region}');
    expect(fillContext('${context.tenant}', undefined)).toBe('${context.tenant}');
  });

  it('fills every string of objects and arrays, keeping their shape and every other value', () => {
    const inject = {
      tenant: '${context.tenant}',
      limit: '${context.limit}',
      headers: { 'X-User': 'user-${context.user.id}', 'X-Missing': '${context.region}' },
      list: ['${context.tags}', 'x-${context.tenant}', 3, null, true],
      fixed: 'no template',
      number: 1,
    };
    expect(fillContext(inject, context)).toEqual({
      tenant: 'acme',
      limit: 25,
      headers: { 'X-User': 'user-7', 'X-Missing': '${context.region}' },
      list: [['a', 'b'], 'x-acme', 3, null, true],
      fixed: 'no template',
      number: 1,
    });
  });

  it('does not change the value it is given', () => {
    const inject = { a: '${context.tenant}', b: ['${context.limit}'] };
    const copy = structuredClone(inject);
    fillContext(inject, context);
    expect(inject).toEqual(copy);
  });

  it('leaves values other than strings, arrays and objects as they are', () => {
    expect(fillContext(5, context)).toBe(5);
    expect(fillContext(null, context)).toBeNull();
    expect(fillContext(undefined, context)).toBeUndefined();
    expect(fillContext(true, context)).toBe(true);
  });

  it('takes a value filled in as data, not as a template again', () => {
    expect(fillContext('${context.a}', { a: '${context.b}', b: 'no' })).toBe('${context.b}');
    expect(fillContext('x ${context.a}', { a: '${context.b}', b: 'no' })).toBe('x ${context.b}');
  });
});

describe('the MCP pool and a turn\'s context', () => {
  jest.setTimeout(30_000);
  let dir: string;
  let pool: McpPool | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'context-pool-'));
  });
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function poolOf(servers: Record<string, unknown>): McpPool {
    const parsed = parseMcpServers(servers, 'mcp_servers', dir);
    expect(parsed.problems).toEqual([]);
    pool = new McpPool(parsed.servers!);
    return pool;
  }

  it('lists a server whose inject needs a context value the turn lacks as unavailable, naming the values, without starting it', async () => {
    const p = poolOf({
      crm: { command: path.join(dir, 'never-started'), inject: { tenant: '${context.tenant}', user: 'u-${context.user.id}' } },
    });
    expect(await p.listTools({ context: { user: { name: 'Ann' } } })).toMatchObject({
      tools: [],
      unavailable: [
        {
          server: 'crm',
          reason: 'its inject needs context.tenant, context.user.id, which this turn does not set (give the turn a context with them)',
        },
      ],
    });
    expect(await p.listTools({})).toMatchObject({
      unavailable: [{ server: 'crm', reason: expect.stringMatching(/^its inject needs context\.tenant, context\.user\.id, /) }],
    });
    expect(p.status()[0]).toMatchObject({ spawned: 0, connected: false });
  });

  it("fills a call's injected arguments from the turn's context (a whole template keeps its type), hidden from Claude", async () => {
    const countFile = path.join(dir, 'calls.jsonl');
    const p = poolOf({ counting: countingStdio(countFile, { inject: { label: 'tenant-${context.tenant}', ms: '${context.delay}' } }) });
    const context = { tenant: 'acme', delay: 1 };
    const listing = await p.listTools({ context });
    expect(listing.unavailable).toEqual([]);
    const slow = listing.tools.find((t) => t.name === 'slow');
    expect(slow?.inputSchema.properties ?? {}).not.toHaveProperty('label');
    expect(slow?.inputSchema.properties ?? {}).not.toHaveProperty('ms');

    const result = await p.callTool({ server: 'counting', tool: 'slow', arguments: {}, toolUseId: 'toolu_1', context });
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'slow tenant-acme done after 1 ms' }] });
    expect(fs.readFileSync(countFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l).args)).toEqual([{ label: 'tenant-acme', ms: 1 }]);
  });

  it('refuses a call of a turn whose context lacks a value the inject needs, as an is_error result, without calling the tool', async () => {
    const countFile = path.join(dir, 'calls.jsonl');
    const p = poolOf({ counting: countingStdio(countFile, { inject: { label: '${context.tenant}' } }) });
    const result = await p.callTool({ server: 'counting', tool: 'count', arguments: {}, toolUseId: 'toolu_1', context: { other: 1 } });
    expect(result).toMatchObject({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'server counting is unavailable to this turn: its inject needs context.tenant, which this turn does not set (give the turn a context with it)',
        },
      ],
    });
    expect(fs.existsSync(countFile)).toBe(false);
  });
});
