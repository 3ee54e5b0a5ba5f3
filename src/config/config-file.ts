/**
 * The worker's config file, read as a whole: JSON or YAML, `${VAR}` / `${VAR:-default}` substituted
 * in every string, then its top level checked. The MCP servers go under `mcpServers` (the `.mcp.json`
 * shape, camelCase keys) or `mcp_servers` (snake_case keys), validated by src/mcp/config.ts; tools
 * written in code under `toolModules` / `tool_modules` (src/tools/tool-modules-config.ts, paths relative
 * to the file), named tool selections under `toolsets` (src/config/toolsets-section.ts); the
 * optional sections `claude` (src/claude/config.ts, prices included), `worker`
 * (src/config/worker-tuning.ts), `serve` (src/config/serve-settings.ts) and `encryption`
 * (src/encryption/encryption-settings.ts) are handed on as written; anything else is an error, and a top-level
 * `pricing` gets one that says where prices go. Every problem is one line that starts with its path
 * (`mcp_servers.files.command: required for a stdio server`), and all of a file's problems are
 * reported at once.
 */
import { z } from 'zod';
import path from 'node:path';
import { parseMcpServers, type ServerConfig } from '../mcp';
import type { Toolset } from '../core/toolsets';
import { issueProblems } from '../schemas/issue-problems';
import { parseToolModules, type ToolModuleConfig } from '../tools/tool-modules-config';
import { parseToolsets } from './toolsets-section';
import { ConfigError, parseConfigText, readConfigDocument, substitute, type ConfigFormat } from './config-text';

export { ConfigError } from './config-text';

/** The parsed file: the MCP servers, and the sections other modules validate. */
export interface ConfigFile {
  servers: ServerConfig[];
  /** Tools written in code: `toolModules` / `tool_modules` (src/tools/tool-modules-config.ts), paths resolved. */
  toolModules: ToolModuleConfig[];
  /** Named selections of the servers' and modules' tools (`toolsets`). */
  toolsets: Record<string, Toolset>;
  /** The raw `claude:` section (validated by src/claude/config.ts). */
  claude?: Record<string, unknown>;
  /** The raw `worker:` section (validated by src/config/worker-tuning.ts). */
  worker?: unknown;
  /** The raw `serve:` section (validated by src/config/serve-settings.ts). */
  serve?: unknown;
  /** The raw `encryption:` section (validated by src/encryption/encryption-settings.ts). */
  encryption?: unknown;
  /** The file it came from. */
  source: string;
}

const MISPLACED_PRICING =
  'model prices go under claude.pricing (e.g. claude: { pricing: { claude-sonnet-4-6: { input: 3, output: 15 } } }), not at the top level';

/** An object section owned by another module: only its being an object is checked here. */
const OpaqueSection = z.record(z.string(), z.unknown());

/** The file's top level other than its servers section (`mcpServers` or `mcp_servers`, src/mcp/config.ts). */
const ConfigFileSchema = z
  .object({
    /** Validated by src/claude/config.ts. */
    claude: OpaqueSection.nullable().optional(),
    /** Not a section: prices live in `claude.pricing`. Kept in the schema only to say so. */
    pricing: z.unknown().refine((v) => v === undefined, { message: MISPLACED_PRICING }).optional(),
    /** Validated by src/config/worker-tuning.ts. */
    worker: z.unknown().optional(),
    /** Validated by src/config/serve-settings.ts. */
    serve: z.unknown().optional(),
    /** Validated by src/encryption/encryption-settings.ts. */
    encryption: z.unknown().optional(),
  })
  .strict();

/** The entry names of a section (servers or modules) as the file writes them; none when it is not an object. */
function namesIn(section: unknown): string[] {
  return section && typeof section === 'object' && !Array.isArray(section) ? Object.keys(section) : [];
}

/** A file's tool modules are resolved against its directory; text not from a file, against the working directory. */
function baseDirOf(sourceName: string): string {
  return /[\\/]/.test(sourceName) || /\.(json|ya?ml)$/i.test(sourceName) ? path.dirname(path.resolve(sourceName)) : process.cwd();
}

