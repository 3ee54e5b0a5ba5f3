/**
 * External Storage in an S3-compatible bucket (AWS S3, MinIO, Versity's gateway, ...): one object
 * per payload at `<prefix><key>`, keyed by content (see stored-payload.ts). A payload already there
 * is not uploaded again, unless its object is older than `refreshAfterMs` (a day): then it is written
 * again, so that a lifecycle rule that expires objects by age counts from the last time a payload
 * was sent (within a day), not from the first. A batch schedule's arguments go to the kept area
 * instead, `<prefix>.kept/<key>` beside the prefix (`kept/<key>` without one; kept-area.ts), which
 * a lifecycle rule on the prefix never reaches. Credentials come from the AWS SDK's own chain (AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY, AWS_PROFILE, instance roles): they are never part of the configuration
 * string, a claim or a log line.
 */
import { RecentPayloads } from './recent-payloads';
import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type {
  Payload,
  StorageDriver,
  StorageDriverClaim,
  StorageDriverRetrieveContext,
  StorageDriverStoreContext,
} from '@temporalio/common';
import { claimedKey, missingPayloadError, storeEachOnce, StoredPayloadError, verifiedPayload, type EncodedPayload, type StoreCounts } from './stored-payload';
import { areaClaimData, isKeptClaim, isKeptTarget, keptAreaPrefix } from './kept-area';

/** The driver name written into every reference this driver's claims produce. */
export const S3_DRIVER_NAME = 'mcp-turns-s3';

/** A day: an object reused after this long is written again to restart its age. */
export const DEFAULT_REFRESH_AFTER_MS = 24 * 60 * 60 * 1000;

export interface S3StorageOptions {
  bucket: string;
  /**
   * Prefix of every object key, e.g. `mcp-turns/`; one without a final `/` gets one (`mcp-turns`
   * means `mcp-turns/`, as in `s3://BUCKET/mcp-turns`). @default ""
   */
  prefix?: string;
  /** Endpoint of an S3-compatible server, e.g. `http://127.0.0.1:7070`. @default AWS S3 */
  endpoint?: string;
  /** @default us-east-1 (the settings put AWS_REGION here when the URL names no region) */
  region?: string;
  /** Address buckets as `<endpoint>/<bucket>` (most self-hosted servers need it). @default false */
  forcePathStyle?: boolean;
  /** Explicit credentials; @default the AWS SDK's chain (environment, profile, instance role) */
  credentials?: S3ClientConfig['credentials'];
  /** @default {@link DEFAULT_REFRESH_AFTER_MS} */
  refreshAfterMs?: number;
}

/** Why a payload of the store's own area may be missing. */
const GONE = "it expired (lifecycle rule shorter than the workflow's retention?) or this process uses another store than the one that wrote it (MCP_TURNS_STORAGE)";
/** Why a payload of the kept area may be missing. */
const KEPT_GONE = "it was deleted by hand (a lifecycle rule on the store's prefix never reaches the kept area) or this process uses another store than the one that wrote it (MCP_TURNS_STORAGE)";

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** A prefix as a folder: empty, or ending in `/` (how the settings read `s3://BUCKET/PREFIX`). */
function folderPrefix(prefix: string): string {
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
}

export class S3StorageDriver implements StorageDriver {
  readonly name = S3_DRIVER_NAME;
  readonly type = 'mcp-turns.s3';
  /** Totals since this driver was created. */
  readonly counts: StoreCounts = { written: 0, reused: 0 };
  readonly bucket: string;
  /** Prefix of the store's own objects: empty, or ending in `/`. */
  readonly prefix: string;
  /** Prefix of the kept area's objects, beside {@link prefix}. */
  readonly keptPrefix: string;
  private readonly client: S3Client;
  private readonly refreshAfterMs: number;
  private readonly recent = new RecentPayloads();

