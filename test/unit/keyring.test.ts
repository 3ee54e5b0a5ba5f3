/** The keyring file: what it must hold, each problem named by its field, and the two-phase rotation. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { addNewKey, followKeyring, KeyringError, loadKeyring, parseKeyring, useKey } from '../../src/encryption/keyring';

const KEY = Buffer.alloc(32, 7).toString('base64');

function problem(content: unknown): string {
  try {
    parseKeyring(typeof content === 'string' ? content : JSON.stringify(content), '/k/ring.json');
  } catch (err) {
    expect(err).toBeInstanceOf(KeyringError);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('keyring', () => {
  it('reads a ring with its current key', () => {
    const ring = parseKeyring(JSON.stringify({ current: 'k2', keys: [{ id: 'k1', key: KEY }, { id: 'k2', key: KEY }] }), '/k/ring.json');
    expect(ring.current).toBe('k2');
    expect([...ring.keys.keys()]).toEqual(['k1', 'k2']);
    expect(ring.keys.get('k1')).toHaveLength(32);
  });

  it('names the field of each problem', () => {
    expect(problem('{')).toMatch(/^keyring \/k\/ring\.json is not JSON: /);
    expect(problem({ keys: [{ id: 'k1', key: KEY }] })).toBe('keyring /k/ring.json: current expected string, received undefined');
    expect(problem({ current: 'k1', keys: [] })).toBe('keyring /k/ring.json: keys must hold at least one key');
    expect(problem({ current: 'k1', keys: [{ id: 'k1', key: 'c2hvcnQ=' }] })).toBe(
      'keyring /k/ring.json: keys[0] (k1).key must be the base64 of 32 random bytes (mcp-turns keys new makes one)',
    );
    expect(problem({ current: 'k2', keys: [{ id: 'k1', key: KEY }] })).toBe('keyring /k/ring.json: current names k2, which is not in keys (k1)');
    expect(problem({ current: 'k1', keys: [{ id: 'k1', key: KEY }, { id: 'k1', key: KEY }] })).toBe('keyring /k/ring.json: keys holds the id k1 twice');
    expect(problem({ current: 'k1', keys: [{ id: 'k 1', key: KEY }] })).toMatch(/keys\[0\] \(k 1\)\.id must be 1 to 64 letters/);
    expect(problem({ current: 'k1', keys: [{ id: 'k1', key: KEY }], extra: 1 })).toMatch(/^keyring \/k\/ring\.json: the file Unrecognized key: "extra"/);
  });

  it('says how to make a missing ring', () => {
    expect(() => loadKeyring('/nonexistent/ring.json')).toThrow(
      'keyring /nonexistent/ring.json does not exist (mcp-turns keys new --keyring FILE makes one)',
    );
  });

  it('rotates in two phases: a new key joins the ring, then becomes current; the file stays 0600', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'keyring-')), 'ring.json');
    expect(addNewKey(file)).toEqual({ id: 'k1', current: true });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(addNewKey(file)).toEqual({ id: 'k2', current: false });
    expect(loadKeyring(file).current).toBe('k1');
    expect(useKey(file, 'k2')).toEqual({ previous: 'k1' });
    const ring = loadKeyring(file);
    expect(ring.current).toBe('k2');
    expect(ring.keys.size).toBe(2);
    expect(ring.keys.get('k1')!.equals(ring.keys.get('k2')!)).toBe(false);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(() => useKey(file, 'k9')).toThrow(`keyring ${file} holds no key k9 (it holds k1, k2)`);
    expect(() => addNewKey(file, 'k2')).toThrow(`keyring ${file} already holds a key k2`);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['ring.json']);
  });
});

describe('followKeyring', () => {
  it('sees a key added and made current while the process runs, and keeps the ring on a bad edit', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'keyring-')), 'ring.json');
    addNewKey(file);
    const errors: string[] = [];
    const source = followKeyring(file, { intervalMs: 0, onError: (err) => errors.push(err.message) });
    expect(source.current().current).toBe('k1');
    addNewKey(file);
    useKey(file, 'k2');
    expect(source.current().current).toBe('k2');
    expect(source.current().keys.size).toBe(2);
    fs.writeFileSync(file, '{"current": "k3", "keys": []}');
    expect(source.current().current).toBe('k2');
    expect(errors).toEqual([`keyring ${file}: keys must hold at least one key`]);
  });
});
