/**
 * A process's encryption codec, from its settings: it follows the keyring file (a new current key
 * is logged), and a payload under a key the ring lacks is logged once a minute per key id (a
 * workflow task is retried every few seconds). Also where the failure converter that encrypts
 * failure messages is loaded from.
 */
import path from 'node:path';
import { EncryptionCodec, EncryptionKeyMissingError } from './encryption-codec';
import type { EncryptionSettings } from './encryption-settings';
import { followKeyring } from './keyring';

/** The module whose `failureConverter` keeps failure messages in encoded attributes. */
export const ENCODED_FAILURE_CONVERTER_PATH = require.resolve(path.join(__dirname, 'encoded-failure-converter'));

/** How often one line about a missing key is repeated (a workflow task is retried every few seconds). */
const MISSING_KEY_LOG_INTERVAL_MS = 60_000;

/** The codec for `settings`, following its keyring file; a missing key is logged once a minute per id. */
export function createEncryptionCodec(settings: EncryptionSettings, log: (line: string) => void = (line) => console.error(line)): EncryptionCodec {
  const logged = new Map<string, number>();
  return new EncryptionCodec({
    keyring: followKeyring(settings.keyringFile, {
      onChange: (ring, before) => {
        if (ring.current !== before.current) log(`mcp-turns: keyring ${ring.file}: new payloads are encrypted under ${ring.current} (was ${before.current})`);
      },
      onError: (err) => log(`mcp-turns: ${err.message}; the keyring read before stays in use`),
    }),
    compress: settings.compress,
    onMissingKey: (keyId) => {
      const last = logged.get(keyId);
      if (last !== undefined && Date.now() - last < MISSING_KEY_LOG_INTERVAL_MS) return;
      logged.set(keyId, Date.now());
      log(`mcp-turns: ${new EncryptionKeyMissingError(keyId, settings.keyringFile).message}; a workflow task is retried until a worker with the key takes it`);
    },
  });
}