  constructor(options: S3StorageOptions) {
    this.bucket = options.bucket;
    this.prefix = folderPrefix(options.prefix ?? '');
    this.keptPrefix = keptAreaPrefix(this.prefix);
    this.refreshAfterMs = options.refreshAfterMs ?? DEFAULT_REFRESH_AFTER_MS;
    this.client = new S3Client({
      region: options.region ?? 'us-east-1',
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? false,
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // Temporal retries the task that needed the payload; one SDK retry covers a dropped connection.
      maxAttempts: 2,
    });
  }

  /** The object key of a content key. */
  objectKey(key: string): string {
    return `${this.prefix}${key}`;
  }

  /** The object key of a content key in the kept area. */
  keptObjectKey(key: string): string {
    return `${this.keptPrefix}${key}`;
  }

  /** `s3://bucket/prefix`, for claims and messages. */
  get location(): string {
    return `s3://${this.bucket}/${this.prefix}`;
  }

  /** `s3://bucket/<kept prefix>`, for messages. */
  get keptLocation(): string {
    return `s3://${this.bucket}/${this.keptPrefix}`;
  }

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const kept = isKeptTarget(context.target);
    const write = kept ? (payload: EncodedPayload) => this.keep(payload, context.abortSignal) : (payload: EncodedPayload) => this.write(payload, context.abortSignal);
    return storeEachOnce(payloads, this.recent, write, this.location, areaClaimData(kept));
  }

  async retrieve(context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(claims.map((claim) => this.retrieveOne(claim, context.abortSignal)));
  }

  /** Closes the HTTP connections. */
  close(): void {
    this.client.destroy();
  }

  private async write({ key, bytes }: EncodedPayload, abortSignal?: AbortSignal): Promise<void> {
    if (this.recent.isFresh(key)) {
      this.counts.reused++;
      return;
    }
    const Key = this.objectKey(key);
    let lastModified: Date | undefined;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }), { abortSignal });
      lastModified = head.LastModified ?? new Date(0);
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
    }
    const fresh = lastModified !== undefined && Date.now() - lastModified.getTime() <= this.refreshAfterMs;
    if (fresh) {
      this.recent.markFresh(key, lastModified!.getTime() + this.refreshAfterMs);
      this.counts.reused++;
      return;
    }
    // Absent, or old enough that an age-based expiry could take it while it is still in use: write it
    // (again). Rewriting the bytes renews Last-Modified on every S3-compatible server; a server-side
    // copy onto itself does not on all of them (Versity's gateway keeps the old date).
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: bytes, ContentType: 'application/x-protobuf' }), { abortSignal });
    this.recent.markFresh(key, Date.now() + this.refreshAfterMs);
    if (lastModified === undefined) this.counts.written++;
    else this.counts.reused++;
  }

  /** Writes a payload to the kept area unless it is there (no age to renew: no lifecycle rule reaches it). */
  private async keep({ key, bytes }: EncodedPayload, abortSignal?: AbortSignal): Promise<void> {
    const Key = this.keptObjectKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }), { abortSignal });
      this.counts.reused++;
      return;
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
    }
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: bytes, ContentType: 'application/x-protobuf' }), { abortSignal });
    this.counts.written++;
  }

  private async retrieveOne(claim: StorageDriverClaim, abortSignal?: AbortSignal): Promise<Payload> {
    const key = claimedKey(claim, this.name);
    const kept = isKeptClaim(claim, this.name);
    const known = this.recent.get(key);
    if (known) return known;
    const where = kept ? this.keptLocation : this.location;
    let bytes: Uint8Array;
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: kept ? this.keptObjectKey(key) : this.objectKey(key) }), { abortSignal });
      if (!object.Body) throw new StoredPayloadError(`stored payload ${key} in ${where} has no body`);
      bytes = await object.Body.transformToByteArray();
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
      throw missingPayloadError(key, claim, this.location, kept ? KEPT_GONE : GONE, where);
    }
    const payload = verifiedPayload(key, bytes, where);
    this.recent.put(key, payload, bytes.length);
    return payload;
  }
}
