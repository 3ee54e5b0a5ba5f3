/**
 * Everything a process runs with, loaded once where it starts (a CLI command's action, a library
 * entry such as the worker plugin) from its flags, the environment and the config file, and passed
 * down as one value. No other module reads the environment or the config file.
 *
 * Every section is checked here, at load. A section that cannot be used keeps its error, thrown
 * when the section is used (`settings.worker.get()`): a command fails on what it needs and only on
 * that, so `mcp-turns ls` runs without the secrets only the MCP servers' section names, while a
 * worker refuses to start without them.
 */
import path from 'node:path';
import { checkClaudeApi, ClaudeClientConfigError, type ClaudeApiSettings } from '../claude/api-settings';
import { encryptionSettingsOf, EncryptionConfigError, type EncryptionSettings } from '../encryption/encryption-settings';
import { storageConfigFromEnv, StorageConfigError, type StorageConfig } from '../storage/storage-config';
import { KeyringError } from '../encryption/keyring';
import { TracingConfigError, tracingSettingsFromEnv, type TracingSettings } from '../tracing/tracing-settings';
import { DEFAULT_TASK_QUEUE } from '../core/task-queues';
import { stateDir as defaultStateDir } from '../temporal/project-paths';
import { temporalEnvConfig } from '../temporal/connection';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { ConfigError, parseConfigText, readConfigDocument, substitutedSection, type ConfigDocument } from './config-text';
import { parseConfig } from './config-file';
import { resolveServeSettings, ServeSettingsError, tokenProblems, tokensFromEnv, type ServeFlags, type ServeSettings, type ServeToken } from './serve-settings';
import { workerConfigOf, WorkerConfigError, type WorkerConfig } from './worker-config';

/**
 * The errors of a setting that cannot be used: bad input the person fixes in a flag, the environment
 * or the config file. Each message is one line naming the variable, key or file; an error listing
 * several problems has them in `problems`.
 */
const SETTINGS_ERRORS = [
  ConfigError,
  WorkerConfigError,
  ServeSettingsError,
  StorageConfigError,
  EncryptionConfigError,
  KeyringError,
  TracingConfigError,
  ClaudeClientConfigError,
];

/** Whether `err` says a setting cannot be used (see {@link SETTINGS_ERRORS}). */
export function isSettingsError(err: unknown): err is Error & { problems?: string[] } {
  return SETTINGS_ERRORS.some((kind) => err instanceof kind);
}

/** A checked section: its value, or the error that says why it cannot be used. */
export interface Checked<T> {
  /** The value; throws the section's error (one {@link isSettingsError} knows) when it has one. */
  get(): T;
}

/** `resolve()`'s value, or its error kept and thrown at each `get()`. */
export function checked<T>(resolve: () => T): Checked<T> {
  try {
    const value = resolve();
    return { get: () => value };
  } catch (err) {
    return {
      get: () => {
        throw err;
      },
    };
  }
}

/** What settings are loaded from. */
export interface SettingsSources {
  /** The environment, read here and nowhere else. */
  env: NodeJS.ProcessEnv;
  /** The state directory (a command's `--state-dir`); else MCP_TURNS_HOME, else the default. */
  stateDir?: string;
  /** The config file (a command's `--config`); else MCP_TURNS_CONFIG; none: no file. */
  configFile?: string;
  /** Config text in place of a file (the demo's own MCP server). */
  configDocument?: ConfigDocument;
  /** Flags that win over the environment and the file. */
  flags?: {
    /** `--task-queue`. */
    taskQueue?: string;
    /** `--metrics`. */
    metricsAddress?: string;
    /** `serve --host / --port`. */
    serve?: ServeFlags;
  };
}

export interface Settings {
  /** Where machine-local state is kept (absolute). */
  stateDir: string;
  /** The config file (absolute), if any: every part must agree on its `encryption:` section. */
  configFile?: string;
  /** The task queue of turns: `--task-queue`, else MCP_TURNS_TASK_QUEUE, else the default. */
  taskQueue: string;
  /** Where Temporal is: its envconfig (TEMPORAL_*, the TOML file's profile); a command's flags go on top. */
  temporal: Checked<ClientConnectConfig>;
  /** The Temporal Web UI's base URL (MCP_TURNS_UI_URL); else guessed from the address. */
  uiUrl?: string;
  /** Where a worker serves Prometheus metrics (`--metrics`, else MCP_TURNS_METRICS). */
  metricsAddress?: string;
  /** The Anthropic API's key and base URL (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL); one is needed. */
  claudeApi: Checked<ClaudeApiSettings>;
  /** Whether output may be coloured or dimmed on a terminal (off when NO_COLOR is set). */
  color: boolean;
  /** The Temporal CLI to use (TEMPORAL_CLI_PATH), else the project's own. */
  temporalCliPath?: string;
  /** Where payloads over the thresholds are stored (MCP_TURNS_STORAGE…). */
  storage: Checked<StorageConfig>;
  /** Whether payloads are encrypted, with which keyring; undefined: off. */
  encryption: Checked<EncryptionSettings | undefined>;
  /** Where spans go (OTEL_*); undefined: tracing is off. */
  tracing: Checked<TracingSettings | undefined>;
  /** A worker's: the MCP servers, the `claude:` and `worker:` sections (the whole file is checked). */
  worker: Checked<WorkerConfig>;
  /** `serve`'s: its section, MCP_TURNS_SERVE_TOKENS and its flags. */
  serve: Checked<ServeSettings>;
  /** The codec server's callers (MCP_TURNS_CODEC_TOKENS). */
  codecTokens: Checked<ServeToken[]>;
}

