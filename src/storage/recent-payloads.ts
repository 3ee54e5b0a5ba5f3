/**
 * What a storage driver remembers of the payloads this process stored and read, so the hot path of
 * a turn (each Claude call sends and reads the same few segments again) makes no round trip to the
 * store for them: which stored objects are fresh until when (no HEAD or mtime touch before then),
 * and the latest payloads stored or read, by content key (a key names its content, so a payload
 * stored or read once is the payload every later read would return).
 */
import type { Payload } from '@temporalio/common';

/** Bytes of payloads kept in memory for reads. */
export const RECENT_PAYLOAD_BYTES = 32 * 1024 * 1024;
/** Keys whose freshness is remembered. */
const FRESH_KEYS = 100_000;

export class RecentPayloads {
  /** Key → until when its stored object needs no refresh (ms since the epoch); oldest first. */
  private readonly freshUntil = new Map<string, number>();
  /** Key → payload stored or read, least recently used first. */
  private readonly read = new Map<string, { payload: Payload; bytes: number }>();
  private readBytes = 0;

  constructor(private readonly maxBytes = RECENT_PAYLOAD_BYTES) {}

  /** True while the object of `key` is known to be stored and fresh. */
  isFresh(key: string, now = Date.now()): boolean {
    const until = this.freshUntil.get(key);
    return until !== undefined && now < until;
  }

  /** The object of `key` is stored and needs no refresh before `until`. */
  markFresh(key: string, until: number): void {
    this.freshUntil.delete(key);
    this.freshUntil.set(key, until);
    if (this.freshUntil.size > FRESH_KEYS) this.freshUntil.delete(this.freshUntil.keys().next().value!);
  }

  /** The payload of `key`, when stored or read lately. */
  get(key: string): Payload | undefined {
    const hit = this.read.get(key);
    if (!hit) return undefined;
    this.read.delete(key);
    this.read.set(key, hit);
    return hit.payload;
  }

  /** Keeps a payload stored or read (verified against its key; `bytes` its stored size), dropping the least recently used beyond the byte budget. */
  put(key: string, payload: Payload, bytes: number): void {
    if (bytes > this.maxBytes / 4 || this.read.has(key)) return;
    this.read.set(key, { payload, bytes });
    this.readBytes += bytes;
    for (const [k, v] of this.read) {
      if (this.readBytes <= this.maxBytes) break;
      this.read.delete(k);
      this.readBytes -= v.bytes;
    }
  }
}