/**
 * Parses config text. `format` is 'json' or 'yaml'; `sourceName` names it in the error.
 * `stateDir` is where OAuth token files default to (default: src/temporal/project-paths.ts's).
 * Throws {@link ConfigError} listing every problem.
 */
export function parseConfig(
  text: string,
  format: ConfigFormat,
  env: NodeJS.ProcessEnv,
  sourceName: string,
  stateDir: string,
): ConfigFile {
  return checkConfig(parseConfigText(text, format, sourceName), env, sourceName, stateDir);
}

/** {@link parseConfig} of config text already parsed (`raw`, JSON's or YAML's value). */
export function checkConfig(parsedText: unknown, env: NodeJS.ProcessEnv, sourceName: string, stateDir: string): ConfigFile {
  let raw = parsedText;
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(sourceName, ['(file): must be an object with mcpServers or mcp_servers']);
  }
  const top = raw as Record<string, unknown>;
  const camel = 'mcpServers' in top || ('toolModules' in top && !('mcp_servers' in top));
  if (camel && 'mcp_servers' in top)
    throw new ConfigError(sourceName, ['(file): use either mcpServers or mcp_servers, not both']);
  if ((camel && 'tool_modules' in top) || (!camel && 'toolModules' in top))
    throw new ConfigError(sourceName, [camel ? '(file): tool_modules: a file with mcpServers names its modules toolModules' : '(file): toolModules: a file with mcp_servers names its modules tool_modules']);

  // Paths whose strings name a missing variable: the schema's complaints about them would only echo it.
  const missing = new Map<string, string>();
  const substituted = substitute(top, [], env, missing) as Record<string, unknown>;
  const problems = [...missing].map(([path, problem]) => `${path}: ${problem}`);
  const reported = new Set(missing.keys());

  const { mcpServers, mcp_servers, toolModules, tool_modules, toolsets: toolsetsSection, ...sections } = substituted;
  const mcp = parseMcpServers(camel ? mcpServers : mcp_servers, camel ? 'mcpServers' : 'mcp_servers', stateDir, reported);
  problems.push(...mcp.problems);
  const modules = parseToolModules(camel ? toolModules : tool_modules, camel ? 'toolModules' : 'tool_modules', baseDirOf(sourceName));
  problems.push(...modules.problems);
  // The names the file gives, whatever the problems of their entries (reported above): a section
  // with one bad entry resolves to none, which must not make every other name unknown here.
  const serverNames = namesIn(camel ? mcpServers : mcp_servers);
  const moduleNames = namesIn(camel ? toolModules : tool_modules);
  for (const name of moduleNames) {
    if (serverNames.includes(name)) problems.push(`${camel ? 'toolModules' : 'tool_modules'}.${name}: ${name} is an MCP server's name too (one name is one server or one module)`);
  }
  const toolsets = parseToolsets(toolsetsSection, [...serverNames, ...moduleNames]);
  problems.push(...toolsets.problems);

  const parsed = ConfigFileSchema.safeParse(sections);
  if (!parsed.success) {
    for (const { at, message } of issueProblems(parsed.error.issues)) {
      const where = at || '(file)';
      if (!reported.has(where)) problems.push(`${where}: ${message}`);
    }
  }
  if (problems.length || !mcp.servers || !modules.modules || !toolsets.toolsets || !parsed.success) throw new ConfigError(sourceName, problems);
  const { claude, worker, serve, encryption } = parsed.data;
  return {
    servers: mcp.servers,
    toolModules: modules.modules,
    toolsets: toolsets.toolsets,
    ...(claude != null ? { claude } : {}),
    ...(worker !== undefined ? { worker } : {}),
    ...(serve !== undefined ? { serve } : {}),
    ...(encryption !== undefined ? { encryption } : {}),
    source: sourceName,
  };
}

/**
 * Reads a JSON or YAML config file: `.yaml` / `.yml` are YAML, anything else JSON. Throws
 * {@link ConfigError} listing every problem (an unreadable file is one). `stateDir`: as {@link parseConfig}'s.
 */
export function loadConfig(path: string, env: NodeJS.ProcessEnv, stateDir: string): ConfigFile {
  const { text, format } = readConfigDocument(path);
  return parseConfig(text, format, env, path, stateDir);
}