/** The service name of spans when OTEL_SERVICE_NAME is unset. */
export const DEFAULT_TRACING_SERVICE = 'mcp-turns-worker';

/** `resolve`, run at most once: its value, or its error thrown again at every call. */
function once<T>(resolve: () => T): () => T {
  let result: { value: T } | { error: unknown } | undefined;
  return () => {
    if (!result) {
      try {
        result = { value: resolve() };
      } catch (error) {
        result = { error };
      }
    }
    if ('error' in result) throw result.error;
    return result.value;
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

/** Loads the settings of `sources`; see the file comment. Never throws: each section keeps its error. */
export function loadSettings(sources: SettingsSources): Settings {
  const { env, flags = {} } = sources;
  const stateDir = sources.stateDir ? path.resolve(sources.stateDir) : defaultStateDir(env);
  const configFile = sources.configDocument ? undefined : (sources.configFile ?? nonEmpty(env.MCP_TURNS_CONFIG));
  const document = once(() => sources.configDocument ?? (configFile ? readConfigDocument(configFile) : undefined));
  // The file's top level, parsed once for the sections read alone (variables substituted per section).
  const raw = once(() => {
    const doc = document();
    return doc ? parseConfigText(doc.text, doc.format, doc.source) : undefined;
  });
  const metricsAddress = flags.metricsAddress ?? nonEmpty(env.MCP_TURNS_METRICS);
  const uiUrl = nonEmpty(env.MCP_TURNS_UI_URL);
  const temporalCliPath = nonEmpty(env.TEMPORAL_CLI_PATH);
  return {
    stateDir,
    ...(configFile ? { configFile: path.resolve(configFile) } : {}),
    taskQueue: flags.taskQueue ?? nonEmpty(env.MCP_TURNS_TASK_QUEUE) ?? DEFAULT_TASK_QUEUE,
    color: !nonEmpty(env.NO_COLOR),
    temporal: checked(() => temporalEnvConfig(env)),
    ...(uiUrl ? { uiUrl } : {}),
    ...(metricsAddress ? { metricsAddress } : {}),
    ...(temporalCliPath ? { temporalCliPath } : {}),
    claudeApi: checked(() => checkClaudeApi({ apiKey: env.ANTHROPIC_API_KEY, authToken: env.ANTHROPIC_AUTH_TOKEN, baseURL: env.ANTHROPIC_BASE_URL })),
    storage: checked(() => storageConfigFromEnv(env, stateDir)),
    encryption: checked(() => {
      // MCP_TURNS_KEYRING wins: the file is not consulted for it.
      if (nonEmpty(env.MCP_TURNS_KEYRING)) return encryptionSettingsOf(env, undefined, undefined);
      const source = sources.configDocument?.source ?? configFile;
      let section: unknown;
      try {
        section = substitutedSection(raw(), 'encryption', env, source ?? '(config)');
      } catch (err) {
        if (err instanceof ConfigError) throw new EncryptionConfigError(`config ${source}: ${err.problems.join('; ')}`);
        throw err;
      }
      return encryptionSettingsOf(env, section, source && path.resolve(source));
    }),
    tracing: checked(() => tracingSettingsFromEnv(DEFAULT_TRACING_SERVICE, env)),
    worker: checked(() => {
      let doc: ConfigDocument | undefined;
      try {
        doc = document();
      } catch (err) {
        if (err instanceof ConfigError) throw new WorkerConfigError(err.source, err.problems);
        throw err;
      }
      return workerConfigOf(doc, env, stateDir);
    }),
    serve: checked(() => {
      const doc = document();
      const section = doc ? parseConfig(doc.text, doc.format, env, doc.source, stateDir).serve : undefined;
      return resolveServeSettings(section, flags.serve ?? {}, env);
    }),
    codecTokens: checked(() => {
      const problems: string[] = [];
      const tokens = tokensFromEnv(env.MCP_TURNS_CODEC_TOKENS, problems, 'MCP_TURNS_CODEC_TOKENS');
      problems.push(...tokenProblems(tokens, 'MCP_TURNS_CODEC_TOKENS'));
      if (problems.length) throw new ServeSettingsError(problems);
      return tokens;
    }),
  };
}
