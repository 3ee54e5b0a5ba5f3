/**
 * The S3-compatible driver against a real S3 server (Versity's gateway, built from its Go module by
 * the test harness on first use): store, retrieve, one object per distinct payload, the age restarted
 * on reuse, a clear line for a missing object; then a whole turn with large payloads configured only
 * through MCP_TURNS_STORAGE and the AWS credential variables, whose objects are in the bucket; and
 * the same with encryption on, where no object of the bucket holds the question or the tool's result.
 * The kept area (a batch schedule's arguments) is beside the prefix, outside it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { addNewKey } from '../../src/encryption/keyring';
import { defaultPayloadConverter, StorageDriverClaim } from '@temporalio/common';
import type { Scenario } from '../../src/stub';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { SCHEDULED_BATCH_WORKFLOW } from '../../src/core/batch-schedule';
import { S3StorageDriver } from '../../src/storage/s3-storage-driver';
import { contentKey, encodeStoredPayload } from '../../src/storage/stored-payload';
import { DEFAULT_STORAGE_THRESHOLD } from '../../src/storage/storage-config';
import { startS3Server, type S3Server } from '../support/s3-server';
import { startTurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';
import { encodedSize, payloadsIn, rawHistoryEvents, storageReference } from '../support/history-payloads';

// The first run on a machine builds the server (minutes); later runs start it in well under a second.
jest.setTimeout(120_000);

let s3: S3Server;
beforeAll(async () => {
  s3 = await startS3Server((line) => console.log(`[s3-server] ${line}`));
  await s3.createBucket('payloads');
  await s3.createBucket('turns');
}, 20 * 60_000);
afterAll(async () => {
  await s3?.stop();
});

const ctx = {};
const toPayload = (value: unknown) => defaultPayloadConverter.toPayload(value);

function driver(prefix: string, refreshAfterMs?: number): S3StorageDriver {
  return new S3StorageDriver({
    bucket: 'payloads',
    prefix,
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: s3.credentials,
    ...(refreshAfterMs !== undefined ? { refreshAfterMs } : {}),
  });
}

async function objectKeys(bucket: string, prefix: string): Promise<string[]> {
  const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((o) => o.Key!);
}

describe('S3StorageDriver', () => {
  it('stores a payload as one object under its content key and gives it back unchanged', async () => {
    const d = driver('roundtrip/');
    const value = { document: 'x'.repeat(400_000) };
    const [claim] = await d.store(ctx, [toPayload(value)]);
    expect(claim!.claimData).toEqual({ key: claim!.claimData.key, store: 's3://payloads/roundtrip/' });
    expect(await objectKeys('payloads', 'roundtrip/')).toEqual([`roundtrip/${claim!.claimData.key}`]);
    const [back] = await driver('roundtrip/').retrieve(ctx, [claim!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual(value);
    d.close();
  });

  it('stores the same payload once: within a batch, and when another driver sends it again', async () => {
    const first = driver('dedupe/');
    const second = driver('dedupe/');
    const claims = [...(await first.store(ctx, [toPayload('same'), toPayload('same'), toPayload('other')])), ...(await second.store(ctx, [toPayload('same')]))];
    expect(await objectKeys('payloads', 'dedupe/')).toHaveLength(2);
    expect(new Set(claims.map((c) => c.claimData.key)).size).toBe(2);
    expect(first.counts).toEqual({ written: 2, reused: 0 });
    expect(second.counts).toEqual({ written: 0, reused: 1 });
    first.close();
    second.close();
  });

  it('restarts the age of an object reused after refreshAfterMs (for an expiry-by-age lifecycle rule)', async () => {
    const d = driver('refresh/', 0);
    const [claim] = await d.store(ctx, [toPayload('aging')]);
    const Key = `refresh/${claim!.claimData.key}`;
    const before = (await s3.client.send(new HeadObjectCommand({ Bucket: 'payloads', Key }))).LastModified!;
    await new Promise((r) => setTimeout(r, 1100)); // Last-Modified has one-second resolution
    await d.store(ctx, [toPayload('aging')]);
    const after = (await s3.client.send(new HeadObjectCommand({ Bucket: 'payloads', Key }))).LastModified!;
    expect(after.getTime()).toBeGreaterThan(before.getTime());
    const [back] = await d.retrieve(ctx, [claim!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toBe('aging');
    d.close();
  });

  it('says which object is missing and where it looked', async () => {
    const d = driver('missing/');
    const key = 'c'.repeat(64);
    await expect(d.retrieve(ctx, [new StorageDriverClaim({ key })])).rejects.toThrow(
      `stored payload ${key} is not in s3://payloads/missing/: it expired (lifecycle rule shorter than the workflow's retention?)`,
    );
    d.close();
  });
});

describe('the S3 kept area', () => {
  /** What the schedule client gives the driver when a schedule with a `scheduledBatch` action is created. */
  const scheduleCreate = { target: { kind: 'workflow' as const, namespace: 'default', id: 'nightly-batch', type: SCHEDULED_BATCH_WORKFLOW } };
  const turn = { target: { kind: 'workflow' as const, namespace: 'default', id: 'turn-1', type: 'chatTurn' } };

  it('writes a schedule\'s argument beside the prefix (prod/ → prod.kept/), outside what a lifecycle rule on the prefix covers, and reads it back', async () => {
    const d = driver('prod/');
    const value = { queries: ['q'.repeat(10_000)] };
    const [kept] = await d.store(scheduleCreate, [toPayload(value)]);
    const [normal] = await d.store(turn, [toPayload('a turn\'s payload')]);
    const key = kept!.claimData.key!;
    expect(kept!.claimData).toEqual({ key, store: 's3://payloads/prod/', area: 'kept' });
    expect(normal!.claimData).toEqual({ key: normal!.claimData.key, store: 's3://payloads/prod/' });
    expect(await objectKeys('payloads', 'prod.kept/')).toEqual([`prod.kept/${key}`]);
    expect(await objectKeys('payloads', 'prod/')).toEqual([`prod/${normal!.claimData.key}`]);
    const [back] = await driver('prod/').retrieve(ctx, [kept!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual(value);
    d.close();
  });

  it('keeps the same content in both areas under one key; each claim reads from its own area', async () => {
    const d = driver('both/');
    const payload = toPayload({ shared: 'content' });
    const [normal] = await d.store(turn, [payload]);
    const [kept] = await d.store(scheduleCreate, [payload]);
    await d.store(scheduleCreate, [payload]);
    const key = normal!.claimData.key!;
    expect(kept!.claimData.key).toBe(key);
    expect(d.counts).toEqual({ written: 2, reused: 1 });
    await s3.client.send(new DeleteObjectCommand({ Bucket: 'payloads', Key: `both/${key}` }));
    const [back] = await driver('both/').retrieve(ctx, [kept!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual({ shared: 'content' });
    await expect(driver('both/').retrieve(ctx, [normal!])).rejects.toThrow(`stored payload ${key} is not in s3://payloads/both/: it expired`);
    d.close();
  });

  it('takes a prefix without a slash as the folder the settings make of it (nightly → nightly/, kept under nightly.kept/); no prefix keeps under kept/', async () => {
    const slashless = driver('nightly');
    const [kept] = await slashless.store(scheduleCreate, [toPayload('slashless')]);
    const [normal] = await slashless.store(turn, [toPayload('slashless, normal')]);
    expect(await objectKeys('payloads', 'nightly.kept/')).toEqual([`nightly.kept/${kept!.claimData.key}`]);
    expect(await objectKeys('payloads', 'nightly/')).toEqual([`nightly/${normal!.claimData.key}`]);
    expect(kept!.claimData.store).toBe('s3://payloads/nightly/');
    slashless.close();

    const bare = new S3StorageDriver({ bucket: 'turns', endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: s3.credentials });
    const [top] = await bare.store(scheduleCreate, [toPayload('no prefix')]);
    expect(await objectKeys('turns', 'kept/')).toEqual([`kept/${top!.claimData.key}`]);
    const [back] = await bare.retrieve(ctx, [top!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toBe('no prefix');
    bare.close();
  });

  it('says a kept object is missing from the kept area; reads a claim written before the kept area (no area) from the prefix', async () => {
    const d = driver('old/');
    const key = 'd'.repeat(40);
    await expect(d.retrieve(ctx, [new StorageDriverClaim({ key, store: 's3://payloads/old/', area: 'kept' })])).rejects.toThrow(
      `stored payload ${key} is not in s3://payloads/old.kept/: it was deleted by hand (a lifecycle rule on the store's prefix never reaches the kept area)`,
    );
    const payload = toPayload('written by an earlier version');
    const bytes = encodeStoredPayload(payload);
    const oldKey = contentKey(bytes);
    await s3.client.send(new PutObjectCommand({ Bucket: 'payloads', Key: `old/${oldKey}`, Body: bytes }));
    const [back] = await d.retrieve(ctx, [new StorageDriverClaim({ key: oldKey, store: 's3://payloads/old/' })]);
    expect(defaultPayloadConverter.fromPayload(back!)).toBe('written by an earlier version');
    d.close();
  });
});

describe('a turn on the S3 driver', () => {
  const BIG = 's'.repeat(300_000);
  const scenarios: Record<string, Scenario> = {
    'big-echo': {
      steps: [
        { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: BIG } }] },
        { content: [{ type: 'text', text: 'Echoed it.' }] },
      ],
      formatter: { conversation: [{ type: 'text', content: 'echoed' }] },
    },
  };

  it('runs with large payloads configured from the environment; every reference is an object in the bucket', async () => {
    process.env.MCP_TURNS_STORAGE = `s3://turns/chats?endpoint=${encodeURIComponent(s3.endpoint)}&region=${s3.region}&path_style=1`;
    process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
    const h = await startTurnHarness({ scenarios, servers: { everything: everythingStdio({ max_result_bytes: 1_000_000 }) } });
    try {
      const handle = await startChatTurn(h.client, { question: 'Echo this', model: 'big-echo', servers: ['everything'] }, { taskQueue: h.taskQueue });
      const result = await handle.result();
      expect(result.toolCalls.map((c) => c.isError)).toEqual([false]);
      expect(JSON.stringify(result.messages)).toContain(`Echo: ${BIG}`);

      const payloads = payloadsIn(await rawHistoryEvents(h.client, handle.workflowId));
      expect(Math.max(...payloads.filter((p) => !storageReference(p)).map(encodedSize))).toBeLessThan(DEFAULT_STORAGE_THRESHOLD);
      const references = payloads.map(storageReference).filter((r) => r !== undefined);
      expect(references.length).toBeGreaterThanOrEqual(3);
      const inBucket = new Set(await objectKeys('turns', 'chats/'));
      for (const ref of references) {
        expect(ref.driverName).toBe('mcp-turns-s3');
        expect(inBucket.has(`chats/${ref.claimData.key}`)).toBe(true);
      }
      // Nothing secret in a claim or anywhere in history.
      const history = JSON.stringify(await rawHistoryEvents(h.client, handle.workflowId));
      expect(history).not.toContain(s3.credentials.secretAccessKey);
    } finally {
      await h.close();
    }
  });

  it('with encryption on, keeps the question and the tool result out of every object of the bucket', async () => {
    const keyring = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-s3-keyring-')), 'keyring.json');
    addNewKey(keyring);
    const canary = 'S3-CANARY-2f61c9';
    process.env.MCP_TURNS_STORAGE = `s3://turns/encrypted?endpoint=${encodeURIComponent(s3.endpoint)}&region=${s3.region}&path_style=1`;
    process.env.MCP_TURNS_KEYRING = keyring;
    process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
    const h = await startTurnHarness({
      scenarios: {
        'canary-echo': {
          steps: [
            { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: `${canary} ${BIG}` } }] },
            { content: [{ type: 'text', text: 'Echoed it.' }] },
          ],
        },
      },
      servers: { everything: everythingStdio({ max_result_bytes: 1_000_000 }) },
    });
    try {
      const handle = await startChatTurn(h.client, { question: `Echo ${canary}`, model: 'canary-echo', servers: ['everything'] }, { taskQueue: h.taskQueue });
      expect(JSON.stringify((await handle.result()).messages)).toContain(`Echo: ${canary}`);
      const keys = await objectKeys('turns', 'encrypted/');
      expect(keys.length).toBeGreaterThanOrEqual(3);
      for (const key of keys) {
        const object = await s3.client.send(new GetObjectCommand({ Bucket: 'turns', Key: key }));
        const bytes = Buffer.from(await object.Body!.transformToByteArray());
        expect(bytes.includes(Buffer.from(canary))).toBe(false);
        expect(bytes.includes(Buffer.from('ssssssssssssssss'))).toBe(false);
      }
    } finally {
      delete process.env.MCP_TURNS_KEYRING;
      await h.close();
    }
  });
});
