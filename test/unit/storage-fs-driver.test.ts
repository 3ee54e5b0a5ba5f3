import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, StorageDriverClaim, type Payload } from '@temporalio/common';
import { FsStorageDriver } from '../../src/storage/fs-storage-driver';
import { contentKey, encodeStoredPayload } from '../../src/storage/stored-payload';

const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const ctx = {};

let dir: string;
let driver: FsStorageDriver;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storage-fs-'));
  driver = new FsStorageDriver(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function filesIn(root: string): string[] {
  return fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('FsStorageDriver', () => {
  it('stores a payload as one file named by its content and gives it back unchanged', async () => {
    const payload = toPayload({ big: 'x'.repeat(300_000) });
    const [claim] = await driver.store(ctx, [payload]);
    const key = contentKey(encodeStoredPayload(payload));
    expect(claim!.claimData).toEqual({ key, store: `fs:${dir}` });
    expect(filesIn(dir)).toEqual([path.join(dir, key.slice(0, 2), key)]);
    const [back] = await driver.retrieve(ctx, [claim!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual({ big: 'x'.repeat(300_000) });
  });

  it('stores the same payload once, however often and by however many drivers it is sent', async () => {
    const payload = toPayload({ segment: 'same' });
    const first = await driver.store(ctx, [payload, payload]);
    const again = await new FsStorageDriver(dir).store(ctx, [toPayload({ segment: 'same' })]);
    expect(new Set([...first, ...again].map((c) => c.claimData.key)).size).toBe(1);
    expect(filesIn(dir)).toHaveLength(1);
    expect(driver.counts).toEqual({ written: 1, reused: 0 });
  });

  it('writes into a directory removed since it made it (the store wiped by hand)', async () => {
    const [first] = await driver.store(ctx, [toPayload('first')]);
    fs.rmSync(dir, { recursive: true, force: true });
    // Another payload in the same subdirectory: the driver made that directory before.
    let other = 0;
    while (contentKey(encodeStoredPayload(toPayload(`other ${other}`))).slice(0, 2) !== first!.claimData.key!.slice(0, 2)) other++;
    const [claim] = await driver.store(ctx, [toPayload(`other ${other}`)]);
    const [back] = await driver.retrieve(ctx, [claim!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toBe(`other ${other}`);
    expect(filesIn(dir)).toEqual([driver.objectPath(claim!.claimData.key!)]);
  });

  it('keys by the whole payload: metadata order does not matter, metadata content does', () => {
    const data = new TextEncoder().encode('"v"');
    const a = { metadata: { encoding: new TextEncoder().encode('json/plain'), extra: new Uint8Array([1]) }, data };
    const b = { metadata: { extra: new Uint8Array([1]), encoding: new TextEncoder().encode('json/plain') }, data };
    const c = { metadata: { encoding: new TextEncoder().encode('binary/plain'), extra: new Uint8Array([1]) }, data };
    expect(contentKey(encodeStoredPayload(a))).toBe(contentKey(encodeStoredPayload(b)));
    expect(contentKey(encodeStoredPayload(a))).not.toBe(contentKey(encodeStoredPayload(c)));
  });

  it('restarts the age of a payload sent again, so cleanup by age counts from its last use', async () => {
    const touching = new FsStorageDriver(dir, 0);
    const payload = toPayload('reused');
    const [claim] = await touching.store(ctx, [payload]);
    const file = touching.objectPath(claim!.claimData.key!);
    const old = new Date('2020-01-01T00:00:00Z');
    fs.utimesSync(file, old, old);
    await touching.store(ctx, [payload]);
    expect(fs.statSync(file).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect(touching.counts).toEqual({ written: 1, reused: 1 });
  });

  it('makes no round trip to the directory for a payload it stored or read lately: not touched again within touchAfterMs, read from memory', async () => {
    const payload = toPayload('hot path');
    const [claim] = await driver.store(ctx, [payload]);
    const file = driver.objectPath(claim!.claimData.key!);
    const old = new Date('2020-01-01T00:00:00Z');
    fs.utimesSync(file, old, old);
    await driver.store(ctx, [payload]);
    expect(fs.statSync(file).mtimeMs).toBe(old.getTime()); // within the hour: not touched again
    fs.rmSync(file);
    const [back] = await driver.retrieve(ctx, [claim!]); // stored by this driver: from memory
    expect(defaultPayloadConverter.fromPayload(back!)).toBe('hot path');
    await expect(new FsStorageDriver(dir).retrieve(ctx, [claim!])).rejects.toThrow('is not in');

    // Read by this driver (stored by another): from memory after the first read.
    const reader = new FsStorageDriver(dir);
    const [readClaim] = await new FsStorageDriver(dir).store(ctx, [toPayload('read once')]);
    await reader.retrieve(ctx, [readClaim!]);
    fs.rmSync(reader.objectPath(readClaim!.claimData.key!));
    const [again] = await reader.retrieve(ctx, [readClaim!]);
    expect(defaultPayloadConverter.fromPayload(again!)).toBe('read once');
  });

  it('says which object is missing and the likely reasons', async () => {
    const key = 'a'.repeat(64);
    await expect(driver.retrieve(ctx, [new StorageDriverClaim({ key })])).rejects.toThrow(
      `stored payload ${key} is not in fs:${dir}: it was deleted (cleanup shorter than the workflow's retention?) or this process uses another store than the one that wrote it (MCP_TURNS_STORAGE)`,
    );
  });

  it('names both stores when a payload was written to another store than the one this process reads', async () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-other-store-'));
    const [claim] = await new FsStorageDriver(other).store(ctx, [toPayload('stored elsewhere')]);
    await expect(new FsStorageDriver(dir).retrieve(ctx, [claim!])).rejects.toThrow(
      `stored payload ${claim!.claimData.key} was written to fs:${other}, and this process reads fs:${dir}: every process that starts, runs or reads these workflows (CLI, client, worker, serve) must use the same store (MCP_TURNS_STORAGE)`,
    );
  });

  it('refuses an object whose content is not what its key says', async () => {
    const [claim] = await driver.store(ctx, [toPayload('original')]);
    const key = claim!.claimData.key!;
    fs.writeFileSync(driver.objectPath(key), encodeStoredPayload(toPayload('tampered')));
    // Another process's driver (this one answers what it stored from memory).
    await expect(new FsStorageDriver(dir).retrieve(ctx, [claim!])).rejects.toThrow(`stored payload ${key} in ${dir} is corrupt`);
  });

  it('keys an object by 160 bits of its SHA-256, and reads an object keyed by all 256 (a store written before) the same way', async () => {
    const payload = toPayload('keyed');
    const [claim] = await driver.store(ctx, [payload]);
    const bytes = encodeStoredPayload(payload);
    const full = createHash('sha256').update(bytes).digest('hex');
    expect(claim!.claimData.key).toBe(full.slice(0, 40));
    fs.mkdirSync(path.dirname(driver.objectPath(full)), { recursive: true });
    fs.writeFileSync(driver.objectPath(full), bytes);
    const [read] = await driver.retrieve(ctx, [new StorageDriverClaim({ key: full })]);
    expect(defaultPayloadConverter.fromPayload(read!)).toBe('keyed');
  });

  it('refuses a claim that is not a content key (no path can be smuggled in)', async () => {
    await expect(driver.retrieve(ctx, [new StorageDriverClaim({ key: '../../etc/passwd' })])).rejects.toThrow('not a claim of the mcp-turns-fs driver');
  });
});
