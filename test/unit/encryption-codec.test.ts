/**
 * The encryption codec: what leaves the process is ciphertext under the current key, any key of the
 * ring decrypts, equal payloads give equal ciphertext (so stored segments are kept once), segments
 * stay recognisable, a missing key is one clear error, and plaintext payloads still decode.
 */
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { EncryptionCodec, EncryptionKeyMissingError, isEncrypted, payloadKeyId, PayloadDecryptionError } from '../../src/encryption/encryption-codec';
import type { Keyring } from '../../src/encryption/keyring';
import { isTranscriptSegment } from '../../src/storage/payload-selector';

const k1 = Buffer.alloc(32, 1);
const k2 = Buffer.alloc(32, 2);
const ring = (current: string, keys: Record<string, Buffer>): Keyring => ({ file: '/k/ring.json', current, keys: new Map(Object.entries(keys)) });
const payload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const bytesOf = (p: Payload): string => Buffer.from(p.data ?? []).toString('latin1') + JSON.stringify(p.metadata);

describe('EncryptionCodec', () => {
  const canary = 'CANARY-7f3a9';
  const codec = new EncryptionCodec({ keyring: ring('k1', { k1 }) });

  it('encrypts under the current key and decrypts back to the same payload', async () => {
    const [encoded] = await codec.encode([payload({ question: canary })]);
    expect(isEncrypted(encoded!)).toBe(true);
    expect(payloadKeyId(encoded!)).toBe('k1');
    expect(bytesOf(encoded!)).not.toContain(canary);
    const [decoded] = await codec.decode([encoded!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ question: canary });
  });

  it('gives equal payloads equal ciphertext, and different payloads different IVs', async () => {
    const [a, b, c] = await codec.encode([payload({ n: 1 }), payload({ n: 1 }), payload({ n: 2 })]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(true);
    expect(Buffer.from(a!.data!.subarray(0, 12)).equals(Buffer.from(c!.data!.subarray(0, 12)))).toBe(false);
  });

  it('keeps a transcript segment recognisable to storage', async () => {
    const segment = payload({ transcriptSegment: [{ role: 'user', content: canary }] });
    expect(isTranscriptSegment(segment)).toBe(true);
    const [encoded, other] = await codec.encode([segment, payload({ transcript: 1 })]);
    expect(isTranscriptSegment(encoded!)).toBe(true);
    expect(isTranscriptSegment(other!)).toBe(false);
  });

  it('decrypts under any key of the ring after rotation', async () => {
    const [underK1] = await codec.encode([payload('old')]);
    const rotated = new EncryptionCodec({ keyring: ring('k2', { k1, k2 }) });
    const [underK2] = await rotated.encode([payload('new')]);
    expect(payloadKeyId(underK2!)).toBe('k2');
    const decoded = await rotated.decode([underK1!, underK2!]);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual(['old', 'new']);
  });

  it('names a key the ring lacks, and tells its listener', async () => {
    const [underK1] = await codec.encode([payload('x')]);
    const missing: string[] = [];
    const other = new EncryptionCodec({ keyring: ring('k2', { k2 }), onMissingKey: (id) => missing.push(id) });
    await expect(other.decode([underK1!])).rejects.toThrow(EncryptionKeyMissingError);
    await expect(other.decode([underK1!])).rejects.toThrow(/^a payload is encrypted under key k1, which the keyring \/k\/ring\.json lacks: add k1/);
    expect(missing).toEqual(['k1', 'k1']);
  });

  it('refuses a payload under another key of the same id, or altered', async () => {
    const [underK1] = await codec.encode([payload('x')]);
    const impostor = new EncryptionCodec({ keyring: ring('k1', { k1: k2 }) });
    await expect(impostor.decode([underK1!])).rejects.toThrow(PayloadDecryptionError);
    const altered = { ...underK1!, data: Buffer.from(underK1!.data!).fill(0, 20, 21) };
    await expect(codec.decode([altered])).rejects.toThrow(/does not decrypt/);
  });

  it('passes plaintext payloads through decoding (histories from before encryption)', async () => {
    const plain = payload({ before: true });
    const [decoded] = await codec.decode([plain]);
    expect(decoded).toBe(plain);
  });

  it('compresses before encrypting when asked and when it is smaller', async () => {
    const compressing = new EncryptionCodec({ keyring: ring('k1', { k1 }), compress: true });
    const long = payload({ text: 'the same words again '.repeat(500) });
    const [plain] = await codec.encode([long]);
    const [small] = await compressing.encode([long]);
    expect(small!.data!.length).toBeLessThan(plain!.data!.length / 10);
    expect(defaultPayloadConverter.fromPayload((await codec.decode([small!]))[0]!)).toEqual({ text: 'the same words again '.repeat(500) });
    const [tiny] = await compressing.encode([payload(1)]);
    expect(tiny!.metadata!['encryption-compression']).toBeUndefined();
  });
});
