/**
 * Everything a process runs with, loaded once where it starts (a CLI command's action, a library
 * entry such as the worker plugin) from its flags, the environment and the config file, and passed
 * down as one value. No other module reads the environment or the config file.
 *
 * The environment is read here, once; the config file is read and parsed once, on the first section
 * that needs it. Each section is checked the first time it is used (`settings.worker.get()`), once,
 * and keeps its value or its error: a command fails on what it needs and only on that, so
 * `mcp-turns ls` runs without the secrets only the MCP servers' section names (and without loading
 * the modules that check them), while a worker refuses to start without them. A section's error is
 * its module's own class; src/config/settings-errors.ts lists them.
 */
import path from 'node:path';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { checkClaudeApi, type ClaudeApiSettings } from '../claude/api-settings';
import type * as EncryptionSettingsModule from '../encryption/encryption-settings';
import type { EncryptionSettings } from '../encryption/encryption-settings';
import type * as StorageConfigModule from '../storage/storage-config';
import type { StorageConfig } from '../storage/storage-config';
import { tracingSettingsFromEnv, type TracingSettings } from '../tracing/tracing-settings';
import { environmentSecrets } from '../mcp/redaction';
import { DEFAULT_TASK_QUEUE } from '../core/task-queues';
import { stateDir as defaultStateDir } from '../temporal/project-paths';
import { temporalEnvConfig } from '../temporal/connection';
import type * as ConfigTextModule from './config-text';
import type { ConfigDocument } from './config-text';
import type * as ConfigFileModule from './config-file';
import type * as ServeSettingsModule from './serve-settings';
import type { ServeFlags, ServeSettings, ServeToken } from './serve-settings';
import type * as WorkerConfigModule from './worker-config';
import type { WorkerConfig } from './worker-config';

/*
 * The section modules, loaded on their section's first use: with zod schemas, the Claude and MCP
 * config and payload storage they take ~0.1 s to load, which a command that uses none of them (`ls`
 * on a server it cannot reach) has no use for.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const configText = (): typeof ConfigTextModule => require('./config-text') as typeof ConfigTextModule;
const configFile = (): typeof ConfigFileModule => require('./config-file') as typeof ConfigFileModule;
const serveSettings = (): typeof ServeSettingsModule => require('./serve-settings') as typeof ServeSettingsModule;
const workerConfig = (): typeof WorkerConfigModule => require('./worker-config') as typeof WorkerConfigModule;
const storageConfig = (): typeof StorageConfigModule => require('../storage/storage-config') as typeof StorageConfigModule;
const encryptionSettings = (): typeof EncryptionSettingsModule => require('../encryption/encryption-settings') as typeof EncryptionSettingsModule;
/* eslint-enable @typescript-eslint/no-require-imports */

/** A section: its value, checked on first use, or the error that says why it cannot be used. */
export interface Checked<T> {
  /** The value; throws the section's error (src/config/settings-errors.ts) when it has one. */
  get(): T;
}

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

/** A section resolved by `resolve` on its first use. */
function section<T>(resolve: () => T): Checked<T> {
  return { get: once(resolve) };
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
  /**
   * The values of the environment's credential-named variables (`CRM_TOKEN`, `DB_PASSWORD`): what a
   * worker's tools written in code may read, and what never leaves the worker in their results.
   */
  credentials: string[];
}

/** The service name of spans when OTEL_SERVICE_NAME is unset. */
export const DEFAULT_TRACING_SERVICE = 'mcp-turns-worker';

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

/** Loads the settings of `sources`; see the file comment. Never throws: each section keeps its error. */
export function loadSettings(sources: SettingsSources): Settings {
  const { env, flags = {} } = sources;
  const stateDir = sources.stateDir ? path.resolve(sources.stateDir) : defaultStateDir(env);
  const configFilePath = sources.configDocument ? undefined : (sources.configFile ?? nonEmpty(env.MCP_TURNS_CONFIG));
  const source = sources.configDocument?.source ?? configFilePath;
  // The file, read once; its text parsed once; its whole-file check (servers and sections) once.
  const document = once(() => sources.configDocument ?? (configFilePath ? configText().readConfigDocument(configFilePath) : undefined));
  const parsed = once(() => {
    const doc = document();
    return doc ? configText().parseConfigText(doc.text, doc.format, doc.source) : undefined;
  });
  const checkedFile = once(() => configFile().checkConfig(parsed() ?? { mcpServers: {} }, env, source ?? '(none)', stateDir));
  const metricsAddress = flags.metricsAddress ?? nonEmpty(env.MCP_TURNS_METRICS);
  const uiUrl = nonEmpty(env.MCP_TURNS_UI_URL);
  const temporalCliPath = nonEmpty(env.TEMPORAL_CLI_PATH);
  return {
    stateDir,
    ...(configFilePath ? { configFile: path.resolve(configFilePath) } : {}),
    taskQueue: flags.taskQueue ?? nonEmpty(env.MCP_TURNS_TASK_QUEUE) ?? DEFAULT_TASK_QUEUE,
    color: !nonEmpty(env.NO_COLOR),
    temporal: section(() => temporalEnvConfig(env)),
    ...(uiUrl ? { uiUrl } : {}),
    ...(metricsAddress ? { metricsAddress } : {}),
    ...(temporalCliPath ? { temporalCliPath } : {}),
    claudeApi: section(() => checkClaudeApi({ apiKey: env.ANTHROPIC_API_KEY, authToken: env.ANTHROPIC_AUTH_TOKEN, baseURL: env.ANTHROPIC_BASE_URL })),
    storage: section(() => storageConfig().storageConfigFromEnv(env, stateDir)),
    encryption: section(() => {
      const { encryptionSettingsOf, EncryptionConfigError } = encryptionSettings();
      // MCP_TURNS_KEYRING wins: the file is not consulted for it.
      if (nonEmpty(env.MCP_TURNS_KEYRING)) return encryptionSettingsOf(env, undefined, undefined);
      const { ConfigError, substitutedSection } = configText();
      let encryption: unknown;
      try {
        encryption = substitutedSection(parsed(), 'encryption', env, source ?? '(config)');
      } catch (err) {
        if (err instanceof ConfigError) throw new EncryptionConfigError(`config ${source}: ${err.problems.join('; ')}`);
        throw err;
      }
      return encryptionSettingsOf(env, encryption, source && path.resolve(source));
    }),
    tracing: section(() => tracingSettingsFromEnv(DEFAULT_TRACING_SERVICE, env)),
    worker: section(() => {
      const { workerConfigFrom, WorkerConfigError } = workerConfig();
      const { ConfigError } = configText();
      try {
        document();
      } catch (err) {
        if (err instanceof ConfigError) throw new WorkerConfigError(err.source, err.problems);
        throw err;
      }
      return workerConfigFrom(checkedFile, source ?? '(none)');
    }),
    serve: section(() => serveSettings().resolveServeSettings(document() ? checkedFile().serve : undefined, flags.serve ?? {}, env)),
    credentials: environmentSecrets(env),
    codecTokens: section(() => {
      const { ServeSettingsError, tokenProblems, tokensFromEnv } = serveSettings();
      const problems: string[] = [];
      const tokens = tokensFromEnv(env.MCP_TURNS_CODEC_TOKENS, problems, 'MCP_TURNS_CODEC_TOKENS');
      problems.push(...tokenProblems(tokens, 'MCP_TURNS_CODEC_TOKENS'));
      if (problems.length) throw new ServeSettingsError(problems);
      return tokens;
    }),
  };
}
