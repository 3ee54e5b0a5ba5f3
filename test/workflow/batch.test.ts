/**
 * The batch workflow and cancellation: one child cancelled on its own is one failed item and the
 * batch goes on; the batch cancelled ends cancelled and asks its running children to cancel too.
 * (Throughput, sharding and kill-and-resume through the CLI live in test/integration/batch*.ts.)
 */
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { batchChildId, batchWorkflowId, type BatchInput, type BatchProgress } from '../../src/core/batch';
import type { Scenario } from '../../src/stub';
import { questionOf, startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';

jest.setTimeout(120_000);


const scenarios: Record<string, Scenario> = {
  quick: {
    steps: [
      { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
      { content: [{ type: 'text', text: 'answered {{toolResults}}' }] },
    ],
    formatter: { conversation: [{ type: 'text', content: 'A: {{toolResults}}' }] },
  },
  // The first Claude call takes 20 s: long enough to cancel in the middle of it.
  slow: {
    steps: [{ content: [{ type: 'text', text: 'too late' }], latencyMs: 20_000 }],
    formatter: { conversation: [{ type: 'text', content: 'too late' }] },
  },
};

let h: TurnHarness;

beforeAll(async () => {
  h = await startTurnHarness({ scenarios, servers: { everything: everythingStdio() } });
});

afterAll(async () => {
  await h?.close();
});

function batchInput(name: string, items: Array<{ id: string; model: string }>): BatchInput {
  return {
    name,
    concurrency: items.length,
    taskQueue: h.taskQueue,
    total: items.length,
    items: items.map(({ id, model }) => ({ id, input: { question: `${name} ${id}`, model } })),
    itemsOffset: 0,
    nextIndex: 0,
    completed: 0,
    failed: 0,
    skipped: 0,
  };
}

async function waitForSlowCall(question: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (h.stub.requests.some((r) => r.scenario === 'slow' && questionOf(r) === question)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no Claude call for "${question}"`);
}

it('counts a child cancelled on its own as one failed item and finishes the rest', async () => {
  const name = `cancel-one-${Date.now().toString(36)}`;
  const handle = await h.client.workflow.start('chatBatch', {
    taskQueue: h.taskQueue,
    workflowId: batchWorkflowId(name),
    args: [batchInput(name, [{ id: 'a', model: 'quick' }, { id: 'slow', model: 'slow' }, { id: 'b', model: 'quick' }])],
  });
  await waitForSlowCall(`${name} slow`);
  await h.client.workflow.getHandle(batchChildId(name, 'slow')).cancel();
  const progress = (await handle.result()) as BatchProgress;
  expect(progress).toMatchObject({ total: 3, completed: 2, failed: 1, skipped: 0, running: [] });
  expect((await h.client.workflow.getHandle(batchChildId(name, 'slow')).describe()).status.name).toBe('CANCELLED');
});

it('cancelling the batch ends it cancelled and cancels its running children', async () => {
  const name = `cancel-all-${Date.now().toString(36)}`;
  const handle = await h.client.workflow.start('chatBatch', {
    taskQueue: h.taskQueue,
    workflowId: batchWorkflowId(name),
    args: [batchInput(name, [{ id: 's1', model: 'slow' }, { id: 's2', model: 'slow' }])],
  });
  await waitForSlowCall(`${name} s1`);
  await waitForSlowCall(`${name} s2`);
  await handle.cancel();
  const err = await handle.result().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  for (const id of ['s1', 's2']) {
    const child = h.client.workflow.getHandle(batchChildId(name, id));
    await child.result().catch(() => undefined);
    expect((await child.describe()).status.name).toBe('CANCELLED');
  }
});
