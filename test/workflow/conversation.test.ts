/**
 * The rules of a conversation (workflows/conversation.ts), against the real workflows on the shared
 * dev server with scripted activities: order, history carried by segments, continue-as-new, cancel,
 * close, idle close, duplicate messages, compaction carried forward.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { conversationTurnId } from '../../src/core/conversation';
import {
  cancelCurrentTurn,
  closeConversation,
  getConversation,
  newConversationId,
  sendMessage,
  submitMessage,
} from '../../src/client/conversation-client';
import type { MessageParam } from '../../src/core/contracts';
import { rawHistoryEvents, runChain } from '../support/history-payloads';
import { reply, startScriptedTurns, text, toolUse, type ScriptedTool, type ScriptedTurns, type TurnScript } from '../support/scripted-activities';

jest.setTimeout(60_000);

const lookup: ScriptedTool = { server: 'kb', name: 'lookup', result: (a) => `fact about ${String(a.topic)}` };
let turns: ScriptedTurns;
beforeAll(async () => {
  turns = await startScriptedTurns();
});
afterAll(async () => {
  await turns?.close();
});

/** A turn that looks something up, then answers `answer`. */
const answering = (answer: string, topic = 'x'): TurnScript => ({
  tools: [lookup],
  claude: [reply([toolUse('kb__lookup', { topic })]), reply([text(answer)])],
  formatter: { text: answer },
});
/** Waits until the conversation has `n` runs (it continues as new right after it answers). */
async function waitForRuns(id: string, n: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const runs = (await runChain(turns.client, id)).length;
    if (runs >= n) return;
    if (attempt === 200) throw new Error(`conversation ${id}: ${runs} runs after 10 s, expected ${n} (it did not continue as new)`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const conv = (more: Record<string, unknown> = {}) => ({ taskQueue: turns.taskQueue, options: { format: false }, ...more });

it('two messages sent at the same instant to a new id: one conversation, both answered in order, the second with the first as history', async () => {
  const id = newConversationId();
  turns.expect(conversationTurnId(id, 0), answering('first answer', 'a'));
  turns.expect(conversationTurnId(id, 1), answering('second answer', 'b'));
  const [first, second] = await Promise.all([
    sendMessage(turns.client, id, 'first question', { conversation: conv() }),
    sendMessage(turns.client, id, 'second question', { conversation: conv() }),
  ]);
  const outcomes = [first, second].sort((a, b) => a.index - b.index);
  expect(outcomes.map((o) => [o.index, o.turnId])).toEqual([
    [0, conversationTurnId(id, 0)],
    [1, conversationTurnId(id, 1)],
  ]);
  const [q0, q1] = outcomes.map((o) => (o.result!.messages[0]!.content as string));
  const secondTurnSaw = turns.requests.find((r) => r.workflowId === conversationTurnId(id, 1))!.messages;
  // The second turn's first Claude call: the whole first turn, then its own question.
  expect(secondTurnSaw.slice(0, 4).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  expect(secondTurnSaw[0]).toEqual({ role: 'user', content: q0 });
  expect(secondTurnSaw[4]).toEqual({ role: 'user', content: q1 });
  expect(outcomes.map((o) => o.result!.response.conversation)).toEqual(['first answer', 'second answer']);
  // The client sent only each new message: the turns' own results hold only their own messages.
  expect(outcomes[1]!.result!.messages[0]).toEqual({ role: 'user', content: q1 });
  const { status, transcript } = await getConversation(turns.client, id);
  expect(status).toMatchObject({ state: 'idle', turns: 2, queued: 0 });
  expect(transcript).toHaveLength(8);
  // The update answers naming the turn; the client read the result from the turn, so the
  // conversation's history holds each turn's messages once (in the child's completion).
  const answers = (await rawHistoryEvents(turns.client, id))
    .map((e) => e.workflowExecutionUpdateCompletedEventAttributes?.outcome?.success?.payloads?.[0]?.data)
    .filter((d): d is Uint8Array => !!d)
    .map((d) => JSON.parse(Buffer.from(d).toString('utf8')) as Record<string, unknown>);
  expect(answers.sort((a, b) => Number(a.index) - Number(b.index))).toEqual([
    { index: 0, turnId: conversationTurnId(id, 0) },
    { index: 1, turnId: conversationTurnId(id, 1) },
  ]);
});

it('messages sent while a turn runs queue in order; the conversation continues as new between turns and loses nothing', async () => {
  const id = newConversationId();
  for (let i = 0; i < 5; i++) turns.expect(conversationTurnId(id, i), answering(`answer ${i}`, `t${i}`));
  const send = (i: number) => submitMessage(turns.client, id, `question ${i}`, { conversation: conv({ turnsPerRun: 2 }) });
  // Three messages at once: the second and third queue behind the first. The run has answered
  // enough turns after the third and nothing waits on it, so it continues as new there.
  const burst = [];
  for (let i = 0; i < 3; i++) burst.push(await send(i));
  const outcomes = await Promise.all(burst.map((s) => s.outcome()));
  await waitForRuns(id, 2);
  // Two more, answered by the new run.
  for (let i = 3; i < 5; i++) outcomes.push(await (await send(i)).outcome());
  expect(outcomes.map((o) => [o.index, o.result?.response.conversation])).toEqual([0, 1, 2, 3, 4].map((i) => [i, `answer ${i}`]));
  const { transcript } = await getConversation(turns.client, id);
  const questions = transcript.filter((m: MessageParam) => m.role === 'user' && typeof m.content === 'string').map((m) => m.content);
  expect(questions).toEqual([0, 1, 2, 3, 4].map((i) => `question ${i}`));
  // The fifth turn was sent the four before it.
  const fifth = turns.requests.find((r) => r.workflowId === conversationTurnId(id, 4))!;
  expect(fifth.messages.filter((m) => m.role === 'user' && typeof m.content === 'string')).toHaveLength(5);
  await closeConversation(turns.client, id);
  expect(await turns.client.workflow.getHandle(id).result()).toEqual({ turns: 5 });
});

it('a run that has answered enough turns refuses new messages until its queue is answered; the client sends them to the next run, none lost', async () => {
  const id = newConversationId();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let start!: () => void;
  const started = new Promise<void>((r) => (start = r));
  turns.expect(conversationTurnId(id, 0), { tools: [lookup], claude: [reply([text('answer 0')], { hold: started })] });
  turns.expect(conversationTurnId(id, 1), answering('answer 1'));
  turns.expect(conversationTurnId(id, 2), { tools: [lookup], claude: [reply([text('answer 2')], { hold: held })] });
  turns.expect(conversationTurnId(id, 3), answering('answer 3'));
  const send = (i: number) => submitMessage(turns.client, id, `question ${i}`, { conversation: conv({ turnsPerRun: 2 }) });
  // Three at once: the run answers two turns, then still has the third queued.
  const first = [await send(0), await send(1), await send(2)];
  start();
  for (let i = 0; i < 400 && (await getConversation(turns.client, id)).status.currentTurnId !== conversationTurnId(id, 2); i++) await new Promise((r) => setTimeout(r, 25));
  // A message sent now is refused by this run (it stays out of its queue) and sent again by the
  // client until the next run takes it.
  const fourth = await send(3);
  const fourthOutcome = fourth.outcome();
  await new Promise((r) => setTimeout(r, 500));
  expect((await getConversation(turns.client, id)).status).toMatchObject({ turns: 2, queued: 0, currentTurnId: conversationTurnId(id, 2) });
  expect((await runChain(turns.client, id)).length).toBe(1);
  release();
  const outcomes = await Promise.all([...first.map((m) => m.outcome()), fourthOutcome]);
  expect(outcomes.map((o) => [o.index, o.result?.response.conversation])).toEqual([0, 1, 2, 3].map((i) => [i, `answer ${i}`]));
  // The fourth was accepted by the second run, which was handed the whole history.
  const runs = await runChain(turns.client, id);
  expect(runs.length).toBeGreaterThanOrEqual(2);
  const acceptedIn = async (runId: string) =>
    (await rawHistoryEvents(turns.client, id, runId)).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
  expect(await acceptedIn(runs[0]!)).toBe(3);
  expect(await acceptedIn(runs[1]!)).toBe(1);
  const fourthSaw = turns.requests.find((r) => r.workflowId === conversationTurnId(id, 3))!.messages;
  expect(fourthSaw.filter((m) => m.role === 'user' && typeof m.content === 'string').map((m) => m.content)).toEqual([0, 1, 2, 3].map((i) => `question ${i}`));
  await closeConversation(turns.client, id);
});

it('a message id sent again is answered once: the same outcome in the same run, refused naming its turn after continue-as-new', async () => {
  const id = newConversationId();
  turns.expect(conversationTurnId(id, 0), answering('once'));
  turns.expect(conversationTurnId(id, 1), answering('twice'));
  const first = await sendMessage(turns.client, id, 'only once', { messageId: 'm-1', conversation: conv() });
  // Temporal itself answers an update id it has seen in this run with the first outcome.
  expect(await sendMessage(turns.client, id, 'only once', { messageId: 'm-1' })).toEqual(first);
  expect(turns.requests.filter((r) => r.workflowId === conversationTurnId(id, 0) && r.activity === 'claude')).toHaveLength(2);

  const next = newConversationId();
  turns.expect(conversationTurnId(next, 0), answering('once more'));
  await sendMessage(turns.client, next, 'only once', { messageId: 'm-2', conversation: conv({ turnsPerRun: 1 }) });
  // The conversation continued as new after that turn: the new run remembers the id.
  await waitForRuns(next, 2);
  const again = await sendMessage(turns.client, next, 'only once', { messageId: 'm-2' }).catch((e: unknown) => e);
  expect(again).toBeInstanceOf(WorkflowUpdateFailedError);
  expect((again as WorkflowUpdateFailedError).cause?.message).toBe(`message already sent, answered by turn ${conversationTurnId(next, 0)}`);
});

it('cancelling the current turn ends it cancelled; the next message is answered', async () => {
  const id = newConversationId();
  turns.expect(conversationTurnId(id, 0), { tools: [lookup], claude: [reply([text('never')], { hold: new Promise(() => undefined) })] });
  turns.expect(conversationTurnId(id, 1), answering('after the cancel'));
  const first = await submitMessage(turns.client, id, 'slow one', { conversation: conv() });
  const second = await submitMessage(turns.client, id, 'next one', { conversation: conv() });
  for (let i = 0; i < 200 && (await getConversation(turns.client, id)).status.state !== 'running'; i++) await new Promise((r) => setTimeout(r, 25));
  await new Promise((r) => setTimeout(r, 200));
  await cancelCurrentTurn(turns.client, id);
  expect(await first.outcome()).toMatchObject({ index: 0, error: 'the turn was cancelled' });
  expect((await second.outcome()).result?.response.conversation).toBe('after the cancel');
  // The cancelled turn added nothing to the history.
  expect((await getConversation(turns.client, id)).transcript[0]).toEqual({ role: 'user', content: 'next one' });
});

it('a closed conversation ends after its queue and refuses new messages; an idle one closes itself', async () => {
  const id = newConversationId();
  turns.expect(conversationTurnId(id, 0), answering('bye'));
  await sendMessage(turns.client, id, 'last words', { conversation: conv() });
  await closeConversation(turns.client, id);
  expect(await turns.client.workflow.getHandle(id).result()).toEqual({ turns: 1 });

  const idle = newConversationId();
  turns.expect(conversationTurnId(idle, 0), answering('soon idle'));
  await sendMessage(turns.client, idle, 'hello', { conversation: conv({ idleTimeoutMs: 1000 }) });
  expect(await turns.client.workflow.getHandle(idle).result()).toEqual({ turns: 1 });
});

it('per-message options win over the conversation options', async () => {
  const id = newConversationId();
  turns.expect(conversationTurnId(id, 0), answering('default model'));
  turns.expect(conversationTurnId(id, 1), answering('other model'));
  await sendMessage(turns.client, id, 'one', { conversation: conv({ options: { format: false, model: 'conv-model' } }) });
  await sendMessage(turns.client, id, 'two', { options: { model: 'message-model' } });
  const models = [0, 1].map((i) => turns.requests.find((r) => r.workflowId === conversationTurnId(id, i))!.model);
  expect(models).toEqual(['conv-model', 'message-model']);
});

it('a turn that had to compact the history hands the compacted history to the next turn', async () => {
  const id = newConversationId();
  const tooLong = { fail: { type: 'ClaudePromptTooLong', message: 'prompt is too long', nonRetryable: true } };
  turns.expect(conversationTurnId(id, 0), answering('one', 'a'));
  turns.expect(conversationTurnId(id, 1), { tools: [lookup], claude: [tooLong, reply([text('two')])] });
  turns.expect(conversationTurnId(id, 2), { tools: [lookup], claude: [reply([text('three')])] });
  await sendMessage(turns.client, id, 'q1', { conversation: conv({ options: { format: false, compaction: { keepRecentTurns: 0 } } }) });
  const second = await sendMessage(turns.client, id, 'q2');
  expect(second.result?.compaction).toEqual({ toolResultsReplaced: 1, messagesDropped: 0, stages: 1 });
  await sendMessage(turns.client, id, 'q3');
  const third = turns.requests.find((r) => r.workflowId === conversationTurnId(id, 2))!.messages;
  expect(JSON.stringify(third)).toContain('[tool result removed to fit the context window');
  expect(JSON.stringify(third)).not.toContain('fact about a');
  // The next turn starts from the history the second turn compacted to, then the second turn.
  const secondAnswered = turns.requests.filter((r) => r.workflowId === conversationTurnId(id, 1)).at(-1)!.messages;
  expect(third).toEqual([...secondAnswered, ...second.result!.messages.slice(1), { role: 'user', content: 'q3' }]);
});
