import type { Client } from '@temporalio/client';
import { SignalGroups } from '../../src/message-batches/signal-groups';

const client = {} as Client;

function groups(opts: { lingerMs?: number; maxItems?: number; maxBytes?: number; fail?: (target: string) => boolean } = {}) {
  const sent: Array<{ target: string; items: number[] }> = [];
  const g = new SignalGroups<string, number>({
    lingerMs: opts.lingerMs ?? 20,
    maxItems: opts.maxItems ?? 100,
    maxBytes: opts.maxBytes ?? Infinity,
    workflowIdOf: (target) => target,
    deliver: async (_client, target, items) => {
      if (opts.fail?.(target)) throw new Error(`signal to ${target} refused`);
      sent.push({ target, items });
    },
  });
  return { g, sent };
}

describe('SignalGroups', () => {
  it('sends the items for one workflow made within the linger as one signal, and each workflow its own', async () => {
    const { g, sent } = groups();
    await Promise.all([g.send(client, 'a', 1), g.send(client, 'b', 2), g.send(client, 'a', 3)]);
    expect(sent).toEqual([
      { target: 'a', items: [1, 3] },
      { target: 'b', items: [2] },
    ]);
    await g.send(client, 'a', 4);
    expect(sent[2]).toEqual({ target: 'a', items: [4] });
  });

  it('sends at once when a signal holds its most items or would pass its bytes', async () => {
    // A linger longer than the test may take: only a full signal is sent.
    const { g, sent } = groups({ lingerMs: 60_000, maxItems: 2 });
    await Promise.all([g.send(client, 'a', 1), g.send(client, 'a', 2)]);
    expect(sent).toEqual([{ target: 'a', items: [1, 2] }]);
    // 3 and 4 would pass 10 bytes: 3 goes alone; 4 and 5 fill a signal.
    const bytes = groups({ lingerMs: 60_000, maxItems: 2, maxBytes: 10 });
    await Promise.all([bytes.g.send(client, 'a', 3, 6), bytes.g.send(client, 'a', 4, 6), bytes.g.send(client, 'a', 5, 4)]);
    expect(bytes.sent).toEqual([
      { target: 'a', items: [3] },
      { target: 'a', items: [4, 5] },
    ]);
  });

  it('fails every send of a refused signal, and only those', async () => {
    const { g, sent } = groups({ fail: (target) => target === 'gone' });
    const results = await Promise.allSettled([g.send(client, 'gone', 1), g.send(client, 'gone', 2), g.send(client, 'here', 3)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect((results[0] as PromiseRejectedResult).reason.message).toBe('signal to gone refused');
    expect(sent).toEqual([{ target: 'here', items: [3] }]);
  });
});
