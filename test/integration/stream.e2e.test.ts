/**
 * Streaming end to end: a real dev server, real server-everything, the real SDK streaming from the
 * paced stub. A turn's stream, live and read again after the turn has closed, is the same events at
 * the same offsets; it never contradicts the result; the first text arrives long before the reply
 * ends; a subscriber's count changes nothing in the history.
 */
import { subscribeConversation, subscribeTurn } from '../../src/client/subscribe';
import { approveToolCall } from '../../src/client/approvals';
import { closeConversation, newConversationId, sendMessage } from '../../src/client/conversation-client';
import type { MessageOutcome } from '../../src/core/conversation';
import { runChain } from '../support/history-payloads';
import { startChatTurn, cancelTurn } from '../../src/client/chat-turn-client';
import type { TurnStreamEvent } from '../../src/core/stream-events';
import type { ChatTurnResult } from '../../src/core/turn-result';
import type { Scenario } from '../../src/stub';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';
import { rawHistoryEvents } from '../support/history-payloads';
import { collect, deltasOf, expectEchoThenReply, finalText } from '../support/stream-events';

jest.setTimeout(120_000);

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, name, input });
const FORTY_WORDS = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(' ');

const scenarios: Record<string, Scenario> = {
  'streamed-two-step': {
    streamDelayMs: 20,
    steps: [
      { content: [text('Let me echo that first.'), use('everything__echo', { message: 'alpha' })] },
      { content: [text(FORTY_WORDS)], streamDelayMs: 100 },
    ],
    formatter: {
      conversation: [
        { type: 'text', content: 'The echo said alpha. Here is the whole answer, written word by word.' },
      ],
    },
  },
  chat: {
    perTurn: true,
    streamDelayMs: 5,
    steps: [{ content: [text('Answer to {{question}}, streamed.')] }],
    formatter: { conversation: [{ type: 'text', content: 'Formatted answer to {{question}}.' }] },
  },
  'streamed-approval': {
    steps: [
      { content: [text('I will echo it.'), use('everything__echo', { message: 'approved?' })] },
      { content: [text('Echoed.')] },
    ],
    formatter: { conversation: [{ type: 'text', content: 'Echoed after approval.' }] },
  },
  'streamed-thinking': {
    streamDelayMs: 60,
    steps: [
      {
        content: [
          { type: 'thinking', thinking: 'The user wants a short answer. I will think in a few words first.' },
          text('Short answer.'),
        ],
      },
    ],
  },
  'streamed-slow': {
    steps: [{ content: [text(FORTY_WORDS)], streamDelayMs: 250 }],
    formatter: { conversation: [{ type: 'text', content: 'never' }] },
  },
};

let h: TurnHarness;
beforeAll(async () => {
  h = await startTurnHarness({ scenarios, servers: { everything: everythingStdio() } });
});
afterAll(async () => h?.close());

