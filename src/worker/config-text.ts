/**
 * Config file text, before any section is checked: reading and parsing it (JSON, or YAML for
 * `.yaml` / `.yml`), `${VAR}` / `${VAR:-default}` substitution, the error a refused file gives, its
 * problems as lines, and one section read alone (for a client that needs only the keyring and must
 * not load, or fail on, the rest). src/worker/worker-file.ts reads the whole file.
 */
import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';

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
export function substitute(
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

export type ConfigFormat = 'json' | 'yaml';

/** A config file's text and format (`.yaml` / `.yml` are YAML, anything else JSON). Throws {@link ConfigError}. */
export function readConfigFile(path: string): { text: string; format: ConfigFormat } {
  try {
    return { text: fs.readFileSync(path, 'utf8'), format: /\.ya?ml$/i.test(path) ? 'yaml' : 'json' };
  } catch (err) {
    throw new ConfigError(path, [`(file): cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
  }
}

/** Config text parsed; `sourceName` names it in the error. Throws {@link ConfigError}. */
export function parseConfigText(text: string, format: ConfigFormat, sourceName: string): unknown {
  try {
    return format === 'yaml' ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new ConfigError(sourceName, [`(file): not valid ${format.toUpperCase()}: ${(err as Error).message.split('\n')[0]}`]);
  }
}

/**
 * A schema's complaints as problems, each at its path under `prefix` (`serve.port`); an unknown key
 * is a problem of its own at its own path.
 */
export function issueProblems(issues: readonly z.core.$ZodIssue[], prefix: readonly string[] = []): Array<{ at: string; message: string }> {
  return issues.flatMap((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
    return keys.map((key) => ({
      at: [...prefix, ...issue.path.map(String), ...(key === undefined ? [] : [key])].join('.'),
      message: key === undefined ? issue.message : 'unknown key',
    }));
  });
}

/**
 * One top-level section of a config file, variables substituted in it alone: for a process that
 * needs only that section (a client reading the keyring) and must not fail on the others.
 * Throws {@link ConfigError} when the file cannot be read or parsed, or a variable is unset.
 */
export function readConfigSection(path: string, name: string, env: NodeJS.ProcessEnv = process.env): unknown {
  const { text, format } = readConfigFile(path);
  const raw = parseConfigText(text, format, path);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const section = (raw as Record<string, unknown>)[name];
  if (section === undefined) return undefined;
  const missing = new Map<string, string>();
  const substituted = substitute(section, [name], env, missing);
  if (missing.size) throw new ConfigError(path, [...missing].map(([at, problem]) => `${at}: ${problem}`));
  return substituted;
}
