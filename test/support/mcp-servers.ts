/**
 * Real MCP servers from npm and our own fixtures, spawned with node and a resolved path. Each of our
 * fixtures serves one protocol era, picked by `era` (its `MCP_FIXTURE_ERA`): `legacy` (2025-11-25
 * and before: `initialize`, sessions) or `modern` (2026-07-28: `server/discover`, no sessions, a
 * legacy `initialize` refused with -32022). A client must speak the fixture's era to connect. Any
 * fixture also takes, in `extra.env`, `REQUEST_LOG` (a file it logs every request method to) and
 * `DISCOVER_TTL_MS` (its modern discover result's `ttlMs`): see test/support/serve-fixture.js.
 */
import path from 'node:path';

export const MCP_ERAS = ['legacy', 'modern'] as const;
export type McpEra = (typeof MCP_ERAS)[number];

/** A fixture's stdio entry: `extra` is merged in last, its `env` over the fixture's own. */
function fixtureStdio(
  file: string,
  env: Record<string, string>,
  era: McpEra,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const { env: extraEnv, ...rest } = extra as { env?: Record<string, string> };
  return {
    type: 'stdio',
    command: process.execPath,
    args: [file],
    env: { ...env, MCP_FIXTURE_ERA: era, ...extraEnv },
    ...rest,
  };
}

export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
export const COUNTING = path.join(__dirname, 'counting-mcp-server.js');

/** `mcp_servers` entry for server-everything over stdio. */
export function everythingStdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra };
}

/** `mcp_servers` entry for the counting fixture; every call appends a line to countFile. */
export function countingStdio(
  countFile: string,
  extra: Record<string, unknown> = {},
  era: McpEra = 'legacy',
): Record<string, unknown> {
  return fixtureStdio(COUNTING, { COUNT_FILE: countFile }, era, extra);
}

export const SCHEMAS = path.join(__dirname, 'schema-mcp-server.js');

/** `mcp_servers` entry for the schema fixture: tools with top-level allOf, anyOf and oneOf input schemas. */
export function schemasStdio(
  extra: Record<string, unknown> = {},
  era: McpEra = 'legacy',
): Record<string, unknown> {
  return fixtureStdio(SCHEMAS, {}, era, extra);
}

export const CRASHING = path.join(__dirname, 'crashing-mcp-server.py');

/** `mcp_servers` entry for a Python server that exits at start with a traceback quoting `DB_PASSWORD`. */
export function crashingStdio(dbPassword: string): Record<string, unknown> {
  return { type: 'stdio', command: 'python3', args: [CRASHING], env: { DB_PASSWORD: dbPassword } };
}

export const DOCUMENTS = path.join(__dirname, 'document-mcp-server.js');

/** `mcp_servers` entry for the document fixture: `read_document` answers ~100 KB per name; with countFile, every call appends a line to it. */
export function documentStdio(
  countFile?: string,
  extra: Record<string, unknown> = {},
  era: McpEra = 'legacy',
): Record<string, unknown> {
  return fixtureStdio(DOCUMENTS, countFile ? { COUNT_FILE: countFile } : {}, era, extra);
}

export const MODERN = path.join(__dirname, 'modern-mcp-server.js');

/**
 * `mcp_servers` entry for the modern-only fixture over stdio (`lookup_order`, `echo`); with
 * countFile, every call appends a line to it. Over HTTP: startModernHttp in test/integration/mcp-fixtures.ts.
 */
export function modernStdio(
  countFile?: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return fixtureStdio(MODERN, countFile ? { COUNT_FILE: countFile } : {}, 'modern', extra);
}

export const LEGACY_ELICIT = path.join(__dirname, 'legacy-elicit-server.js');

/** `mcp_servers` entry for the legacy-era server whose `confirm_order` asks the person during the call; with countFile, every call appends a line to it. */
export function legacyElicitStdio(countFile?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [LEGACY_ELICIT], ...(countFile ? { env: { COUNT_FILE: countFile } } : {}), ...extra };
}