test('a streamed turn: live and replayed streams are the same, and agree with the result', async () => {
  const handle = await startChatTurn(
    h.client,
    {
      question: 'echo alpha',
      model: 'streamed-two-step',
      stream: true,
      // A tool left out and a server the worker does not have: the turn's data-tools says both.
      servers: ['everything', 'nowhere'],
      tools: { deny: ['everything__get-sum'] },
    },
    { taskQueue: h.taskQueue },
  );
  const arrivals: Array<{ e: TurnStreamEvent; at: number }> = [];
  const [live, live2] = await Promise.all([
    collect(subscribeTurn(h.client, handle.workflowId), (e, at) => arrivals.push({ e, at })),
    collect(subscribeTurn(h.client, handle.workflowId)),
  ]);
  const result: ChatTurnResult = await handle.result();

  expect(live.map((e) => e.offset)).toEqual(live.map((_, i) => i));
  expect(live2).toEqual(live);
  const replayed = await collect(subscribeTurn(h.client, handle.workflowId));
  expect(replayed).toEqual(live);
  const from = await collect(subscribeTurn(h.client, handle.workflowId, { fromOffset: 5 }));
  expect(from).toEqual(live.slice(5));

  expectEchoThenReply(live, result, 'Let me echo that first.', FORTY_WORDS);
  expect(deltasOf(live, 'step-2').length).toBeGreaterThan(10);
  // What was offered, as the turn's start recorded it: the same lists as the result's.
  const tools = live[1] as Extract<TurnStreamEvent, { type: 'data-tools' }>;
  expect(tools.offered.map((t) => t.name)).not.toContain('everything__get-sum');
  expect(tools.deferred).toEqual([]);
  expect(tools.dropped).toEqual([{ name: 'everything__get-sum', reason: 'in tools.deny' }]);
  expect(tools.unavailable).toEqual([{ server: 'nowhere', reason: 'not configured on the worker' }]);
  expect(tools.dropped).toEqual(result.droppedTools);
  expect(tools.unavailable).toEqual(result.unavailableServers);

  // The first delta of the 40-word reply reaches the subscriber well before the reply ends.
  const call = h.stub.requests.find(
    (r) => r.scenario === 'streamed-two-step' && r.step === 1 && r.kind === 'step',
  )!;
  const step2 = arrivals.filter(({ e }) => e.type === 'text-delta' && e.id === 'step-2');
  expect(step2[0]!.at - call.startedAt).toBeLessThan(600);
  expect(step2[step2.length - 1]!.at - step2[0]!.at).toBeGreaterThan(3000);
});

test('20 subscribers all get the whole stream, and the history does not depend on how many watch', async () => {
  const run = async (subscribers: number): Promise<{ events: number; bytes: number }> => {
    const handle = await startChatTurn(
      h.client,
      { question: 'echo alpha', model: 'streamed-two-step', stream: true },
      { taskQueue: h.taskQueue },
    );
    const streams = await Promise.all(
      Array.from({ length: subscribers }, () => collect(subscribeTurn(h.client, handle.workflowId))),
    );
    await handle.result();
    // Every subscriber got everything: the whole stream, as it reads after the end.
    const whole = await collect(subscribeTurn(h.client, handle.workflowId));
    for (const stream of streams) expect(stream).toEqual(whole);
    const events = await rawHistoryEvents(h.client, handle.workflowId);
    return { events: events.length, bytes: events.reduce((n, e) => n + JSON.stringify(e).length, 0) };
  };
  const one = await run(1);
  const twenty = await run(20);
  expect(twenty.events).toBe(one.events);
  expect(Math.abs(twenty.bytes - one.bytes)).toBeLessThan(0.02 * one.bytes); // ids and times differ, nothing else
});

test('a cancelled streamed turn ends its stream with a finish that says so, live and replayed alike', async () => {
  const handle = await startChatTurn(
    h.client,
    { question: 'slow', model: 'streamed-slow', stream: true },
    { taskQueue: h.taskQueue },
  );
  const events: TurnStreamEvent[] = [];
  const done = collect(subscribeTurn(h.client, handle.workflowId), (e) => {
    events.push(e);
    if (e.type === 'text-delta' && events.filter((x) => x.type === 'text-delta').length === 5)
      void cancelTurn(handle);
  });
  const live = await done;
  expect(live[live.length - 1]).toMatchObject({ type: 'finish', status: 'cancelled' });
  expect(live.filter((e) => e.type === 'text-delta').length).toBeGreaterThanOrEqual(5);
  expect(await collect(subscribeTurn(h.client, handle.workflowId))).toEqual(live);
});

