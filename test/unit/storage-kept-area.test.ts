/**
 * The kept area of the filesystem store: a batch schedule's arguments (stored for a
 * `scheduledBatch` workflow that has no run yet) go to `<dir>.kept`, with a claim that says so, and
 * read back from there; everything else stays in `<dir>`; the documented clean-up (`find <dir>
 * -type f -mtime +30 -delete`, run for real) removes aged payloads of the store and leaves the kept
 * ones; a claim written before the kept area (no `area`) reads as before.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, StorageDriverClaim, type Payload, type StorageDriverStoreContext } from '@temporalio/common';
import { SCHEDULED_BATCH_WORKFLOW } from '../../src/core/batch-schedule';
import { FsStorageDriver } from '../../src/storage/fs-storage-driver';
import { isKeptTarget, keptAreaPrefix } from '../../src/storage/kept-area';
import { storedPayloadSelector } from '../../src/storage/payload-selector';
import { contentKey, encodeStoredPayload } from '../../src/storage/stored-payload';

const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const fromPayload = (payload: Payload | undefined): unknown => defaultPayloadConverter.fromPayload(payload!);

/** What the schedule client gives the driver when a schedule with a `scheduledBatch` action is created. */
const scheduleCreate: StorageDriverStoreContext = { target: { kind: 'workflow', namespace: 'default', id: 'nightly-batch', type: SCHEDULED_BATCH_WORKFLOW } };
/** What a worker gives it for a payload a run of that workflow produces. */
const scheduledRun: StorageDriverStoreContext = { target: { ...scheduleCreate.target!, runId: 'run-1' } };
const turn: StorageDriverStoreContext = { target: { kind: 'workflow', namespace: 'default', id: 'turn-1', type: 'chatTurn' } };

