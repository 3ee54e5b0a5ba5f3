/**
 * The worker's whole configuration from one file: MCP servers (src/mcp) and the `claude:` section
 * (src/claude). Every problem in either is reported, one line each, path first.
 */
import { loadConfig, parseConfig, ConfigError, type McpTurnsConfig } from '../mcp';
import { resolveClaudeConfig, ClaudeConfigError, type ClaudeConfig } from '../claude/config';
import { resolveWorkerTuning, type WorkerTuning } from './worker-tuning';

export interface WorkerConfig {
  mcp: McpTurnsConfig;
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

/** Loads `path` (or `MCP_TURNS_CONFIG`); no file at all means no MCP servers and Claude defaults. */
export function loadWorkerConfig(path: string | undefined = process.env.MCP_TURNS_CONFIG, env = process.env): WorkerConfig {
  const source = path ?? '(none)';
  const problems: string[] = [];
  let mcp: McpTurnsConfig | undefined;
  try {
    mcp = path ? loadConfig(path, env) : parseConfig('{"mcpServers":{}}', 'json', env, '(none)');
  } catch (err) {
    if (err instanceof ConfigError) problems.push(...err.problems);
    else throw err;
  }
  let claude: ClaudeConfig | undefined;
  try {
    claude = resolveClaudeConfig(mcp?.claude);
  } catch (err) {
    if (err instanceof ClaudeConfigError) problems.push(...err.problems);
    else throw err;
  }
  const { tuning, problems: tuningProblems } = resolveWorkerTuning(mcp?.worker);
  problems.push(...tuningProblems);
  if (problems.length || !mcp || !claude || !tuning) throw new WorkerConfigError(source, problems);
  return { mcp, claude, worker: tuning, source };
}
