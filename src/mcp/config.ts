/**
 * Validating the MCP servers section of the worker's config file (src/config/config-file.ts reads the
 * file and substitutes its variables): `.mcp.json`'s camelCase `mcpServers` is mapped onto the
 * snake_case schema (src/mcp/config-schema.ts), and every problem is one line that starts with its
 * path as the file spells it (`mcpServers.files.command: required for a stdio server`).
 */
import {
  mcpServersSchema,
  SERVER_NAME_RULE,
  camelEntryToSnake,
  keyAsWritten,
  snakeSpelling,
  type ServerConfig,
} from './config-schema';

export type { ServerConfig, Transport } from './config-schema';

/** The key a file gives its servers under, which also says how their keys are spelled. */
export type ServersKey = 'mcpServers' | 'mcp_servers';

/** A validated servers section; `servers` is undefined when the section itself is refused. */
export interface McpServersResult {
  servers?: ServerConfig[];
  /** One line per problem, each starting with its path in the file. */
  problems: string[];
}

/**
 * Validates the value of a file's `mcpServers` (camelCase keys) or `mcp_servers` (snake_case keys);
 * an absent section is no servers. Schema problems at a path in `reported` (one already reported,
 * e.g. for an unset variable) are left out, since they would only echo it; a key spelled the other
 * shape's way is always reported. OAuth token files default under `stateDir` (src/mcp/config-schema.ts).
 */
export function parseMcpServers(
  section: unknown,
  key: ServersKey,
  stateDir: string,
  reported: ReadonlySet<string> = new Set(),
): McpServersResult {
  const camel = key === 'mcpServers';
  const problems: string[] = [];
  const value =
    camel && section && typeof section === 'object' && !Array.isArray(section)
      ? Object.fromEntries(
          Object.entries(section).map(([n, e]) => [n, camelEntryToSnake(e, ['mcpServers', n], problems)]),
        )
      : section;

  const parsed = mcpServersSchema(stateDir).optional().safeParse(value);
  if (parsed.success) return { servers: parsed.data ?? [], problems };
  for (const issue of parsed.error.issues) {
    const path = ['mcp_servers', ...issue.path.map(String)];
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
    for (const unknownKey of keys) {
      const full = unknownKey === undefined ? path : [...path, unknownKey];
      const shown = full.map((_, i) => (i === 0 ? key : keyAsWritten(full, i, camel)));
      let message = issue.message;
      if (unknownKey !== undefined) {
        const meant = !camel && full.length > 2 ? snakeSpelling(unknownKey) : undefined;
        message = meant ? `unknown key (mcp_servers uses ${meant})` : 'unknown key';
      } else if (issue.code === 'invalid_key') {
        message = SERVER_NAME_RULE;
      }
      const at = shown.join('.');
      if (!reported.has(at)) problems.push(`${at}: ${message}`);
    }
  }
  return { problems };
}
