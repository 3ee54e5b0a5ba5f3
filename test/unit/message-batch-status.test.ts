/** Where a batch's turns wait for Message Batches: narrowed from each collector's status, and as lines. */
import type { Client } from '@temporalio/client';
import type { CollectorStatus } from '../../src/core/message-batches';
import { ZERO_COLLECTOR_TOTALS } from '../../src/core/message-batches';
import {
  messageBatchEtaSeconds,
  messageBatchLine,
  messageBatchWaits,
  waitsOf,
  type MessageBatchWait,
} from '../../src/client/message-batch-status';

const now = 1_700_000_000_000;
const parents = ['batch-q-s1-of-2', 'batch-q-s2-of-2'];

function status(model: string, over: Partial<CollectorStatus> = {}): CollectorStatus {
  return {
    model,
    taskQueue: 'tq',
    pending: { requests: 0, byParent: {} },
    batches: [],
    totals: ZERO_COLLECTOR_TOTALS,
    ...over,
  };
}

const sonnet = status('sonnet', {
  pending: {
    requests: 52,
    byParent: { 'batch-q-s1-of-2': 30, 'batch-q-s2-of-2': 7, 'batch-other': 15 },
    since: now - 8_000,
  },
  batches: [
    {
      id: 'msgbatch_02',
      requests: 90,
      submittedAt: now - 60_000,
      byParent: { 'batch-other': 90 },
      withdrawn: 0,
    },
    {
      id: 'msgbatch_01AbC',
      requests: 2031,
      submittedAt: now - 12 * 60_000,
      byParent: { 'batch-q-s1-of-2': 400, 'batch-q-s2-of-2': 12, 'batch-other': 1619 },
      withdrawn: 0,
      counts: { processing: 2000, succeeded: 30, errored: 1, canceled: 0, expired: 0 },
    },
  ],
});

it("keeps the Message Batches holding the parents' requests, oldest first, then those gathering", () => {
  expect(waitsOf(sonnet, parents)).toEqual([
    {
      batchId: 'msgbatch_01AbC',
      model: 'sonnet',
      turns: 412,
      requests: 2031,
      submittedAt: now - 12 * 60_000,
      counts: { processing: 2000, succeeded: 30, errored: 1, canceled: 0, expired: 0 },
    },
    { batchId: undefined, model: 'sonnet', turns: 37, requests: 52, submittedAt: now - 8_000 },
  ]);
  expect(waitsOf(sonnet, ['batch-none'])).toEqual([]);
});

it('asks every collector and leaves out one that cannot be asked, never throwing', async () => {
  const statuses: Record<string, CollectorStatus> = {
    'c-sonnet': sonnet,
    'c-haiku': status('haiku', { pending: { requests: 1, byParent: { 'batch-q-s2-of-2': 1 } } }),
  };
  const asked: string[] = [];
  const client = {
    workflow: {
      getHandle: (id: string) => ({
        query: async () => {
          asked.push(id);
          const s = statuses[id];
          if (!s) throw new Error(`workflow ${id} not found`);
          return s;
        },
      }),
    },
  } as unknown as Client;
  const waits = await messageBatchWaits(client, ['c-sonnet', 'c-gone', 'c-haiku'], parents);
  expect(asked.sort()).toEqual(['c-gone', 'c-haiku', 'c-sonnet']);
  expect(waits.map((w) => [w.model, w.batchId, w.turns])).toEqual([
    ['sonnet', 'msgbatch_01AbC', 412],
    ['sonnet', undefined, 37],
    ['haiku', undefined, 1],
  ]);
  await expect(messageBatchWaits(client, [], parents)).resolves.toEqual([]);
});

