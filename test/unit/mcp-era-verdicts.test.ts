/** What a worker remembers of each server's protocol era: per endpoint and authorization context, until it expires. */
import type { DiscoverResult } from '@modelcontextprotocol/client';
import { parseMcpServers, type ServerConfig } from '../../src/mcp';
import { EraVerdicts } from '../../src/mcp/era-verdicts';

function server(entry: Record<string, unknown>): ServerConfig {
  const { servers, problems } = parseMcpServers({ s: entry }, 'mcp_servers', '/state');
  expect(problems).toEqual([]);
  return servers![0]!;
}

function discover(extra: Partial<DiscoverResult> = {}): DiscoverResult {
  return { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete', ...extra } as DiscoverResult;
}

describe('EraVerdicts', () => {
  let now = 1_000_000;
  const verdicts = (): EraVerdicts => new EraVerdicts(() => now);
  const http = server({ url: 'https://mcp.example.com/mcp', authorization: 'token-alice', discovery_ttl_ms: 60_000 });

  it('keeps a legacy verdict for discovery_ttl_ms, then asks again', () => {
    const v = verdicts();
    v.remember(http, { kind: 'legacy' });
    expect(v.get(http)).toEqual({ kind: 'legacy' });
    now += 59_999;
    expect(v.get(http)).toEqual({ kind: 'legacy' });
    now += 1;
    expect(v.get(http)).toBeUndefined();
  });

  it("keeps a modern verdict for the discover result's ttlMs, at most discovery_ttl_ms, and never one marked immediately stale", () => {
    const v = verdicts();
    v.remember(http, { kind: 'modern', discover: discover({ ttlMs: 5_000 }) });
    expect(v.get(http)).toMatchObject({ kind: 'modern' });
    now += 5_000;
    expect(v.get(http)).toBeUndefined();

    v.remember(http, { kind: 'modern', discover: discover({ ttlMs: 3_600_000 }) });
    now += 60_000;
    expect(v.get(http)).toBeUndefined();

    v.remember(http, { kind: 'modern', discover: discover({ ttlMs: 0 }) });
    expect(v.get(http)).toBeUndefined();

    v.remember(http, { kind: 'modern', discover: discover() });
    now += 59_000;
    expect(v.get(http)).toMatchObject({ kind: 'modern' });
  });

  it('keeps verdicts per authorization context; a public discover result serves every context of its endpoint', () => {
    const v = verdicts();
    const bob = server({ url: 'https://mcp.example.com/mcp', authorization: 'token-bob', discovery_ttl_ms: 60_000 });
    v.remember(http, { kind: 'legacy' });
    expect(v.get(bob)).toBeUndefined();
    v.remember(http, { kind: 'modern', discover: discover({ ttlMs: 10_000, cacheScope: 'private' }) });
    expect(v.get(bob)).toBeUndefined();
    v.remember(http, { kind: 'modern', discover: discover({ ttlMs: 10_000, cacheScope: 'public' }) });
    expect(v.get(bob)).toMatchObject({ kind: 'modern' });
    const other = server({ url: 'https://other.example.com/mcp', authorization: 'token-alice' });
    expect(v.get(other)).toBeUndefined();
  });

  it('tells stdio servers apart by their environment, and forgets a verdict a connect failed with', () => {
    const v = verdicts();
    const a = server({ command: 'node', args: ['server.js'], env: { TENANT: 'a' } });
    const b = server({ command: 'node', args: ['server.js'], env: { TENANT: 'b' } });
    v.remember(a, { kind: 'legacy' });
    expect(v.get(a)).toEqual({ kind: 'legacy' });
    expect(v.get(b)).toBeUndefined();
    v.forget(a);
    expect(v.get(a)).toBeUndefined();
  });
});

describe('the protocol setting', () => {
  it('defaults to auto and refuses 2026-07-28 over the legacy SSE transport', () => {
    expect(server({ command: 'x' })).toMatchObject({ protocol: 'auto', discoveryTtlMs: 600_000 });
    expect(parseMcpServers({ s: { type: 'sse', url: 'http://h/sse', protocol: '2026-07-28' } }, 'mcp_servers', '/s').problems).toEqual([
      'mcp_servers.s.protocol: an sse server speaks the legacy era only (use type: streamable-http for 2026-07-28)',
    ]);
    expect(parseMcpServers({ s: { command: 'x', protocol: '2025' } }, 'mcp_servers', '/s').problems).toEqual([
      expect.stringMatching(/^mcp_servers\.s\.protocol: /),
    ]);
    expect(parseMcpServers({ s: { command: 'x', discoveryTtlMs: 5 } }, 'mcpServers', '/s').servers![0]).toMatchObject({ discoveryTtlMs: 5 });
  });
});
