/**
 * The payload codec that keeps conversations unreadable outside mcp-turns' processes: every payload
 * is encrypted with AES-256-GCM (node:crypto) under the keyring's current key before it leaves the
 * process, and decrypted under whichever key its metadata names.
 *
 * The IV is synthetic: an HMAC-SHA256 of the bytes encrypted, under a key derived for that purpose,
 * so equal payloads give equal ciphertext (and nothing else about them is revealed). That is what
 * lets External Storage, which stores by content after encoding, keep each transcript segment once.
 * A transcript segment is marked as one in its metadata, so storage can still tell it apart.
 *
 * Optionally the payload is compressed (brotli) before it is encrypted, when that makes it smaller.
 * Plaintext payloads (written before encryption was on) pass through decoding unchanged.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants as zlibConstants } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { decodeStoredPayload, encodeStoredPayload } from '../storage/stored-payload';
import { isTranscriptSegment, SEGMENT_METADATA } from '../storage/payload-selector';
import type { Keyring, KeyringSource } from './keyring';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
export const CIPHER_METADATA = 'encryption-cipher';
export const COMPRESSION_METADATA = 'encryption-compression';

const CIPHER = 'AES-256-GCM';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BROTLI = 'br';

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** A payload whose key is not in this process's keyring. */
export class EncryptionKeyMissingError extends Error {
  override name = 'EncryptionKeyMissing';
  constructor(
    readonly keyId: string,
    /** The process's keyring file; undefined when it has none. */
    keyringFile: string | undefined,
  ) {
    super(
      keyringFile
        ? `a payload is encrypted under key ${keyId}, which the keyring ${keyringFile} lacks: add ${keyId} to it (copy the entry from a keyring that has it)`
        : `a payload is encrypted under key ${keyId}, and this process has no keyring: set MCP_TURNS_KEYRING to a keyring file holding ${keyId}`,
    );
  }
}

/** A payload that does not decrypt under the key its metadata names: another key of that id, or altered bytes. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

interface DerivedKey {
  encryption: Buffer;
  iv: Buffer;
}

function derive(key: Buffer): DerivedKey {
  const expand = (info: string) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, 32));
  return { encryption: expand('mcp-turns payload encryption'), iv: expand('mcp-turns payload iv') };
}

function metadataText(payload: Payload, key: string): string | undefined {
  const value = payload.metadata?.[key];
  return value ? text.decode(value) : undefined;
}

/** True when the payload is one this codec encrypted. */
export function isEncrypted(payload: Payload): boolean {
  return metadataText(payload, 'encoding') === ENCRYPTED_ENCODING;
}

/** The key id an encrypted payload names, else undefined. */
export function payloadKeyId(payload: Payload): string | undefined {
  return isEncrypted(payload) ? metadataText(payload, KEY_ID_METADATA) : undefined;
}

export interface EncryptionCodecOptions {
  /** A fixed ring, or one followed as its file changes (keyring.ts `followKeyring`). */
  keyring: Keyring | KeyringSource;
  /** Compress (brotli) before encrypting when that is smaller. @default false */
  compress?: boolean;
  /** Told once per call that meets a key the ring lacks (before the error is thrown). */
  onMissingKey?: (keyId: string) => void;
}

export class EncryptionCodec implements PayloadCodec {
  private readonly source: KeyringSource;
  /** Derived keys by id, for the ring they were derived from. */
  private derivedFor?: Keyring;
  private derived = new Map<string, DerivedKey>();

  constructor(private readonly options: EncryptionCodecOptions) {
    const ring = options.keyring;
    this.source = 'refresh' in ring ? ring : { current: () => ring, refresh: () => ring };
  }

  /** The ring as it is now, with its derived keys. */
  private ring(refresh = false): Keyring {
    const ring = refresh ? this.source.refresh() : this.source.current();
    if (ring !== this.derivedFor) {
      this.derived = new Map([...ring.keys].map(([id, key]) => [id, derive(key)]));
      this.derivedFor = ring;
    }
    return ring;
  }

  /** The id payloads are encrypted under. */
  get currentKeyId(): string {
    return this.ring().current;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encodeOne(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decodeOne(payload));
  }

  encodeOne(payload: Payload): Payload {
    if (isEncrypted(payload)) return payload;
    const keyId = this.ring().current;
    const key = this.derived.get(keyId)!;
    const plain = encodeStoredPayload(payload);
    let body: Uint8Array = plain;
    let compression: string | undefined;
    if (this.options.compress) {
      const compressed = brotliCompressSync(plain, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } });
      if (compressed.length < plain.length) {
        body = compressed;
        compression = BROTLI;
      }
    }
    const iv = createHmac('sha256', key.iv).update(body).digest().subarray(0, IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.encryption, iv);
    cipher.setAAD(additionalData(keyId, compression));
    const sealed = Buffer.concat([iv, cipher.update(body), cipher.final(), cipher.getAuthTag()]);
    const metadata: Record<string, Uint8Array> = {
      encoding: utf8.encode(ENCRYPTED_ENCODING),
      [CIPHER_METADATA]: utf8.encode(CIPHER),
      [KEY_ID_METADATA]: utf8.encode(keyId),
    };
    if (compression) metadata[COMPRESSION_METADATA] = utf8.encode(compression);
    if (isTranscriptSegment(payload)) metadata[SEGMENT_METADATA] = utf8.encode('1');
    return { metadata, data: sealed };
  }

  decodeOne(payload: Payload): Payload {
    if (!isEncrypted(payload)) return payload;
    const keyId = metadataText(payload, KEY_ID_METADATA) ?? '(none)';
    let ring = this.ring();
    let key = this.derived.get(keyId);
    if (!key) {
      ring = this.ring(true);
      key = this.derived.get(keyId);
    }
    if (!key) {
      this.options.onMissingKey?.(keyId);
      throw new EncryptionKeyMissingError(keyId, ring.file);
    }
    const compression = metadataText(payload, COMPRESSION_METADATA);
    const data = payload.data ?? new Uint8Array();
    let body: Buffer;
    try {
      if (data.length < IV_BYTES + TAG_BYTES) throw new Error('too short');
      const decipher = createDecipheriv('aes-256-gcm', key.encryption, data.subarray(0, IV_BYTES));
      decipher.setAAD(additionalData(keyId, compression));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      body = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        `a payload under key ${keyId} does not decrypt: the key ${keyId} in ${ring.file} is not the one it was encrypted with, or the payload was altered`,
      );
    }
    if (compression !== undefined && compression !== BROTLI) {
      throw new PayloadDecryptionError(`a payload under key ${keyId} names an unknown compression ${compression}`);
    }
    return decodeStoredPayload(compression ? brotliDecompressSync(body) : body);
  }
}

/** What the tag also covers: the key id and the compression, so neither can be swapped. */
function additionalData(keyId: string, compression: string | undefined): Buffer {
  return Buffer.from(`${keyId}\0${compression ?? ''}`, 'utf8');
}

/**
 * The codec of a process without a keyring: it encrypts nothing, and an encrypted payload it meets
 * fails with the line that says which key to configure, instead of an unknown encoding.
 */
export class NoKeyringCodec implements PayloadCodec {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    for (const payload of payloads) {
      if (isEncrypted(payload)) {
        const keyId = payloadKeyId(payload) ?? '(none)';
        throw new EncryptionKeyMissingError(keyId, undefined);
      }
    }
    return payloads;
  }
}
