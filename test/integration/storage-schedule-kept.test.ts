/**
 * A batch schedule's argument through the real Temporal client and dev server: a paused schedule
 * whose `scheduledBatch` action has an argument over the storage threshold, created with the
 * project's client storage options on a filesystem store, has the argument written to the store's
 * kept area (the schedule keeps only a reference that says so), and `describe()` decodes it back;
 * an update with a new argument keeps that one too, and a run the schedule starts gets the
 * reference, read back from the kept area. No worker runs the workflow type.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { SCHEDULED_BATCH_WORKFLOW } from '../../src/core/batch-schedule';
import { defaultPayloadConverter, StorageDriverClaim } from '@temporalio/common';
import { payloadsIn, rawHistoryEvents, storageReference } from '../support/history-payloads';
import { until } from '../support/until';
import { testDataConverter } from '../support/settings';
import { testClient, uniqueQueue } from '../support/temporal';

jest.setTimeout(60_000);

let root: string;
let dir: string;
let client: Client;
/** The environment of this test's processes: a store of its own, payloads stored from 4 KiB. */
const storageEnv = (): NodeJS.ProcessEnv => ({ ...process.env, MCP_TURNS_STORAGE: `fs:${dir}`, MCP_TURNS_STORAGE_THRESHOLD: '4KiB' });
beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'storage-schedule-kept-'));
  dir = path.join(root, 'payloads');
  client = await testClient(testDataConverter(storageEnv()));
});
afterAll(async () => {
  await client?.connection.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function filesIn(top: string): string[] {
  if (!fs.existsSync(top)) return [];
  return fs
    .readdirSync(top, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
}

/** The storage references in the schedule as the server keeps it. */
async function storedReferences(scheduleId: string) {
  const raw = await client.workflowService.describeSchedule({ namespace: client.options.namespace, scheduleId });
  return payloadsIn(raw.schedule?.action).map(storageReference).filter((r) => r !== undefined);
}

it('client.schedule.create with a scheduledBatch argument over the threshold writes it to the kept area; describe() decodes it back', async () => {
  const scheduleId = uniqueQueue('kept-schedule');
  const queries = { name: 'nightly', queries: Array.from({ length: 40 }, (_, i) => `question ${i}: ${'q'.repeat(200)}`) };
  const handle = await client.schedule.create({
    scheduleId,
    spec: { intervals: [{ every: '1 day' }] },
    action: { type: 'startWorkflow', workflowType: SCHEDULED_BATCH_WORKFLOW, workflowId: `${scheduleId}-run`, taskQueue: uniqueQueue('no-worker'), args: [queries] },
    state: { paused: true },
  });
  try {
    const [reference] = await storedReferences(scheduleId);
    expect(reference).toBeDefined();
    const key = reference!.claimData.key!;
    expect(reference!.claimData).toEqual({ key, store: `fs:${dir}`, area: 'kept' });
    expect(filesIn(`${dir}.kept`)).toEqual([key]);
    expect(filesIn(dir)).toEqual([]);

    const described = await handle.describe();
    expect(described.action.type).toBe('startWorkflow');
    expect(described.action.type === 'startWorkflow' && described.action.args).toEqual([queries]);

    const changed = { ...queries, name: 'nightly, changed' };
    await handle.update((previous) => ({ ...previous, action: { ...previous.action, type: 'startWorkflow', workflowType: SCHEDULED_BATCH_WORKFLOW, args: [changed] } }));
    const [updated] = await storedReferences(scheduleId);
    expect(updated!.claimData.area).toBe('kept');
    expect(filesIn(`${dir}.kept`)).toEqual([key, updated!.claimData.key!].sort());
    const again = await handle.describe();
    expect(again.action.type === 'startWorkflow' && again.action.args).toEqual([changed]);

    // A run started by the schedule carries the kept reference, and its input reads back from the kept area.
    await handle.trigger();
    let runId: string | undefined;
    await until(async () => {
      runId = (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId;
      return runId !== undefined;
    }, 'the triggered run');
    try {
      const [started] = await rawHistoryEvents(client, runId!);
      const [input] = payloadsIn(started?.workflowExecutionStartedEventAttributes?.input);
      expect(storageReference(input!)?.claimData).toEqual(updated!.claimData);
      // What a worker's converter reads for it (a new one: nothing in memory).
      const driver = testDataConverter(storageEnv()).externalStorage!.getDriver(storageReference(input!)!.driverName)!;
      const [read] = await driver.retrieve({}, [new StorageDriverClaim(storageReference(input!)!.claimData)]);
      expect(defaultPayloadConverter.fromPayload(read!)).toEqual(changed);
    } finally {
      await client.workflow.getHandle(runId!).terminate('test over');
    }
  } finally {
    await handle.delete();
  }
});
