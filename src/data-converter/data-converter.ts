/**
 * The one data converter of mcp-turns: the client, the CLI, batch and every worker use it, so a
 * payload one of them stores is one the others can read. It is Temporal's default converter with
 * External Storage: payloads the selector picks (payload-selector.ts) go to the configured driver
 * and history keeps a small reference. With storage off it keeps everything inline and refuses a
 * payload over Temporal's limit with a line that says how to fix it (payload-limit.ts).
 * With encryption on (src/encryption/encryption-settings.ts), every payload is encrypted by the
 * codec before it is stored or sent, and failures keep their message in an encrypted attribute.
 */
import { ExternalStorage, type DataConverter } from '@temporalio/common';
import { EncryptionCodec, NoKeyringCodec } from '../encryption/encryption-codec';
import { createEncryptionCodec, ENCODED_FAILURE_CONVERTER_PATH } from '../encryption/process-codec';
import type { EncryptionSettings } from '../encryption/encryption-settings';
import type { Settings } from '../config/settings';
import { FsStorageDriver } from '../storage/fs-storage-driver';
import { NoStorageDriver, payloadLimitSelector, TEMPORAL_PAYLOAD_LIMIT } from '../storage/payload-limit';
import { smallestStoredSize, storedPayloadSelector } from '../storage/payload-selector';
import type * as S3Module from '../storage/s3-storage-driver';
import type { S3StorageDriver } from '../storage/s3-storage-driver';
import type { StorageConfig, StorageLocation } from '../storage/storage-config';

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
      const { S3StorageDriver: Driver } = require('../storage/s3-storage-driver') as typeof S3Module;
      return new Driver(options);
    }
  }
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

/**
 * The data converter of `settings` (its storage and encryption sections). A process makes one and
 * hands it to its clients and workers. Throws a settings error (src/config/settings.ts) for a bad
 * setting, a keyring file that cannot be read included.
 */
export function dataConverterOf(settings: Pick<Settings, 'storage' | 'encryption'>): DataConverter {
  return createDataConverter(settings.storage.get(), settings.encryption.get());
}