test('a streamed conversation: its turns in order, one offset sequence, through a continue-as-new', async () => {
  const id = newConversationId();
  const conversation = { taskQueue: h.taskQueue, turnsPerRun: 2, options: { model: 'chat', stream: true } };
  // Subscribed before the conversation exists: it is waited for.
  const watching = collect(subscribeConversation(h.client, id));
  await new Promise((resolve) => setTimeout(resolve, 600));
  const outcomes: MessageOutcome[] = [];
  const perMessage: TurnStreamEvent[][] = [];
  for (let i = 1; i <= 3; i++) {
    const seen: TurnStreamEvent[] = [];
    outcomes.push(
      await sendMessage(h.client, id, `question ${i}`, {
        conversation,
        stream: { onEvent: (e) => seen.push(e) },
      }),
    );
    perMessage.push(seen);
  }
  await closeConversation(h.client, id);
  const all = await watching;

  expect((await runChain(h.client, id)).length).toBeGreaterThanOrEqual(2); // it continued as new
  expect(all.map((e) => e.offset)).toEqual(all.map((_, i) => i));
  const turns = [...new Set(all.map((e) => e.turnId))];
  expect(turns).toEqual(outcomes.map((o) => o.turnId));
  for (const [i, outcome] of outcomes.entries()) {
    const own = all.filter((e) => e.turnId === outcome.turnId);
    expect(own[0]).toMatchObject({ type: 'start', question: `question ${i + 1}` });
    // Each turn says what it offered, before its first step.
    expect(own.map((e) => e.type).slice(1, 3)).toEqual(['data-tools', 'start-step']);
    expect(own[own.length - 1]).toMatchObject({ type: 'finish', status: 'completed' });
    expect(finalText(own, 'answer')).toBe(outcome.result!.response.conversation);
    // sendMessage's stream is the turn's own stream: the same events, numbered from the turn's start.
    expect(perMessage[i]!.map(({ offset: _o, ...e }) => e)).toEqual(own.map(({ offset: _o, ...e }) => e));
  }
  // Read again after the close, from an offset inside the second turn.
  const later = await collect(subscribeConversation(h.client, id, { fromOffset: 10 }));
  expect(later).toEqual(all.slice(10));
});

test('an approval streams as it waits and as it is decided, between the call and its output', async () => {
  const handle = await startChatTurn(
    h.client,
    {
      question: 'echo, with approval',
      model: 'streamed-approval',
      stream: true,
      approval: { tools: ['everything__echo'] },
    },
    { taskQueue: h.taskQueue },
  );
  const live = await collect(subscribeTurn(h.client, handle.workflowId), (e) => {
    if (e.type === 'data-approval' && e.state === 'waiting') {
      void approveToolCall(h.client, handle.workflowId, e.toolCallId, {
        identity: 'alice@test',
        reason: 'looks fine',
      });
    }
  });
  await handle.result();
  const call = live.filter((e) =>
    ['tool-input-available', 'data-approval', 'tool-output-available'].includes(e.type),
  );
  expect(call).toEqual([
    expect.objectContaining({
      type: 'tool-input-available',
      toolName: 'everything__echo',
      input: { message: 'approved?' },
    }),
    expect.objectContaining({ type: 'data-approval', state: 'waiting', toolName: 'everything__echo' }),
    expect.objectContaining({
      type: 'data-approval',
      state: 'approved',
      by: 'alice@test',
      reason: 'looks fine',
    }),
    expect.objectContaining({ type: 'tool-output-available', isError: false }),
  ]);
  expect(await collect(subscribeTurn(h.client, handle.workflowId))).toEqual(live);
});

test('thinking streams as reasoning-delta when the caller asks for it', async () => {
  const handle = await startChatTurn(
    h.client,
    {
      question: 'think',
      model: 'streamed-thinking',
      stream: { reasoning: true },
      thinking: { budgetTokens: 1024 },
      format: false,
    },
    { taskQueue: h.taskQueue },
  );
  const live = await collect(subscribeTurn(h.client, handle.workflowId));
  const result = await handle.result();
  const reasoning = live.filter((e) => e.type === 'reasoning-delta');
  expect(reasoning.length).toBeGreaterThan(1);
  expect(reasoning.map((e) => (e as { delta: string }).delta).join('')).toBe(
    'The user wants a short answer. I will think in a few words first.',
  );
  expect(finalText(live, 'step-1')).toBe('Short answer.');
  expect(live.find((e) => e.type === 'data-answer')).toMatchObject({
    response: { conversation: result.response.conversation },
  });
});
