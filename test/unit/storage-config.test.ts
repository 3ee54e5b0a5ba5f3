import path from 'node:path';
import {
  defaultPayloadDir,
  describeStorage,
  parseByteSize,
  parseStorageLocation,
  storageConfigFromEnv,
  StorageConfigError,
} from '../../src/storage/storage-config';
import { stateDir } from '../../src/temporal/project-paths';

const dir = stateDir(process.env);

describe('MCP_TURNS_STORAGE', () => {
  it('defaults to files in payloads/ beside the dev server database', () => {
    expect(defaultPayloadDir(dir)).toBe(path.join(dir, 'payloads'));
    expect(parseStorageLocation(undefined, dir)).toEqual({ kind: 'fs', dir: defaultPayloadDir(dir) });
    expect(parseStorageLocation('', dir)).toEqual({ kind: 'fs', dir: defaultPayloadDir(dir) });
    expect(parseStorageLocation('fs', dir)).toEqual({ kind: 'fs', dir: defaultPayloadDir(dir) });
  });

  it('takes a directory, resolved to an absolute path', () => {
    expect(parseStorageLocation('fs:/var/lib/payloads', dir)).toEqual({ kind: 'fs', dir: '/var/lib/payloads' });
    expect(parseStorageLocation('fs:rel/dir', dir)).toEqual({ kind: 'fs', dir: path.resolve('rel/dir') });
  });

  it('turns storage off with none', () => {
    expect(parseStorageLocation('none', dir)).toEqual({ kind: 'none' });
  });

  it('reads an S3 URL: bucket, prefix, endpoint, region, path style', () => {
    expect(parseStorageLocation('s3://chats/mcp-turns?endpoint=http://127.0.0.1:7070&region=eu-west-1&path_style=1', dir)).toEqual({
      kind: 's3',
      bucket: 'chats',
      prefix: 'mcp-turns/',
      endpoint: 'http://127.0.0.1:7070',
      region: 'eu-west-1',
      forcePathStyle: true,
    });
    expect(parseStorageLocation('s3://chats', dir)).toEqual({ kind: 's3', bucket: 'chats', prefix: '', forcePathStyle: false });
  });

  it('refuses credentials in the URL and says where they go', () => {
    expect(() => parseStorageLocation('s3://AKIA:secret@chats', dir)).toThrow(
      new StorageConfigError(
        'MCP_TURNS_STORAGE: credentials do not go in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)',
      ),
    );
  });

  it('names what is wrong with a bad value', () => {
    expect(() => parseStorageLocation('s3://chats?endpont=http://x', dir)).toThrow('unknown parameter endpont (known: endpoint, region, path_style)');
    expect(() => parseStorageLocation('s3://chats?endpoint=127.0.0.1:7070', dir)).toThrow('endpoint must be an http(s) URL');
    expect(() => parseStorageLocation('s3://chats?path_style=yes', dir)).toThrow('path_style must be 1 or 0');
    expect(() => parseStorageLocation('fs:', dir)).toThrow('fs:DIR needs a directory');
    expect(() => parseStorageLocation('gcs://bucket', dir)).toThrow('MCP_TURNS_STORAGE must be fs, fs:DIR, s3://BUCKET[/PREFIX]?endpoint=URL or none, got "gcs://bucket"');
  });
});

describe('thresholds', () => {
  it('read sizes in bytes, KiB and MiB', () => {
    expect(parseByteSize('262144', 'X')).toBe(262_144);
    expect(parseByteSize('256KiB', 'X')).toBe(262_144);
    expect(parseByteSize('2k', 'X')).toBe(2048);
    expect(parseByteSize('1 MiB', 'X')).toBe(1_048_576);
    expect(() => parseByteSize('lots', 'MCP_TURNS_STORAGE_THRESHOLD')).toThrow(
      'MCP_TURNS_STORAGE_THRESHOLD must be a size such as 262144, 256KiB or 2MiB, got "lots"',
    );
  });

  it('default to 256 KiB for any payload, 512 bytes for transcript segments and 16 KiB for what a conversation keeps', () => {
    const config = storageConfigFromEnv({}, dir);
    expect(config.thresholdBytes).toBe(256 * 1024);
    expect(config.segmentThresholdBytes).toBe(256);
    expect(config.carriedThresholdBytes).toBe(16 * 1024);
  });

  it('are configurable, but only below the payload limit they exist to stay under', () => {
    const config = storageConfigFromEnv({ MCP_TURNS_STORAGE_THRESHOLD: '64KiB', MCP_TURNS_STORAGE_SEGMENT_THRESHOLD: '512', MCP_TURNS_STORAGE_CARRIED_THRESHOLD: '4k' }, dir);
    expect([config.thresholdBytes, config.segmentThresholdBytes, config.carriedThresholdBytes]).toEqual([65_536, 512, 4096]);
    expect(() => storageConfigFromEnv({ MCP_TURNS_STORAGE_THRESHOLD: '2MiB' }, dir)).toThrow(
      'MCP_TURNS_STORAGE_THRESHOLD must be between 1 byte and 2.0 MiB (Temporal\'s payload limit), got "2MiB"',
    );
  });
});

describe('describeStorage', () => {
  it('says where payloads go and from what size, without credentials', () => {
    const config = storageConfigFromEnv({ MCP_TURNS_STORAGE: 's3://chats/p?endpoint=http://127.0.0.1:7070&path_style=1' }, dir);
    expect(describeStorage(config)).toBe(
      's3://chats/p/ at http://127.0.0.1:7070 (payloads from 256.0 KiB, transcript segments from 256 B, what a conversation keeps from 16.0 KiB)',
    );
    expect(describeStorage(storageConfigFromEnv({ MCP_TURNS_STORAGE: 'none' }, dir))).toBe(
      'no external storage (payloads over 2.0 MiB are refused)',
    );
  });
});
