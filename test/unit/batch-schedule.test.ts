/** The pure rules of batch schedules: run batch names, schedule names, and the one shard plan of a batch. */
import { batchScheduleId, batchScheduleNameOf, batchScheduleNameProblem, compactUtc, MAX_BATCH_SCHEDULE_NAME_LENGTH, scheduledBatchName } from '../../src/core/batch-schedule';
import { batchShardWorkflowIds, planBatchShards } from '../../src/core/batch-shards';

it("names a run's batch after its schedule and its UTC scheduled time, to the second", () => {
  expect(compactUtc(new Date('2026-11-27T02:00:00.000Z'))).toBe('20261127T020000Z');
  expect(scheduledBatchName('nightly', new Date('2026-11-27T02:00:07.861Z'))).toBe('nightly-20261127T020007Z');
  const longest = 'n'.repeat(MAX_BATCH_SCHEDULE_NAME_LENGTH);
  expect(scheduledBatchName(longest, new Date())).toMatch(/^[A-Za-z0-9._-]{100}$/);
});

it("takes a schedule name only when every run's batch name fits", () => {
  expect(batchScheduleNameProblem('nightly.v2_a-b')).toBeUndefined();
  expect(batchScheduleNameProblem('n'.repeat(MAX_BATCH_SCHEDULE_NAME_LENGTH))).toBeUndefined();
  expect(batchScheduleNameProblem('n'.repeat(MAX_BATCH_SCHEDULE_NAME_LENGTH + 1))).toMatch(/^must be at most 83 characters/);
  expect(batchScheduleNameProblem('a b')).toBe('must be characters of A-Z a-z 0-9 . _ -, got "a b"');
  expect(batchScheduleNameProblem('')).toMatch(/^must be characters/);
  expect(batchScheduleNameOf(batchScheduleId('nightly'))).toBe('nightly');
  expect(batchScheduleNameOf('other-schedule')).toBeUndefined();
});

it('plans the shards of a batch: ids, slices in order, the window shared, inputs from their start', () => {
  const items = Array.from({ length: 30 }, (_, i) => ({ id: `w${i}`, input: { question: `q${i}` } }));
  const shards = planBatchShards({ name: 'b', items, concurrency: 60, taskQueue: 'tq', messageBatches: { deadlineMs: 5000 } });
  expect(shards.map((s) => s.workflowId)).toEqual(batchShardWorkflowIds('b', 60, 30));
  expect(shards.map((s) => s.workflowId)).toEqual(['batch-b-s1-of-3', 'batch-b-s2-of-3', 'batch-b-s3-of-3']);
  expect(shards.flatMap((s) => s.items)).toEqual(items);
  expect(shards[1]!.input).toEqual({
    name: 'b',
    concurrency: 20,
    taskQueue: 'tq',
    total: 10,
    items: items.slice(10, 20),
    itemsOffset: 0,
    nextIndex: 0,
    completed: 0,
    failed: 0,
    skipped: 0,
    messageBatches: { deadlineMs: 5000 },
  });
  expect(shards[0]!.staticSummary).toBe('batch b (shard 1 of 3): 10 queries, concurrency 20, through Message Batches');
  const one = planBatchShards({ name: 'small', items: items.slice(0, 3), concurrency: 10, taskQueue: 'tq' });
  expect(one).toHaveLength(1);
  expect(one[0]).toMatchObject({ workflowId: 'batch-small', staticSummary: 'batch small: 3 queries, concurrency 10' });
  expect(one[0]!.input.messageBatches).toBeUndefined();
});
