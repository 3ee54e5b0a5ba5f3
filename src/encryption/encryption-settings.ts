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
import { issueProblems } from '../schemas/issue-problems';

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
 * The encryption settings of an environment and a config file's `encryption:` section (variables
 * substituted; `configFile` names the file it came from); undefined when encryption is off.
 * src/config/settings.ts calls it once per process. Throws {@link EncryptionConfigError}.
 */
export function encryptionSettingsOf(env: NodeJS.ProcessEnv, section: unknown, configFile: string | undefined): EncryptionSettings | undefined {
  const compress = flag(env, 'MCP_TURNS_ENCRYPTION_COMPRESS');
  const keyring = env.MCP_TURNS_KEYRING?.trim();
  if (keyring) return { keyringFile: path.resolve(keyring), compress: compress ?? false };
  if (!configFile) return undefined;
  const { settings, problems } = resolveEncryptionSection(section, configFile);
  if (problems.length) throw new EncryptionConfigError(`config ${configFile}: ${problems.join('; ')}`);
  return settings && { ...settings, compress: compress ?? settings.compress };
}

/** One line for logs: whether payloads are encrypted, with which keyring (never a key). */
export function describeEncryption(settings: EncryptionSettings | undefined): string {
  if (!settings) return 'encryption: off (MCP_TURNS_KEYRING turns it on)';
  return `encryption: AES-256-GCM, keyring ${settings.keyringFile}${settings.compress ? ', compressed first' : ''}`;
}
