/**
 * Loading and validating the config file: `${VAR}` / `${VAR:-default}` substitution in every string,
 * then the schema; every problem is one line that starts with its path (`mcp_servers.files.command`).
 */
import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigFileSchema, NAME_RULE, camelEntryToSnake, snakeKeyToCamel, type ServerFileEntry } from './config-schema';

export type Transport = 'stdio' | 'streamable-http' | 'sse';

/** One MCP server as the worker uses it (secrets included: worker-side only). */
export interface ServerConfig {
  name: string;
  transport: Transport;
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  headers: Record<string, string>;
  allowedTools?: string[];
  excludeTools: string[];
  timeoutMs: number;
  connectTimeoutMs: number;
  heartbeatTimeoutMs: number;
  retry: { maximumAttempts: number; initialIntervalMs: number; backoffCoefficient: number; maximumIntervalMs: number };
  breaker: { failureThreshold: number; cooldownMs: number; maxCooldownMs: number };
  inject: Record<string, unknown>;
  maxResultBytes: number;
}

export interface McpTurnsConfig {
  servers: ServerConfig[];
  /** The raw `claude:` section (validated by src/claude/config.ts). */
  claude?: unknown;
  /** The raw `worker:` section (validated by src/worker/worker-tuning.ts). */
  worker?: unknown;
  /** The file it came from. */
  source: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`invalid config ${source}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function substitute(value: unknown, path: string[], env: NodeJS.ProcessEnv, problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(VAR, (_all, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      problems.push(`${path.join('.')}: environment variable ${name} is not set`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, [...path, String(i)], env, problems));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, [...path, k], env, problems)]));
  }
  return value;
}

function toServerConfig(name: string, s: ServerFileEntry): ServerConfig {
  const transport: Transport = s.type === 'http' ? 'streamable-http' : (s.type ?? (s.url ? 'streamable-http' : 'stdio'));
  const headers = { ...s.headers };
  if (s.authorization) headers.Authorization = /\s/.test(s.authorization) ? s.authorization : `Bearer ${s.authorization}`;
  return {
    name,
    transport,
    ...(s.command !== undefined ? { command: s.command } : {}),
    args: s.args,
    env: s.env,
    ...(s.cwd !== undefined ? { cwd: s.cwd } : {}),
    ...(s.url !== undefined ? { url: s.url } : {}),
    headers,
    ...(s.allowed_tools !== undefined ? { allowedTools: s.allowed_tools } : {}),
    excludeTools: s.exclude_tools,
    timeoutMs: s.timeout_ms,
    connectTimeoutMs: s.connect_timeout_ms,
    heartbeatTimeoutMs: s.heartbeat_timeout_ms,
    retry: {
      maximumAttempts: s.retry.maximum_attempts,
      initialIntervalMs: s.retry.initial_interval_ms,
      backoffCoefficient: s.retry.backoff_coefficient,
      maximumIntervalMs: s.retry.maximum_interval_ms,
    },
    breaker: { failureThreshold: s.breaker.failure_threshold, cooldownMs: s.breaker.cooldown_ms, maxCooldownMs: s.breaker.max_cooldown_ms },
    inject: s.inject,
    maxResultBytes: s.max_result_bytes,
  };
}

/** Parses config text; `format` is 'json' or 'yaml'. Throws {@link ConfigError} listing every problem. */
export function parseConfig(text: string, format: 'json' | 'yaml', env: NodeJS.ProcessEnv = process.env, source = '(config)'): McpTurnsConfig {
  let raw: unknown;
  try {
    raw = format === 'yaml' ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new ConfigError(source, [`(file): not valid ${format.toUpperCase()}: ${(err as Error).message.split('\n')[0]}`]);
  }
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(source, ['(file): must be an object with mcp_servers or mcpServers']);
  const problems: string[] = [];
  const top = raw as Record<string, unknown>;
  const camel = 'mcpServers' in top;
  if (camel && 'mcp_servers' in top) throw new ConfigError(source, ['(file): use either mcpServers or mcp_servers, not both']);
  const rootKey = camel ? 'mcpServers' : 'mcp_servers';
  const substituted = substitute(top, [], env, problems) as Record<string, unknown>;
  const { mcpServers, ...rest } = substituted;
  const normalized = camel
    ? {
        ...rest,
        mcp_servers:
          mcpServers && typeof mcpServers === 'object' && !Array.isArray(mcpServers)
            ? Object.fromEntries(Object.entries(mcpServers).map(([n, e]) => [n, camelEntryToSnake(e)]))
            : mcpServers,
      }
    : substituted;
  const parsed = ConfigFileSchema.safeParse(normalized);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = issue.path.map(String);
      if (path[0] === 'mcp_servers') path[0] = rootKey;
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
      for (const key of keys) {
        const full = key === undefined ? path : [...path, key];
        const shown = camel ? full.map((p, i) => (i >= 2 ? snakeKeyToCamel(p) : p)) : full;
        const message = key !== undefined ? 'unknown key' : issue.code === 'invalid_key' ? NAME_RULE : issue.message;
        problems.push(`${shown.join('.') || '(file)'}: ${message}`);
      }
    }
  }
  if (problems.length || !parsed.success) throw new ConfigError(source, problems);
  const servers = Object.entries(parsed.data.mcp_servers ?? {}).map(([name, s]) => toServerConfig(name, s));
  return {
    servers,
    ...(parsed.data.claude !== undefined ? { claude: parsed.data.claude } : {}),
    ...(parsed.data.worker !== undefined ? { worker: parsed.data.worker } : {}),
    source,
  };
}

/** Reads a JSON or YAML config file (by extension; `.json` and anything else that parses as JSON). */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): McpTurnsConfig {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, [`(file): cannot read: ${(err as Error).message}`]);
  }
  const format = /\.ya?ml$/i.test(path) ? 'yaml' : 'json';
  return parseConfig(text, format, env, path);
}
