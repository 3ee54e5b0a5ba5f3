/**
 * Loading and validating the config file: `${VAR}` / `${VAR:-default}` substitution in every string,
 * then the schema (src/mcp/config-schema.ts); every problem is one line that starts with its path
 * (`mcp_servers.files.command: required for a stdio server`), and all of a file's problems are
 * reported at once.
 */
import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import {
  ConfigFileSchema,
  SERVER_NAME_RULE,
  camelEntryToSnake,
  keyAsWritten,
  snakeSpelling,
  type ServerConfig,
} from './config-schema';

export type { ServerConfig, Transport } from './config-schema';

/** The parsed file: the MCP servers, and the sections other modules validate. */
export interface McpTurnsConfig {
  servers: ServerConfig[];
  /** The raw `claude:` section (validated by src/claude/config.ts). */
  claude?: Record<string, unknown>;
  /** The raw `worker:` section (validated by src/worker/worker-tuning.ts). */
  worker?: unknown;
  /** The file it came from. */
  source: string;
}

/** A refused config file. The worker prints `problems` one per line and exits with code 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    /** The file (or source name) refused. */
    readonly source: string,
    /** One line per problem, each starting with its path. */
    readonly problems: string[],
  ) {
    super(`invalid config ${source}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

/** `${NAME}` or `${NAME:-default}`; `$${` is a literal `${`. */
const VARIABLE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Substitutes variables in every string, shell style: `${VAR}` is VAR's value (empty if set and
 * empty), `${VAR:-d}` is d when VAR is unset or empty. An unset variable without default is a
 * problem reported at the path of the string holding it.
 */
function substitute(
  value: unknown,
  path: string[],
  env: NodeJS.ProcessEnv,
  problems: Map<string, string>,
): unknown {
  if (typeof value === 'string') {
    return value.replace(VARIABLE, (all, name: string | undefined, fallback: string | undefined) => {
      if (name === undefined) return '${';
      const v = env[name];
      if (fallback !== undefined) return v !== undefined && v !== '' ? v : fallback;
      if (v !== undefined) return v;
      const at = path.join('.') || '(file)';
      const before = problems.get(at);
      problems.set(at, `${before ? `${before}; ` : ''}environment variable ${name} is not set`);
      return all;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, [...path, String(i)], env, problems));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, substitute(v, [...path, k], env, problems)]),
    );
  }
  return value;
}

/**
 * Parses config text. `format` is 'json' or 'yaml'; `sourceName` names it in the error.
 * Throws {@link ConfigError} listing every problem.
 */
export function parseConfig(
  text: string,
  format: 'json' | 'yaml',
  env: NodeJS.ProcessEnv = process.env,
  sourceName = '(config)',
): McpTurnsConfig {
  let raw: unknown;
  try {
    raw = format === 'yaml' ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    const first = (err as Error).message.split('\n')[0];
    throw new ConfigError(sourceName, [`(file): not valid ${format.toUpperCase()}: ${first}`]);
  }
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(sourceName, ['(file): must be an object with mcpServers or mcp_servers']);
  }
  const top = raw as Record<string, unknown>;
  const camel = 'mcpServers' in top;
  if (camel && 'mcp_servers' in top)
    throw new ConfigError(sourceName, ['(file): use either mcpServers or mcp_servers, not both']);

  // Paths whose strings name a missing variable: the schema's complaints about them would only echo it.
  const missing = new Map<string, string>();
  const substituted = substitute(top, [], env, missing) as Record<string, unknown>;
  const problems = [...missing].map(([path, problem]) => `${path}: ${problem}`);
  let normalized: Record<string, unknown> = substituted;
  if (camel) {
    const { mcpServers, ...rest } = substituted;
    const servers =
      mcpServers && typeof mcpServers === 'object' && !Array.isArray(mcpServers)
        ? Object.fromEntries(
            Object.entries(mcpServers).map(([n, e]) => [
              n,
              camelEntryToSnake(e, ['mcpServers', n], problems),
            ]),
          )
        : mcpServers;
    normalized = { ...rest, mcp_servers: servers };
  }

  const parsed = ConfigFileSchema.safeParse(normalized);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = issue.path.map(String);
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
      for (const key of keys) {
        const full = key === undefined ? path : [...path, key];
        const shown = full.map((_, i) =>
          i === 0 && full[0] === 'mcp_servers' && camel ? 'mcpServers' : keyAsWritten(full, i, camel),
        );
        let message = issue.message;
        if (key !== undefined) {
          const meant = !camel && full.length > 2 ? snakeSpelling(key) : undefined;
          message = meant ? `unknown key (mcp_servers uses ${meant})` : 'unknown key';
        } else if (issue.code === 'invalid_key') {
          message = SERVER_NAME_RULE;
        }
        const at = shown.join('.') || '(file)';
        if (!missing.has(at)) problems.push(`${at}: ${message}`);
      }
    }
  }
  if (problems.length || !parsed.success) throw new ConfigError(sourceName, problems);
  const { mcp_servers: servers = [], claude, worker } = parsed.data;
  return {
    servers,
    ...(claude != null ? { claude } : {}),
    ...(worker !== undefined ? { worker } : {}),
    source: sourceName,
  };
}

/**
 * Reads a JSON or YAML config file: `.yaml` / `.yml` are YAML, anything else JSON. Throws
 * {@link ConfigError} listing every problem (an unreadable file is one).
 */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): McpTurnsConfig {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, [
      `(file): cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    ]);
  }
  const format = /\.ya?ml$/i.test(path) ? 'yaml' : 'json';
  return parseConfig(text, format, env, path);
}
