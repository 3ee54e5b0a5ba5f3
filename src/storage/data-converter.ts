/**
 * The one data converter of mcp-turns: the client, the CLI, batch and every worker use it, so a
 * payload one of them stores is one the others can read. It is Temporal's default converter with
 * External Storage: payloads the selector picks (payload-selector.ts) go to the configured driver
 * and history keeps a small reference. With storage off it keeps everything inline and refuses a
 * payload over Temporal's limit with a line that says how to fix it (payload-limit.ts).
 * With encryption on (src/encryption/encryption-settings.ts), every payload is encrypted by the
 * codec before it is stored or sent, and failures keep their message in an encrypted attribute.
 */
import path from 'node:path';
import { ExternalStorage, type DataConverter } from '@temporalio/common';
import { EncryptionCodec, EncryptionKeyMissingError, NoKeyringCodec } from '../encryption/encryption-codec';
import { encryptionSettingsFromEnv, type EncryptionSettings } from '../encryption/encryption-settings';
import { followKeyring } from '../encryption/keyring';
import { FsStorageDriver } from './fs-storage-driver';
import { NoStorageDriver, payloadLimitSelector, TEMPORAL_PAYLOAD_LIMIT } from './payload-limit';
import { smallestStoredSize, storedPayloadSelector } from './payload-selector';
import type * as S3Module from './s3-storage-driver';
import type { S3StorageDriver } from './s3-storage-driver';
import { storageConfigFromEnv, type StorageConfig, type StorageLocation } from './storage-config';

/** The driver for a location; `undefined` for `none`. */
export function createStorageDriver(location: StorageLocation): FsStorageDriver | S3StorageDriver | undefined {
  switch (location.kind) {
    case 'none':
      return undefined;
    case 'fs':
      return new FsStorageDriver(location.dir);
    case 's3': {
      const { kind: _kind, ...options } = location;
      // Loaded only when used: the AWS SDK is large, and clients on the filesystem driver never need it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { S3StorageDriver: Driver } = require('./s3-storage-driver') as typeof S3Module;
      return new Driver(options);
    }
  }
}

/** The module whose `failureConverter` keeps failure messages in encoded attributes. */
export const ENCODED_FAILURE_CONVERTER_PATH = require.resolve(path.join(__dirname, '..', 'encryption', 'encoded-failure-converter'));

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

/** A data converter that stores payloads as `config` says, and encrypts them when `encryption` is given. */
export function createDataConverter(config: StorageConfig, encryption?: EncryptionSettings): DataConverter {
  const encrypted: DataConverter = encryption
    ? { payloadCodecs: [createEncryptionCodec(encryption)], failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH }
    : { payloadCodecs: [new NoKeyringCodec()] };
  const driver = createStorageDriver(config.location);
  if (!driver) {
    return {
      ...encrypted,
      externalStorage: new ExternalStorage({
        drivers: [new NoStorageDriver()],
        driverSelector: payloadLimitSelector(TEMPORAL_PAYLOAD_LIMIT),
        payloadSizeThreshold: TEMPORAL_PAYLOAD_LIMIT,
      }),
    };
  }
  return {
    ...encrypted,
    externalStorage: new ExternalStorage({
      drivers: [driver],
      driverSelector: storedPayloadSelector(driver, config),
      payloadSizeThreshold: smallestStoredSize(config),
    }),
  };
}

/** True when the converter encrypts payloads. */
export function encryptsPayloads(dataConverter: DataConverter): boolean {
  return dataConverter.payloadCodecs?.some((codec) => codec instanceof EncryptionCodec) ?? false;
}

/** True when the converter stores payloads (false: storage is `none`). */
export function storesPayloads(dataConverter: DataConverter): boolean {
  return dataConverter.externalStorage?.drivers.some((d) => !(d instanceof NoStorageDriver)) ?? false;
}

let shared: { key: string; dataConverter: DataConverter } | undefined;

/**
 * This process's data converter, from its environment (storage-config.ts, encryption-settings.ts).
 * Made once per process and per setting, so a client and a worker in one process share it.
 * Throws {@link StorageConfigError}, {@link EncryptionConfigError} or {@link KeyringError} for a
 * bad setting.
 */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter {
  const config = storageConfigFromEnv(env);
  const encryption = encryptionSettingsFromEnv(env);
  const key = JSON.stringify([config, encryption]);
  if (shared?.key !== key) shared = { key, dataConverter: createDataConverter(config, encryption) };
  return shared.dataConverter;
}
