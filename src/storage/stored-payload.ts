/**
 * How a payload is kept in a store: its protobuf encoding, with the metadata keys in sorted order so
 * that equal payloads always encode to the same bytes. The object's key is the first 160 bits of the
 * SHA-256 of those bytes (metadata included: the same data under another encoding is another
 * payload), so a payload is stored once however often it is sent, and a retrieved object is checked
 * against its key. 160 bits, as Git names its objects: every claim in history carries a key, and a
 * collision stays out of reach; a key of all 256 bits (stores written before) is read the same way.
 */
import { createHash } from 'node:crypto';
import { StorageDriverClaim, type Payload } from '@temporalio/common';
import type { RecentPayloads } from './recent-payloads';
import { temporal } from '@temporalio/proto';

const PayloadProto = temporal.api.common.v1.Payload;

/** The bytes a store keeps for `payload`: equal payloads give equal bytes. */
export function encodeStoredPayload(payload: Payload): Uint8Array {
  const metadata = payload.metadata ?? {};
  const sorted: Record<string, Uint8Array> = {};
  for (const key of Object.keys(metadata).sort()) sorted[key] = metadata[key]!;
  return PayloadProto.encode({ ...payload, metadata: sorted }).finish();
}

/** The payload a store's object holds. */
export function decodeStoredPayload(bytes: Uint8Array): Payload {
  return PayloadProto.decode(bytes);
}

/** Hex digits of a content key. */
const KEY_DIGITS = 40;

/** The content key of stored bytes: the first {@link KEY_DIGITS} lower-case hex digits of their SHA-256. */
export function contentKey(bytes: Uint8Array, digits = KEY_DIGITS): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, digits);
}

/** The size Temporal counts for a payload: its protobuf encoding, metadata included (measured, not copied). */
export function payloadSize(payload: Payload): number {
  return PayloadProto.encode(payload).len;
}


/** A payload ready for a store: its bytes and their content key. */
export interface EncodedPayload {
  key: string;
  bytes: Uint8Array;
}

/**
 * Writes each distinct payload of a batch once (`write` decides whether the store already has it)
 * and returns one claim per payload, in order: a claim is the content key, the store it was
 * written to (`store`: where, as messages name it, so a reader that looks elsewhere can say so) and
 * `claimData`'s fields (the area, kept-area.ts). What is stored is kept in `recent` for reads: a
 * payload this process stored is usually read next by this process (an activity its workflow task
 * scheduled).
 */
export async function storeEachOnce(
  payloads: Payload[],
  recent: RecentPayloads,
  write: (payload: EncodedPayload) => Promise<void>,
  store: string,
  claimData: Record<string, string> = {},
): Promise<StorageDriverClaim[]> {
  const encoded = payloads.map((payload) => {
    const bytes = encodeStoredPayload(payload);
    return { key: contentKey(bytes), bytes, payload };
  });
  const stored = async (e: (typeof encoded)[number]): Promise<void> => {
    await write(e);
    recent.put(e.key, e.payload, e.bytes.length);
  };
  const writes = new Map<string, Promise<void>>();
  for (const e of encoded) if (!writes.has(e.key)) writes.set(e.key, stored(e));
  await Promise.all(writes.values());
  return encoded.map((e) => new StorageDriverClaim({ key: e.key, store, ...claimData }));
}

/**
 * The error for a claimed payload that is not in this process's store (`here`): when the claim
 * names another store, both stores, as the processes must share one; else where it was looked for
 * (`where`: the store, or its kept area) and why it may be gone (`gone`, the driver's own reasons).
 */
export function missingPayloadError(key: string, claim: StorageDriverClaim, here: string, gone: string, where = here): StoredPayloadError {
  const there = claim.claimData.store;
  if (there && there !== here) {
    return new StoredPayloadError(
      `stored payload ${key} was written to ${there}, and this process reads ${here}: every process that starts, runs or reads these workflows (CLI, client, worker, serve) must use the same store (MCP_TURNS_STORAGE)`,
    );
  }
  return new StoredPayloadError(`stored payload ${key} is not in ${where}: ${gone}`);
}

/** The content key a claim carries, checked to be one (so no path or object name can be smuggled in). */
export function claimedKey(claim: StorageDriverClaim, driverName: string): string {
  const key = claim.claimData.key;
  if (!key || !/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(key)) throw new StoredPayloadError(`not a claim of the ${driverName} driver: ${JSON.stringify(claim.claimData)}`);
  return key;
}

/** What a driver's store calls did since it was created. */
export interface StoreCounts {
  /** Objects written. */
  written: number;
  /** Payloads already stored, not written again. */
  reused: number;
}

/** A store's object that is not there, or is not what its key says. */
export class StoredPayloadError extends Error {
  override name = 'StoredPayloadError';
}

/** Decodes an object read back under `key`, refusing bytes whose hash is not the key. */
export function verifiedPayload(key: string, bytes: Uint8Array, where: string): Payload {
  const actual = contentKey(bytes, key.length);
  if (actual !== key) throw new StoredPayloadError(`stored payload ${key} in ${where} is corrupt (its content hashes to ${actual})`);
  return decodeStoredPayload(bytes);
}
