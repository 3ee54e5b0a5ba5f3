/**
 * The errors of a setting that cannot be used: bad input the person fixes in a flag, the
 * environment or the config file. Each message is one line naming the variable, key or file; an
 * error listing several problems has them in `problems`. Loads every section's module: the CLI
 * asks it only once something failed.
 */
import { ClaudeClientConfigError } from '../claude/api-settings';
import { EncryptionConfigError } from '../encryption/encryption-settings';
import { KeyringError } from '../encryption/keyring';
import { StorageConfigError } from '../storage/storage-config';
import { TracingConfigError } from '../tracing/tracing-settings';
import { ConfigError } from './config-text';
import { ServeSettingsError } from './serve-settings';
import { WorkerConfigError } from './worker-config';

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

/** Whether `err` says a setting cannot be used. */
export function isSettingsError(err: unknown): err is Error & { problems?: string[] } {
  return SETTINGS_ERRORS.some((kind) => err instanceof kind);
}
