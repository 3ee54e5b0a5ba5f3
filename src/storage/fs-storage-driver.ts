/**
 * External Storage on the local filesystem: one file per payload at `<dir>/<first two hex>/<key>`,
 * keyed by content (see stored-payload.ts). A payload already there is not written again; its
 * modification time is set to now instead (at most once an hour per process: recent-payloads.ts), so
 * an age-based cleanup (`find <dir> -type f -mtime +N -delete`) measures the time since a payload
 * was last sent, not since it was first stored. Payloads read lately are kept in memory.
 * Every process that starts, runs or reads workflows must see the same directory: this driver
 * suits one machine (the dev server) or a shared volume; clusters use the S3 driver.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type {
  Payload,
  StorageDriver,
  StorageDriverClaim,
  StorageDriverRetrieveContext,
  StorageDriverStoreContext,
} from '@temporalio/common';
import { RecentPayloads } from './recent-payloads';
import { claimedKey, missingPayloadError, storeEachOnce, verifiedPayload, type EncodedPayload, type StoreCounts } from './stored-payload';

/**
 * How long a payload's age may lag its last use: a payload sent again within this long of its last
 * touch by this process is not touched again (cleanup by age is meant in days).
 */
export const DEFAULT_TOUCH_AFTER_MS = 60 * 60 * 1000;

/** The driver name written into every reference this driver's claims produce. */
export const FS_DRIVER_NAME = 'mcp-turns-fs';

export class FsStorageDriver implements StorageDriver {
  readonly name = FS_DRIVER_NAME;
  readonly type = 'mcp-turns.fs';
  /** Totals since this driver was created. */
  readonly counts: StoreCounts = { written: 0, reused: 0 };
  private readonly recent = new RecentPayloads();

  constructor(
    /** The directory the objects live in (created on first write). */
    readonly dir: string,
    /** A payload this driver stored or touched is touched again when sent after this long, not before. */
    private readonly touchAfterMs = DEFAULT_TOUCH_AFTER_MS,
  ) {}

  /** `fs:<dir>`, for claims and messages. */
  get location(): string {
    return `fs:${this.dir}`;
  }

  /** Where the object of `key` lives. */
  objectPath(key: string): string {
    return path.join(this.dir, key.slice(0, 2), key);
  }

  async store(_context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    return storeEachOnce(payloads, this.recent, (payload) => this.write(payload), this.location);
  }

  async retrieve(_context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(claims.map((claim) => this.retrieveOne(claim)));
  }

  private async write({ key, bytes }: EncodedPayload): Promise<void> {
    if (this.recent.isFresh(key)) {
      this.counts.reused++;
      return;
    }
    const file = this.objectPath(key);
    const now = new Date();
    try {
      await fs.utimes(file, now, now);
      this.recent.markFresh(key, now.getTime() + this.touchAfterMs);
      this.counts.reused++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await fs.mkdir(path.dirname(file), { recursive: true });
      // Written aside and renamed, so a reader never sees half an object.
      const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
      await fs.writeFile(partial, bytes);
      await fs.rename(partial, file);
      this.recent.markFresh(key, now.getTime() + this.touchAfterMs);
      this.counts.written++;
    }
  }

  private async retrieveOne(claim: StorageDriverClaim): Promise<Payload> {
    const key = claimedKey(claim, this.name);
    const known = this.recent.get(key);
    if (known) return known;
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(this.objectPath(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw missingPayloadError(key, claim, this.location, "it was deleted (cleanup shorter than the workflow's retention?) or this process uses another store than the one that wrote it (MCP_TURNS_STORAGE)");
    }
    const payload = verifiedPayload(key, bytes, this.dir);
    this.recent.put(key, payload, bytes.length);
    return payload;
  }
}
