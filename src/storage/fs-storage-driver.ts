/**
 * External Storage on the local filesystem: one file per payload at `<dir>/<first two hex>/<key>`,
 * keyed by content (see stored-payload.ts). A payload already there is not written again; its
 * modification time is set to now instead (at most once an hour per process: recent-payloads.ts), so
 * an age-based cleanup (`find <dir> -type f -mtime +N -delete`) measures the time since a payload
 * was last sent, not since it was first stored. Payloads read lately are kept in memory.
 * A batch schedule's arguments go to the kept area instead, `<dir>.kept/<first two hex>/<key>`
 * (kept-area.ts), which that cleanup never sees.
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
import { areaClaimData, isKeptClaim, isKeptTarget, keptAreaDir } from './kept-area';

/**
 * How long a payload's age may lag its last use: a payload sent again within this long of its last
 * touch by this process is not touched again (cleanup by age is meant in days).
 */
export const DEFAULT_TOUCH_AFTER_MS = 60 * 60 * 1000;

/** The driver name written into every reference this driver's claims produce. */
export const FS_DRIVER_NAME = 'mcp-turns-fs';

/** Why a payload of the store's own area may be missing. */
const GONE = "it was deleted (cleanup shorter than the workflow's retention?) or this process uses another store than the one that wrote it (MCP_TURNS_STORAGE)";
/** Why a payload of the kept area may be missing. */
const KEPT_GONE = 'it was deleted by hand (the age-based cleanup never sees the kept area) or this process uses another store than the one that wrote it (MCP_TURNS_STORAGE)';

/**
 * Writes `bytes` to `file` aside and renames it, so a reader never sees half an object. A directory
 * in `made` is not made again (one call fewer per write); one removed since is.
 */
async function writeObject(file: string, bytes: Uint8Array, made: Set<string>): Promise<void> {
  const dir = path.dirname(file);
  if (!made.has(dir)) {
    await fs.mkdir(dir, { recursive: true });
    made.add(dir);
  }
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  try {
    await fs.writeFile(partial, bytes);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(partial, bytes);
  }
  await fs.rename(partial, file);
}

export class FsStorageDriver implements StorageDriver {
  readonly name = FS_DRIVER_NAME;
  readonly type = 'mcp-turns.fs';
  /** Totals since this driver was created. */
  readonly counts: StoreCounts = { written: 0, reused: 0 };
  private readonly recent = new RecentPayloads();
  /** Directories this driver has made (or found). */
  private readonly madeDirs = new Set<string>();

  /** The kept area's directory, `<dir>.kept` (created on first write). */
  readonly keptDir: string;

  constructor(
    /** The directory the objects live in (created on first write). */
    readonly dir: string,
    /** A payload this driver stored or touched is touched again when sent after this long, not before. */
    private readonly touchAfterMs = DEFAULT_TOUCH_AFTER_MS,
  ) {
    this.keptDir = keptAreaDir(dir);
  }

  /** `fs:<dir>`, for claims and messages. */
  get location(): string {
    return `fs:${this.dir}`;
  }

  /** Where the object of `key` lives. */
  objectPath(key: string): string {
    return path.join(this.dir, key.slice(0, 2), key);
  }

  /** Where the kept object of `key` lives. */
  keptPath(key: string): string {
    return path.join(this.keptDir, key.slice(0, 2), key);
  }

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const kept = isKeptTarget(context.target);
    const write = kept ? (payload: EncodedPayload) => this.keep(payload) : (payload: EncodedPayload) => this.write(payload);
    return storeEachOnce(payloads, this.recent, write, this.location, areaClaimData(kept));
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
      await writeObject(file, bytes, this.madeDirs);
      this.recent.markFresh(key, now.getTime() + this.touchAfterMs);
      this.counts.written++;
    }
  }

  /** Writes a payload to the kept area unless it is there (no age to renew: no cleanup sees it). */
  private async keep({ key, bytes }: EncodedPayload): Promise<void> {
    const file = this.keptPath(key);
    try {
      await fs.access(file);
      this.counts.reused++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await writeObject(file, bytes, this.madeDirs);
      this.counts.written++;
    }
  }

  private async retrieveOne(claim: StorageDriverClaim): Promise<Payload> {
    const key = claimedKey(claim, this.name);
    const kept = isKeptClaim(claim, this.name);
    const known = this.recent.get(key);
    if (known) return known;
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(kept ? this.keptPath(key) : this.objectPath(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw kept ? missingPayloadError(key, claim, this.location, KEPT_GONE, `fs:${this.keptDir}`) : missingPayloadError(key, claim, this.location, GONE);
    }
    const payload = verifiedPayload(key, bytes, kept ? this.keptDir : this.dir);
    this.recent.put(key, payload, bytes.length);
    return payload;
  }
}