let root: string;
let dir: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'storage-kept-'));
  dir = path.join(root, 'payloads');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function filesIn(top: string): string[] {
  if (!fs.existsSync(top)) return [];
  return fs
    .readdirSync(top, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

describe('which payloads are kept', () => {
  it('a scheduledBatch workflow before it runs (the schedule\'s action); not what its runs produce, nor any other workflow or activity', () => {
    expect(isKeptTarget(scheduleCreate.target)).toBe(true);
    expect(isKeptTarget(scheduledRun.target)).toBe(false);
    expect(isKeptTarget(turn.target)).toBe(false);
    expect(isKeptTarget({ kind: 'activity', namespace: 'default', type: SCHEDULED_BATCH_WORKFLOW })).toBe(false);
    expect(isKeptTarget(undefined)).toBe(false);
  });

  it('the selector hands a scheduledBatch argument over the threshold to the driver with its target, and keeps a smaller one inline', () => {
    const driver = new FsStorageDriver(dir);
    const select = storedPayloadSelector(driver, { thresholdBytes: 4096, segmentThresholdBytes: 256, carriedThresholdBytes: 1024 });
    expect(select(scheduleCreate, toPayload({ items: 'q'.repeat(5000) }))).toBe(driver);
    expect(select(scheduleCreate, toPayload({ items: 'q'.repeat(2000) }))).toBeNull();
  });

  it('S3: the kept prefix is beside the store\'s, outside it', () => {
    expect(keptAreaPrefix('prod/')).toBe('prod.kept/');
    expect(keptAreaPrefix('teams/a/')).toBe('teams/a.kept/');
    expect(keptAreaPrefix('')).toBe('kept/');
  });
});

describe('FsStorageDriver kept area', () => {
  it('writes a schedule\'s argument to <dir>.kept with a claim that says so, and reads it back from there', async () => {
    const driver = new FsStorageDriver(dir);
    const value = { queries: ['q'.repeat(10_000)] };
    const payload = toPayload(value);
    const [claim] = await driver.store(scheduleCreate, [payload]);
    const key = contentKey(encodeStoredPayload(payload));
    expect(claim!.claimData).toEqual({ key, store: `fs:${dir}`, area: 'kept' });
    expect(driver.keptDir).toBe(`${dir}.kept`);
    expect(filesIn(`${dir}.kept`)).toEqual([path.join(`${dir}.kept`, key.slice(0, 2), key)]);
    expect(filesIn(dir)).toEqual([]);
    // Another process (nothing in memory) reads it from the kept area.
    expect(fromPayload((await new FsStorageDriver(dir).retrieve({}, [claim!]))[0])).toEqual(value);
  });

  it('keeps everything else in <dir>: a normal claim has no area', async () => {
    const driver = new FsStorageDriver(dir);
    const [forTurn, forRun] = [...(await driver.store(turn, [toPayload('a turn\'s payload')])), ...(await driver.store(scheduledRun, [toPayload('a run\'s payload')]))];
    for (const claim of [forTurn!, forRun!]) {
      expect(claim.claimData).toEqual({ key: claim.claimData.key, store: `fs:${dir}` });
      expect(fs.existsSync(driver.objectPath(claim.claimData.key!))).toBe(true);
    }
    expect(filesIn(`${dir}.kept`)).toEqual([]);
  });

  it('stores the same content both ways in both areas, under one content key; each claim reads from its own area', async () => {
    const driver = new FsStorageDriver(dir);
    const payload = toPayload({ shared: 'content' });
    const [normal] = await driver.store(turn, [payload]);
    const [kept] = await driver.store(scheduleCreate, [payload, payload]);
    const [again] = await driver.store(scheduleCreate, [payload]);
    expect(kept!.claimData.key).toBe(normal!.claimData.key);
    expect(again!.claimData).toEqual(kept!.claimData);
    const key = normal!.claimData.key!;
    expect(filesIn(root)).toEqual([path.join(dir, key.slice(0, 2), key), path.join(`${dir}.kept`, key.slice(0, 2), key)].sort());
    expect(driver.counts).toEqual({ written: 2, reused: 1 });

    fs.rmSync(driver.objectPath(key));
    expect(fromPayload((await new FsStorageDriver(dir).retrieve({}, [kept!]))[0])).toEqual({ shared: 'content' });
    await expect(new FsStorageDriver(dir).retrieve({}, [normal!])).rejects.toThrow(`stored payload ${key} is not in fs:${dir}: it was deleted`);
  });

  it('the documented clean-up (find <dir> -type f -mtime +30 -delete) removes aged payloads of the store and leaves the kept ones', async () => {
    const driver = new FsStorageDriver(dir);
    const normal = await driver.store(turn, [toPayload('turn payload 1'), toPayload('turn payload 2')]);
    const kept = await driver.store(scheduleCreate, [toPayload({ queries: ['nightly'] })]);
    const old = new Date(Date.now() - 60 * 24 * 60 * 60 * 1000);
    const all = filesIn(root);
    expect(all).toHaveLength(3);
    for (const file of all) fs.utimesSync(file, old, old);

    execFileSync('find', [dir, '-type', 'f', '-mtime', '+30', '-delete']);

    expect(filesIn(dir)).toEqual([]);
    expect(filesIn(`${dir}.kept`)).toHaveLength(1);
    const reader = new FsStorageDriver(dir);
    expect(fromPayload((await reader.retrieve({}, kept))[0])).toEqual({ queries: ['nightly'] });
    await expect(reader.retrieve({}, [normal[0]!])).rejects.toThrow('is not in');
  });

  it('reads a claim written before the kept area (no area) from <dir>, as before', async () => {
    const payload = toPayload('written by an earlier version');
    const bytes = encodeStoredPayload(payload);
    const key = contentKey(bytes);
    fs.mkdirSync(path.join(dir, key.slice(0, 2)), { recursive: true });
    fs.writeFileSync(path.join(dir, key.slice(0, 2), key), bytes);
    const [back] = await new FsStorageDriver(dir).retrieve({}, [new StorageDriverClaim({ key, store: `fs:${dir}` })]);
    expect(fromPayload(back)).toBe('written by an earlier version');
  });

  it('says a kept payload is missing from the kept area, in one line', async () => {
    const key = 'b'.repeat(40);
    await expect(new FsStorageDriver(dir).retrieve({}, [new StorageDriverClaim({ key, store: `fs:${dir}`, area: 'kept' })])).rejects.toThrow(
      `stored payload ${key} is not in fs:${dir}.kept: it was deleted by hand (the age-based cleanup never sees the kept area) or this process uses another store than the one that wrote it (MCP_TURNS_STORAGE)`,
    );
  });

  it('checks a kept object against its key, and refuses a claim of an unknown area', async () => {
    const driver = new FsStorageDriver(dir);
    const [claim] = await driver.store(scheduleCreate, [toPayload('original')]);
    const key = claim!.claimData.key!;
    fs.writeFileSync(driver.keptPath(key), encodeStoredPayload(toPayload('tampered')));
    await expect(new FsStorageDriver(dir).retrieve({}, [claim!])).rejects.toThrow(`stored payload ${key} in ${dir}.kept is corrupt`);
    await expect(new FsStorageDriver(dir).retrieve({}, [new StorageDriverClaim({ key, area: 'attic' })])).rejects.toThrow('not a claim of the mcp-turns-fs driver (unknown area "attic")');
  });
});