describe('messageBatchLine', () => {
  const batch: MessageBatchWait = {
    batchId: 'msgbatch_01AbC',
    model: 'sonnet',
    turns: 412,
    requests: 2031,
    submittedAt: now - 12 * 60_000 - 30_000,
  };

  it('counts the turns of a Message Batch and all its requests, with thousands separators and its id in full', () => {
    expect(messageBatchLine(batch, now)).toBe(
      '412 turns waiting for Claude batch msgbatch_01AbC (2,031 requests, submitted 12 min ago)',
    );
    expect(messageBatchLine({ ...batch, turns: 12_345, requests: 100_000 }, now)).toBe(
      '12,345 turns waiting for Claude batch msgbatch_01AbC (100,000 requests, submitted 12 min ago)',
    );
    expect(messageBatchLine({ ...batch, turns: 1, requests: 1, submittedAt: now - 42_400 }, now)).toBe(
      '1 turn waiting for Claude batch msgbatch_01AbC (1 request, submitted 42 s ago)',
    );
    expect(messageBatchLine({ ...batch, submittedAt: now - (3 * 3600 + 5 * 60) * 1000 }, now)).toBe(
      '412 turns waiting for Claude batch msgbatch_01AbC (2,031 requests, submitted 3 h 5 min ago)',
    );
  });

  it('says how many requests gather for the next Message Batch and how long the oldest waits', () => {
    const gathering: MessageBatchWait = {
      batchId: undefined,
      model: 'sonnet',
      turns: 37,
      requests: 52,
      submittedAt: now - 8_000,
    };
    expect(messageBatchLine(gathering, now)).toBe(
      '37 requests gathering for the next Claude batch (oldest 8 s)',
    );
    expect(messageBatchLine({ ...gathering, turns: 1_204, submittedAt: undefined }, now)).toBe(
      '1,204 requests gathering for the next Claude batch',
    );
    expect(messageBatchLine({ ...gathering, turns: 1 }, now)).toBe(
      '1 request gathering for the next Claude batch (oldest 8 s)',
    );
  });
});

describe('the ETA of a batch through Message Batches', () => {
  const counts = (processing: number, succeeded: number, errored = 0) => ({ processing, succeeded, errored, canceled: 0, expired: 0 });
  const submitted = (id: string, minutesAgo: number, c?: ReturnType<typeof counts>): MessageBatchWait => ({
    batchId: id,
    model: 'sonnet',
    turns: 10,
    requests: 100,
    submittedAt: now - minutesAgo * 60_000,
    ...(c ? { counts: c } : {}),
  });

  it('is the time the Message Batches need for their requests still processing, at the pace they answered the others', () => {
    // 75 of 100 answered in 6 min: the 25 left take 2 min.
    expect(messageBatchEtaSeconds([submitted('a', 6, counts(25, 70, 5))], now)).toBe(120);
    // The batch waits for the slowest: 10 of 100 in 1 min, 90 left: 9 min.
    expect(messageBatchEtaSeconds([submitted('a', 6, counts(25, 75)), submitted('b', 1, counts(90, 10))], now)).toBe(540);
    // A Message Batch that has answered every request waits for nothing.
    expect(messageBatchEtaSeconds([submitted('a', 6, counts(0, 100)), submitted('b', 1, counts(90, 10))], now)).toBe(540);
  });

  it('reads the pace from the requests no longer processing, as the API counts them while a Message Batch runs', () => {
    // The API reports succeeded, errored, canceled and expired as 0 until the whole Message Batch has ended.
    expect(messageBatchEtaSeconds([submitted('a', 6, counts(25, 0))], now)).toBe(120);
  });

  it('does not depend on how many turns have finished, only on the Message Batches', () => {
    // The same figures, asked later with more answered, give a shorter ETA; never a longer one for the same progress.
    const early = messageBatchEtaSeconds([submitted('a', 2, counts(80, 20))], now)!;
    const later = messageBatchEtaSeconds([submitted('a', 3, counts(40, 60))], now)!;
    expect(early).toBe(480);
    expect(later).toBe(120);
  });

  it('is unknown until every Message Batch waited for has answered a request, and while requests gather', () => {
    expect(messageBatchEtaSeconds([], now)).toBeUndefined();
    expect(messageBatchEtaSeconds([submitted('a', 6, counts(100, 0))], now)).toBeUndefined();
    expect(messageBatchEtaSeconds([submitted('a', 6)], now)).toBeUndefined();
    expect(messageBatchEtaSeconds([submitted('a', 6, counts(25, 75)), { batchId: undefined, model: 'sonnet', turns: 3, requests: 3, submittedAt: now - 5000 }], now)).toBeUndefined();
    expect(messageBatchEtaSeconds([submitted('a', 6, counts(0, 100))], now)).toBeUndefined();
  });
});
