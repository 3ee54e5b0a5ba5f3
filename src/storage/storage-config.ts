/**
 * Where payloads above the threshold go, read from the environment so that the client, the CLI and
 * every worker (which must agree: a payload stored by one is read by another) take it from one place
 * (src/config/settings.ts reads it):
 *
 * - `MCP_TURNS_STORAGE`: `fs:DIR` (a directory; plain `fs` or unset = `payloads/` in the state
 *   directory, beside the dev server's database), `s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=1`
 *   (an S3-compatible bucket; credentials from the AWS SDK's own chain, never from this string), or
 *   `none` (payloads stay inline; one over Temporal's limit fails with a line saying so).
 * - `MCP_TURNS_STORAGE_THRESHOLD`: payloads this size or larger are stored (default 256 KiB).
 * - `MCP_TURNS_STORAGE_SEGMENT_THRESHOLD`: transcript segments this size or larger are stored (default 256 bytes: a claim in history is ~190 bytes).
 */
import path from 'node:path';
import { TEMPORAL_PAYLOAD_LIMIT } from './payload-limit';
import type { StorageThresholds } from './payload-selector';
import type { S3StorageOptions } from './s3-storage-driver';
import { formatBytes } from '../core/text';

/** Where stored payloads live. */
export type StorageLocation =
  | { kind: 'none' }
  | { kind: 'fs'; dir: string }
  | ({ kind: 's3' } & Pick<S3StorageOptions, 'bucket' | 'prefix' | 'endpoint' | 'region' | 'forcePathStyle'>);

export interface StorageConfig extends StorageThresholds {
  location: StorageLocation;
}

export const DEFAULT_STORAGE_THRESHOLD = 256 * 1024;
export const DEFAULT_SEGMENT_THRESHOLD = 256;
export const DEFAULT_CARRIED_THRESHOLD = 16 * 1024;

/** A storage setting that cannot be used; the message names the variable and what it accepts. */
export class StorageConfigError extends Error {
  override name = 'StorageConfigError';
}

/** The filesystem store's default directory: `payloads/` beside the dev server's database. */
export function defaultPayloadDir(dir: string): string {
  return path.join(dir, 'payloads');
}

const S3_PARAMETERS = ['endpoint', 'region', 'path_style'];

function parseS3(text: string): StorageLocation {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new StorageConfigError(`MCP_TURNS_STORAGE: not a URL: ${text}`);
  }
  if (url.username || url.password) {
    throw new StorageConfigError(
      'MCP_TURNS_STORAGE: credentials do not go in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)',
    );
  }
  const bucket = url.hostname;
  if (!bucket) throw new StorageConfigError('MCP_TURNS_STORAGE: s3://BUCKET[/PREFIX] needs a bucket');
  for (const key of url.searchParams.keys()) {
    if (!S3_PARAMETERS.includes(key)) throw new StorageConfigError(`MCP_TURNS_STORAGE: unknown parameter ${key} (known: ${S3_PARAMETERS.join(', ')})`);
  }
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]+/.test(endpoint)) {
    throw new StorageConfigError(`MCP_TURNS_STORAGE: endpoint must be an http(s) URL, got ${endpoint}`);
  }
  const pathStyle = url.searchParams.get('path_style');
  if (pathStyle !== null && !['0', '1', 'true', 'false'].includes(pathStyle)) {
    throw new StorageConfigError(`MCP_TURNS_STORAGE: path_style must be 1 or 0, got ${pathStyle}`);
  }
  const trimmed = url.pathname.replace(/^\/+/, '');
  const prefix = trimmed && !trimmed.endsWith('/') ? `${trimmed}/` : trimmed;
  const region = url.searchParams.get('region') ?? undefined;
  return {
    kind: 's3',
    bucket,
    prefix,
    ...(endpoint !== undefined ? { endpoint } : {}),
    ...(region !== undefined ? { region } : {}),
    forcePathStyle: pathStyle === '1' || pathStyle === 'true',
  };
}

