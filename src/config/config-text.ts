/**
 * Config file text, before any section is checked: reading and parsing it (JSON, or YAML for
 * `.yaml` / `.yml`), `${VAR}` / `${VAR:-default}` substitution, the error a refused file gives, and
 * one section substituted alone (for a command that needs only that section and must not fail on the
 * rest). config-file.ts checks the whole file.
 */
import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';

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

/** Config text, its format and where it came from (a file's path, or a name such as `demo`). */
export interface ConfigDocument {
  text: string;
  format: ConfigFormat;
  source: string;
}

/** A config file's text and format (`.yaml` / `.yml` are YAML, anything else JSON). Throws {@link ConfigError}. */
export function readConfigDocument(path: string): ConfigDocument {
  try {
    return { text: fs.readFileSync(path, 'utf8'), format: /\.ya?ml$/i.test(path) ? 'yaml' : 'json', source: path };
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
 * One top-level section of a parsed config document, variables substituted in it alone: a section a
 * command uses must not fail on a variable only another section needs (a client reading the keyring
 * does not have the MCP servers' secrets). Throws {@link ConfigError} when a variable is unset.
 */
export function substitutedSection(raw: unknown, name: string, env: NodeJS.ProcessEnv, source: string): unknown {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const section = (raw as Record<string, unknown>)[name];
  if (section === undefined) return undefined;
  const missing = new Map<string, string>();
  const substituted = substitute(section, [name], env, missing);
  if (missing.size) throw new ConfigError(source, [...missing].map(([at, problem]) => `${at}: ${problem}`));
  return substituted;
}
