/** Real MCP servers from npm (and our counting fixture), spawned with node and a resolved path. */
import path from 'node:path';

export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
export const COUNTING = path.join(__dirname, 'counting-mcp-server.js');

/** `mcp_servers` entry for server-everything over stdio. */
export function everythingStdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra };
}

/** `mcp_servers` entry for the counting fixture; every call appends a line to countFile. */
export function countingStdio(countFile: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [COUNTING], env: { COUNT_FILE: countFile }, ...extra };
}

export const SCHEMAS = path.join(__dirname, 'schema-mcp-server.js');

/** `mcp_servers` entry for the schema fixture: tools with top-level allOf, anyOf and oneOf input schemas. */
export function schemasStdio(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [SCHEMAS], ...extra };
}

export const CRASHING = path.join(__dirname, 'crashing-mcp-server.py');

/** `mcp_servers` entry for a Python server that exits at start with a traceback quoting `DB_PASSWORD`. */
export function crashingStdio(dbPassword: string): Record<string, unknown> {
  return { type: 'stdio', command: 'python3', args: [CRASHING], env: { DB_PASSWORD: dbPassword } };
}

export const DOCUMENTS = path.join(__dirname, 'document-mcp-server.js');

/** `mcp_servers` entry for the document fixture: `read_document` answers ~100 KB per name; with countFile, every call appends a line to it. */
export function documentStdio(countFile?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [DOCUMENTS], ...(countFile ? { env: { COUNT_FILE: countFile } } : {}), ...extra };
}