/** Reads `MCP_TURNS_STORAGE`'s value (see the module comment); `fs` alone is under `stateDirectory`. */
export function parseStorageLocation(text: string | undefined, stateDirectory: string): StorageLocation {
  const value = text?.trim() ?? '';
  if (value === '' || value === 'fs') return { kind: 'fs', dir: defaultPayloadDir(stateDirectory) };
  if (value === 'none') return { kind: 'none' };
  if (value.startsWith('fs:')) {
    const dir = value.slice(3);
    if (!dir) throw new StorageConfigError('MCP_TURNS_STORAGE: fs:DIR needs a directory');
    return { kind: 'fs', dir: path.resolve(dir) };
  }
  if (value.startsWith('s3://')) return parseS3(value);
  throw new StorageConfigError(`MCP_TURNS_STORAGE must be fs, fs:DIR, s3://BUCKET[/PREFIX]?endpoint=URL or none, got "${value}"`);
}

/** A byte count: `262144`, `256KiB`, `256k`, `2MiB`, `2m`. */
export function parseByteSize(text: string, name: string): number {
  const m = /^\s*(\d+)\s*(b|k|kb|kib|m|mb|mib)?\s*$/i.exec(text);
  if (!m) throw new StorageConfigError(`${name} must be a size such as 262144, 256KiB or 2MiB, got "${text}"`);
  const unit = (m[2] ?? 'b').toLowerCase();
  return Number(m[1]) * (unit.startsWith('m') ? 1024 * 1024 : unit.startsWith('k') ? 1024 : 1);
}

function sizeFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const size = parseByteSize(text, name);
  if (size < 1 || size >= TEMPORAL_PAYLOAD_LIMIT) {
    throw new StorageConfigError(`${name} must be between 1 byte and ${formatBytes(TEMPORAL_PAYLOAD_LIMIT)} (Temporal's payload limit), got "${text}"`);
  }
  return size;
}

/** An S3 location without `region=` takes AWS_REGION's, as the AWS SDK would. */
function withDefaultRegion(location: StorageLocation, region: string | undefined): StorageLocation {
  return location.kind === 's3' && location.region === undefined && region ? { ...location, region } : location;
}

/**
 * The storage settings of an environment (src/config/settings.ts reads it once per process); the
 * default store is under `stateDirectory`. Throws {@link StorageConfigError}.
 */
export function storageConfigFromEnv(env: NodeJS.ProcessEnv, stateDirectory: string): StorageConfig {
  return {
    location: withDefaultRegion(parseStorageLocation(env.MCP_TURNS_STORAGE, stateDirectory), env.AWS_REGION?.trim()),
    thresholdBytes: sizeFromEnv(env, 'MCP_TURNS_STORAGE_THRESHOLD', DEFAULT_STORAGE_THRESHOLD),
    segmentThresholdBytes: sizeFromEnv(env, 'MCP_TURNS_STORAGE_SEGMENT_THRESHOLD', DEFAULT_SEGMENT_THRESHOLD),
    carriedThresholdBytes: sizeFromEnv(env, 'MCP_TURNS_STORAGE_CARRIED_THRESHOLD', DEFAULT_CARRIED_THRESHOLD),
  };
}

/** One line for logs: where payloads go and from what size. */
export function describeStorage(config: StorageConfig): string {
  const sizes = `payloads from ${formatBytes(config.thresholdBytes)}, transcript segments from ${formatBytes(config.segmentThresholdBytes)}, what a conversation keeps from ${formatBytes(config.carriedThresholdBytes)}`;
  const where = config.location;
  switch (where.kind) {
    case 'none':
      return `no external storage (payloads over ${formatBytes(TEMPORAL_PAYLOAD_LIMIT)} are refused)`;
    case 'fs':
      return `files in ${where.dir} (${sizes})`;
    case 's3':
      return `s3://${where.bucket}/${where.prefix ?? ''}${where.endpoint ? ` at ${where.endpoint}` : ''} (${sizes})`;
  }
}
