/**
 * Whether payloads are encrypted, and with which keyring, taken from one place for the client, the
 * CLI, batches, `serve` and every worker (they must agree: what one encrypts another decrypts):
 *
 * - `MCP_TURNS_KEYRING`: the keyring file (src/encryption/keyring.ts); set = encryption on.
 * - else the `encryption:` section of the config file (`--config`, else `MCP_TURNS_CONFIG`):
 *   `encryption: { keyring: FILE, compress: true }`, FILE relative to the config file.
 * - `MCP_TURNS_ENCRYPTION_COMPRESS=1`: compress (brotli) before encrypting; or `compress: true` in
 *   the section.
 */
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, issueProblems, readConfigSection } from '../worker/config-text';

export interface EncryptionSettings {
  /** The keyring file, absolute. */
  keyringFile: string;
  /** Compress before encrypting. */
  compress: boolean;
}

/** An encryption setting that cannot be used; the message names the variable or field. */
export class EncryptionConfigError extends Error {
  override name = 'EncryptionConfigError';
}

const sectionSchema = z.strictObject({
  keyring: z.string().min(1, 'must name the keyring file'),
  compress: z.boolean().optional(),
});

/**
 * Checks a config file's `encryption:` section; problems come back one line each, path first
 * (`encryption.keyring: …`), as the rest of the file's.
 */
export function resolveEncryptionSection(section: unknown, configFile: string): { settings?: EncryptionSettings; problems: string[] } {
  if (section === undefined || section === null) return { problems: [] };
  const parsed = sectionSchema.safeParse(section);
  if (!parsed.success) {
    return {
      problems: issueProblems(parsed.error.issues, ['encryption']).map(({ at, message }) => `${at}: ${message.replace(/^Invalid input: /, '')}`),
    };
  }
  return {
    settings: {
      keyringFile: path.resolve(path.dirname(path.resolve(configFile)), parsed.data.keyring),
      compress: parsed.data.compress ?? false,
    },
    problems: [],
  };
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = env[name]?.trim().toLowerCase();
  if (value === undefined || value === '') return undefined;
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new EncryptionConfigError(`${name} must be 1 or 0, got "${env[name]}"`);
}

/**
 * This process's encryption settings; undefined when encryption is off. `configFile` is the config
 * file the caller resolved (the CLI: the command's `--config`); default `MCP_TURNS_CONFIG`.
 * Throws {@link EncryptionConfigError}.
 */
export function encryptionSettingsFromEnv(env: NodeJS.ProcessEnv = process.env, configFile: string | undefined = env.MCP_TURNS_CONFIG): EncryptionSettings | undefined {
  const compress = flag(env, 'MCP_TURNS_ENCRYPTION_COMPRESS');
  const keyring = env.MCP_TURNS_KEYRING?.trim();
  if (keyring) return { keyringFile: path.resolve(keyring), compress: compress ?? false };
  const file = configFile?.trim();
  if (!file) return undefined;
  let section: unknown;
  try {
    section = readConfigSection(file, 'encryption', env);
  } catch (err) {
    if (err instanceof ConfigError) throw new EncryptionConfigError(`config ${file}: ${err.problems.join('; ')}`);
    throw err;
  }
  const { settings, problems } = resolveEncryptionSection(section, file);
  if (problems.length) throw new EncryptionConfigError(`config ${file}: ${problems.join('; ')}`);
  return settings && { ...settings, compress: compress ?? settings.compress };
}

/** One line for logs: whether payloads are encrypted, with which keyring (never a key). */
export function describeEncryption(settings: EncryptionSettings | undefined): string {
  if (!settings) return 'encryption: off (MCP_TURNS_KEYRING turns it on)';
  return `encryption: AES-256-GCM, keyring ${settings.keyringFile}${settings.compress ? ', compressed first' : ''}`;
}
