/**
 * The environment of a bench process for an encryption mode: the inherited one without its
 * encryption variables, then those of `encryption` (none when off), as encryption-settings.ts reads them.
 */
import type { EncryptionSettings } from '../src/encryption/encryption-settings';

export function encryptionEnv(inherited: NodeJS.ProcessEnv, encryption: EncryptionSettings | undefined): NodeJS.ProcessEnv {
  const { MCP_TURNS_KEYRING: _keyring, MCP_TURNS_ENCRYPTION_COMPRESS: _compress, ...rest } = inherited;
  return encryption
    ? { ...rest, MCP_TURNS_KEYRING: encryption.keyringFile, MCP_TURNS_ENCRYPTION_COMPRESS: encryption.compress ? '1' : '0' }
    : rest;
}
