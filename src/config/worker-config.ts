/**
 * The worker's whole configuration from one file (config-file.ts): MCP servers (src/mcp), tool
 * modules (src/tools) and tool sets,
 * the `claude:` section (src/claude) and the `worker:` section (worker-tuning.ts). Every problem in
 * any of them is reported, one line each, path first.
 */
import type { ServerConfig } from '../mcp';
import type { Toolset } from '../core/toolsets';
import type { ToolModuleConfig } from '../tools/tool-modules-config';
import { resolveClaudeConfig, ClaudeConfigError, type ClaudeConfig } from '../claude/config';
import { parseConfig, ConfigError, type ConfigFile } from './config-file';
import { readConfigDocument, type ConfigDocument } from './config-text';
import { resolveWorkerTuning, type WorkerTuning } from './worker-tuning';
import { resolveEncryptionSection } from '../encryption/encryption-settings';

export interface WorkerConfig {
  /** The MCP servers, defaults applied. */
  servers: ServerConfig[];
  /** The tool modules (tools written in code), paths resolved, defaults applied. */
  toolModules: ToolModuleConfig[];
  /** Named selections of the servers' and modules' tools. */
  toolsets: Record<string, Toolset>;
  claude: ClaudeConfig;
  worker: WorkerTuning;
  /** Where it came from, for logs ('(none)' when no file was given). */
  source: string;
}

export class WorkerConfigError extends Error {
  override name = 'WorkerConfigError';
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`invalid config ${source}: ${problems.length} problem(s)`);
  }
}

/**
 * The worker's config from `document` (a config file's text; none means no MCP servers and Claude
 * defaults). `stateDir` is where OAuth token files default to. Throws {@link WorkerConfigError}
 * listing every problem.
 */
export function workerConfigOf(document: ConfigDocument | undefined, env: NodeJS.ProcessEnv, stateDir: string): WorkerConfig {
  return workerConfigFrom(
    () => (document ? parseConfig(document.text, document.format, env, document.source, stateDir) : parseConfig('{"mcpServers":{}}', 'json', env, '(none)', stateDir)),
    document?.source ?? '(none)',
  );
}

/**
 * The worker's config from the whole file as `file()` checks it (throwing {@link ConfigError}),
 * its `claude:`, `worker:` and `encryption:` sections checked too. Throws {@link WorkerConfigError}.
 */
export function workerConfigFrom(file: () => ConfigFile, source: string): WorkerConfig {
  const problems: string[] = [];
  let checked: ConfigFile | undefined;
  try {
    checked = file();
  } catch (err) {
    if (err instanceof ConfigError) problems.push(...err.problems);
    else throw err;
  }
  let claude: ClaudeConfig | undefined;
  try {
    claude = resolveClaudeConfig(checked?.claude);
  } catch (err) {
    if (err instanceof ClaudeConfigError) problems.push(...err.problems);
    else throw err;
  }
  const { tuning, problems: tuningProblems } = resolveWorkerTuning(checked?.worker);
  problems.push(...tuningProblems);
  // The section is applied by encryption-settings.ts; checked here with the rest of the file.
  if (checked) problems.push(...resolveEncryptionSection(checked.encryption, checked.source).problems);
  if (problems.length || !checked || !claude || !tuning) throw new WorkerConfigError(source, problems);
  return { servers: checked.servers, toolModules: checked.toolModules, toolsets: checked.toolsets, claude, worker: tuning, source };
}

/**
 * Loads the config file `path` (none: no MCP servers, Claude defaults), variables from `env`.
 * Throws {@link WorkerConfigError}.
 */
export function loadWorkerConfig(path: string | undefined, env: NodeJS.ProcessEnv, stateDir: string): WorkerConfig {
  let document: ConfigDocument | undefined;
  try {
    document = path === undefined ? undefined : readConfigDocument(path);
  } catch (err) {
    if (err instanceof ConfigError) throw new WorkerConfigError(err.source, err.problems);
    throw err;
  }
  return workerConfigOf(document, env, stateDir);
}
