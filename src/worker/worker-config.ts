/**
 * The worker's whole configuration from one file (src/worker/worker-file.ts): MCP servers (src/mcp),
 * the `claude:` section (src/claude) and the `worker:` section (worker-tuning.ts). Every problem in
 * any of them is reported, one line each, path first.
 */
import type { ServerConfig } from '../mcp';
import { resolveClaudeConfig, ClaudeConfigError, type ClaudeConfig } from '../claude/config';
import { loadConfig, parseConfig, ConfigError, type ConfigFile } from './worker-file';
import { resolveWorkerTuning, type WorkerTuning } from './worker-tuning';
import { resolveEncryptionSection } from '../encryption/encryption-settings';

export interface WorkerConfig {
  /** The MCP servers, defaults applied. */
  servers: ServerConfig[];
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
 * Loads `path` (or `MCP_TURNS_CONFIG`); no file at all means no MCP servers and Claude defaults.
 * `stateDir` is where OAuth token files default to (default: src/temporal/project-paths.ts's).
 */
export function loadWorkerConfig(path: string | undefined = process.env.MCP_TURNS_CONFIG, env = process.env, stateDir?: string): WorkerConfig {
  const source = path ?? '(none)';
  const problems: string[] = [];
  let file: ConfigFile | undefined;
  try {
    file = path ? loadConfig(path, env, stateDir) : parseConfig('{"mcpServers":{}}', 'json', env, '(none)', stateDir);
  } catch (err) {
    if (err instanceof ConfigError) problems.push(...err.problems);
    else throw err;
  }
  let claude: ClaudeConfig | undefined;
  try {
    claude = resolveClaudeConfig(file?.claude);
  } catch (err) {
    if (err instanceof ClaudeConfigError) problems.push(...err.problems);
    else throw err;
  }
  const { tuning, problems: tuningProblems } = resolveWorkerTuning(file?.worker);
  problems.push(...tuningProblems);
  // The section itself is read by encryption-settings.ts (from the same file); checked here with the rest.
  if (file) problems.push(...resolveEncryptionSection(file.encryption, file.source).problems);
  if (problems.length || !file || !claude || !tuning) throw new WorkerConfigError(source, problems);
  return { servers: file.servers, claude, worker: tuning, source };
}
