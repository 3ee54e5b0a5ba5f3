/** Where a process finds its keyring: MCP_TURNS_KEYRING, else the config file's encryption section. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EncryptionConfigError, resolveEncryptionSection } from '../../src/encryption/encryption-settings';
import { loadSettings } from '../../src/config/settings';
import { loadWorkerConfig, WorkerConfigError } from '../../src/config/worker-config';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'encryption-settings-'));
function config(content: unknown, name = 'mcp.json'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The encryption settings a process with `env` loads (MCP_TURNS_CONFIG names the config file). */
function encryptionSettingsFromEnv(env: NodeJS.ProcessEnv) {
  return loadSettings({ env, stateDir: dir }).encryption.get();
}

describe('encryption settings', () => {
  it('is off without a keyring', () => {
    expect(encryptionSettingsFromEnv({})).toBeUndefined();
    expect(encryptionSettingsFromEnv({ MCP_TURNS_CONFIG: config({ mcpServers: {} }) })).toBeUndefined();
  });

  it('takes MCP_TURNS_KEYRING first, and the compress flag', () => {
    const file = config({ mcpServers: {}, encryption: { keyring: 'other.json' } });
    expect(encryptionSettingsFromEnv({ MCP_TURNS_KEYRING: '/k/ring.json', MCP_TURNS_CONFIG: file, MCP_TURNS_ENCRYPTION_COMPRESS: '1' })).toEqual({
      keyringFile: '/k/ring.json',
      compress: true,
    });
    expect(() => encryptionSettingsFromEnv({ MCP_TURNS_KEYRING: '/k', MCP_TURNS_ENCRYPTION_COMPRESS: 'maybe' })).toThrow(
      'MCP_TURNS_ENCRYPTION_COMPRESS must be 1 or 0, got "maybe"',
    );
  });

  it("reads the config's section, the keyring relative to the config file, variables substituted", () => {
    const file = config('encryption:\n  keyring: ${RING_NAME}\n  compress: true\nmcpServers:\n  broken: { command: "${UNSET_FOR_A_SERVER}" }\n', 'mcp.yaml');
    expect(encryptionSettingsFromEnv({ MCP_TURNS_CONFIG: file, RING_NAME: 'keys/ring.json' })).toEqual({ keyringFile: path.join(dir, 'keys', 'ring.json'), compress: true });
  });

  it('names the field of a bad section, alone and with the rest of the worker config', () => {
    expect(resolveEncryptionSection({ keyring: '', extra: 1 }, '/c/mcp.json').problems).toEqual([
      'encryption.keyring: must name the keyring file',
      'encryption.extra: unknown key',
    ]);
    const file = config({ mcpServers: {}, encryption: { keyring: 3 } }, 'bad.json');
    expect(() => encryptionSettingsFromEnv({ MCP_TURNS_CONFIG: file })).toThrow(new EncryptionConfigError(`config ${file}: encryption.keyring: expected string, received number`));
    expect(() => loadWorkerConfig(file, {}, dir)).toThrow(WorkerConfigError);
    try {
      loadWorkerConfig(file, {}, dir);
    } catch (err) {
      expect((err as WorkerConfigError).problems).toEqual(['encryption.keyring: expected string, received number']);
    }
  });
});
