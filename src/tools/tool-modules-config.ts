/**
 * The config file's tool modules: `toolModules` (camelCase files, beside `mcpServers`) or
 * `tool_modules` (snake_case files). An entry is the module's path, relative to the config file, or an
 * object with the path as `module` and the policies a server takes: `allowedTools`, `excludeTools`,
 * `approval`, `timeoutMs`, `heartbeatTimeoutMs`, `retry`, `localActivity`, `maxResultBytes`,
 * `maxBinaryBytes` (snake_case in a snake_case file). The entry's name is the prefix Claude sees
 * (`crm__lookup`), and shares the servers' names: one name is one server or one module.
 */
import path from 'node:path';
import { z } from 'zod';
import { ApprovalSchema, RetrySchema, resolveApproval, SERVER_DEFAULTS, SERVER_NAME, SERVER_NAME_RULE, camelEntryToSnake, keyAsWritten, snakeSpelling } from '../mcp/config-schema';

const ModuleEntrySchema = z
  .object({
    /** The module's path (`.mjs`, `.js`, `.cjs`), relative to the config file. */
    module: z.string().min(1),
    /** Only these tools are offered (and callable). */
    allowed_tools: z.array(z.string().min(1)).optional(),
    /** These tools are never offered (applied after allowed_tools). */
    exclude_tools: z.array(z.string().min(1)).optional(),
    /** A call runs this long at most; then its abortSignal fires and the attempt fails (and is retried). @default 30000 */
    timeout_ms: z.number().int().min(100).max(24 * 3_600_000).optional(),
    /** Activity heartbeat timeout (the call beats while it runs). @default 15000 */
    heartbeat_timeout_ms: z.number().int().min(1000).optional(),
    /** Temporal's retry of a call that throws (a `ToolError` is not retried). */
    retry: RetrySchema.optional(),
    /** Which calls run as local activities: `auto` (a tool whose recent calls were quick), `true`, `false`. @default auto */
    local_activity: z.union([z.boolean(), z.literal('auto')]).optional(),
    /** Which tools wait for a person's approval before a call runs. @default never */
    approval: ApprovalSchema.optional(),
    /** Size cap of a result's text. @default 102400 */
    max_result_bytes: z.number().int().min(1024).optional(),
    /** Image data kept per result. @default 786432 */
    max_binary_bytes: z.number().int().min(0).max(1536 * 1024).optional(),
  })
  .strict();

const EntrySchema = z.union([z.string().min(1), ModuleEntrySchema], { error: 'must be a module path, or an object with module and its policies' });

type ModuleEntry = z.output<typeof ModuleEntrySchema>;

/** A module entry with defaults applied. `path` is absent for tools a plugin was given in code. */
function resolveEntry(name: string, entry: ModuleEntry | undefined, modulePath: string | undefined) {
  const d = SERVER_DEFAULTS;
  const timeoutMs = entry?.timeout_ms ?? d.timeoutMs;
  return {
    /** The prefix Claude sees (`name__tool`). */
    name,
    /** Absolute path of the module. */
    path: modulePath,
    /** undefined = every tool. */
    allowedTools: entry?.allowed_tools,
    excludeTools: entry?.exclude_tools ?? [],
    timeoutMs,
    maxTotalTimeoutMs: timeoutMs,
    heartbeatTimeoutMs: entry?.heartbeat_timeout_ms ?? d.heartbeatTimeoutMs,
    localActivity: entry?.local_activity ?? d.localActivity,
    retry: {
      maximumAttempts: entry?.retry?.maximum_attempts ?? d.retry.maximumAttempts,
      initialIntervalMs: entry?.retry?.initial_interval_ms ?? d.retry.initialIntervalMs,
      backoffCoefficient: entry?.retry?.backoff_coefficient ?? d.retry.backoffCoefficient,
      maximumIntervalMs: entry?.retry?.maximum_interval_ms ?? d.retry.maximumIntervalMs,
    },
    approval: resolveApproval(entry?.approval),
    maxResultBytes: entry?.max_result_bytes ?? d.maxResultBytes,
    maxBinaryBytes: entry?.max_binary_bytes ?? d.maxBinaryBytes,
  };
}

/** One tool module as the worker uses it: defaults applied. */
export type ToolModuleConfig = ReturnType<typeof resolveEntry>;

/** A module's settings when tools are given in code (the plugin's `tools` option): the defaults. */
export function defaultModuleConfig(name: string): ToolModuleConfig {
  return resolveEntry(name, undefined, undefined);
}

/** The key a file gives its tool modules under. */
export type ToolModulesKey = 'toolModules' | 'tool_modules';

/**
 * Validates a file's tool modules section (absent: none). Paths are resolved against `baseDir` (the
 * config file's directory). Every problem is one line starting with its path as the file spells it.
 */
export function parseToolModules(section: unknown, key: ToolModulesKey, baseDir: string): { modules?: ToolModuleConfig[]; problems: string[] } {
  if (section === undefined || section === null) return { modules: [], problems: [] };
  const camel = key === 'toolModules';
  const problems: string[] = [];
  if (typeof section !== 'object' || Array.isArray(section)) return { problems: [`${key}: must be an object of module name → module path`] };
  const modules: ToolModuleConfig[] = [];
  for (const [name, raw] of Object.entries(section)) {
    if (!SERVER_NAME.test(name)) {
      problems.push(`${key}.${name}: ${SERVER_NAME_RULE.replace('server names', 'module names')}`);
      continue;
    }
    const value = camel && typeof raw === 'object' ? camelEntryToSnake(raw, [key, name], problems) : raw;
    const parsed = EntrySchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
        for (const unknownKey of keys) {
          const full = ['mcp_servers', name, ...issue.path.map(String), ...(unknownKey === undefined ? [] : [unknownKey])];
          const shown = [key, ...full.slice(1).map((_, i) => keyAsWritten(full, i + 1, camel))].join('.');
          const meant = unknownKey !== undefined && !camel ? snakeSpelling(unknownKey) : undefined;
          problems.push(`${shown}: ${unknownKey === undefined ? issue.message : meant ? `unknown key (${key} uses ${meant})` : 'unknown key'}`);
        }
      }
      continue;
    }
    const entry = typeof parsed.data === 'string' ? undefined : parsed.data;
    const file = typeof parsed.data === 'string' ? parsed.data : parsed.data.module;
    modules.push(resolveEntry(name, entry, path.resolve(baseDir, file)));
  }
  return problems.length ? { problems } : { modules, problems };
}
