/**
 * Many users behind one `serve`: three identities (alice and bob, users; root, an admin) against
 * the real dev server, a real MCP server (server-everything: get-sum waits for approval) and the
 * stub Claude behind the real SDK. What alice starts, bob cannot read, list, stream, post into or
 * approve: every route answers him 404 with the very line an id that names nothing gets, and no
 * answer holds her question. root sees and acts on all of it, with alice named as its owner; alice
 * does too. The `ai` package's transport (`/api/chat` and its resume) is refused the same way.
 * What the client API starts without an owner is root's to see only.
 */
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { sendMessage, startConversation } from '../../src/client/conversation-client';
import { runBatch } from '../../src/client/batch-client';
import { batchChildId } from '../../src/core/batch';
import { conversationTurnId } from '../../src/core/conversation';
import { SA_OWNER } from '../../src/core/search-attributes';
import { sendMessageUpdate } from '../../src/core/workflow-handlers';
import { tokenCaller } from '../../src/serve/caller';
import { startServeApp } from '../support/serve-app';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';
import { until } from '../support/until';

jest.setTimeout(180_000);

const RUN = Date.now().toString(36);
const TOKENS = { alice: `alice-token-${RUN}-0123456789`, bob: `bob-token-${RUN}-0123456789`, root: `root-token-${RUN}-0123456789` };
type Who = keyof typeof TOKENS;
/** alice's question: no answer to bob may hold it. */
const SECRET = `alice-private-question-${RUN}`;

let h: TurnHarness;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: {
      approve: {
        perTurn: true,
        steps: [
          { content: [{ type: 'text', text: 'Adding.' }, { type: 'tool_use', name: 'everything__get-sum', input: { a: 20, b: 22 } }] },
          { content: [{ type: 'text', text: 'The sum is {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'Sum: {{toolResults}}' }] },
      },
      quick: { perTurn: true, steps: [{ content: [{ type: 'text', text: 'Quick answer.' }] }], formatter: { conversation: [{ type: 'text', content: 'Quick.' }] } },
    },
    servers: { everything: everythingStdio({ approval: { always: ['get-sum'] } }) },
  });
  const settings = resolveServeSettings(
    { tokens: [{ name: 'alice', token: TOKENS.alice }, { name: 'bob', token: TOKENS.bob }] },
    { host: '127.0.0.1', port: 0 },
    { MCP_TURNS_SERVE_TOKENS: `root:${TOKENS.root}:admin` },
  );
  ({ app, base } = await startServeApp(h, settings));
});

afterAll(async () => {
  await app?.close();
  await h?.close();
});

const auth = (who: Who) => ({ authorization: `Bearer ${TOKENS[who]}` });

async function call(who: Who, method: string, path: string, body?: unknown, accept = 'application/json'): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...auth(who), accept, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  // A stream that was opened is read only far enough to know it was (it would run to the turn's end).
  const text = res.headers.get('content-type')?.includes('text/event-stream') ? '(stream)' : await res.text();
  if (text === '(stream)') await res.body?.cancel();
  return { status: res.status, text };
}

const json = <T>(r: { text: string }): T => JSON.parse(r.text) as T;

function transport(who: Who): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport<UIMessage>({ api: `${base}/api/chat`, headers: auth(who) });
}

const userMessage = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

async function lastMessage(stream: ReadableStream<UIMessageChunk>, message?: UIMessage): Promise<UIMessage> {
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream<UIMessage>({ stream, ...(message ? { message } : {}), terminateOnError: true })) last = structuredClone(m);
  return last!;
}

type ToolPart = Extract<UIMessage['parts'][number], { type: 'dynamic-tool' }>;
const toolParts = (m: UIMessage): ToolPart[] => m.parts.filter((p): p is ToolPart => p.type === 'dynamic-tool');

describe("alice's conversation, waiting for her approval", () => {
  const chatId = `owners-chat-${RUN}`;
  const turnId = conversationTurnId(chatId, 0);
  let paused: UIMessage;
  let callId: string;

  beforeAll(async () => {
    paused = await lastMessage(
      await transport('alice').sendMessages({
        chatId,
        messages: [userMessage('a1', SECRET)],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
        body: { options: { model: 'approve' } },
      }),
    );
    const [sum] = toolParts(paused);
    expect(sum).toMatchObject({ toolName: 'everything__get-sum', state: 'approval-requested' });
    callId = sum!.toolCallId;
    // Lists read visibility, which trails the workflows: wait until alice's lists hold hers.
    await until(async () => JSON.stringify(json(await call('alice', 'GET', '/v1/approvals'))).includes(callId), "alice's waiting call listed", 30_000);
    await until(async () => JSON.stringify(json(await call('alice', 'GET', '/v1/conversations?limit=200'))).includes(chatId), "alice's conversation listed", 30_000);
  });

  it('is answered to bob on every route exactly as an id that names nothing, and no answer holds her question', async () => {
    const nothing = `owners-nothing-${RUN}`;
    type Route = { method: string; path: (id: string, turn: string) => string; body?: (id: string) => unknown; accept?: string };
    // Reads and decisions: answered as for an id that names nothing.
    const reads: Route[] = [
      { method: 'GET', path: (id) => `/v1/conversations/${id}` },
      { method: 'GET', path: (_id, turn) => `/v1/turns/${turn}` },
      { method: 'GET', path: (_id, turn) => `/v1/turns/${turn}/events`, accept: 'text/event-stream' },
      { method: 'GET', path: (id) => `/v1/turns/${id}/events`, accept: 'text/event-stream' },
      { method: 'POST', path: (_id, turn) => `/v1/approvals/${turn}/${callId}`, body: () => ({ approved: true, reason: 'bob says so' }) },
    ];
    for (const { method, path, body, accept } of reads) {
      const where = `${method} ${path(chatId, turnId)}`;
      const theirs = await call('bob', method, path(chatId, turnId), body?.(chatId), accept);
      const none = await call('bob', method, path(nothing, conversationTurnId(nothing, 0)), body?.(nothing), accept);
      expect([where, theirs.status, none.status]).toEqual([where, 404, 404]);
      expect([where, theirs.text.replaceAll(chatId, '<id>')]).toEqual([where, none.text.replaceAll(nothing, '<id>')]);
      expect(theirs.text).not.toContain(SECRET);
    }
    // Posting into it (an id that names nothing would create bob's own conversation instead).
    const posts: Route[] = [
      { method: 'POST', path: (id) => `/v1/conversations/${id}/messages`, body: () => ({ text: 'let me in', options: { model: 'quick' } }), accept: 'text/event-stream' },
      { method: 'POST', path: () => '/api/chat', body: (id) => ({ id, messages: [userMessage('b1', 'let me in')], trigger: 'submit-message' }), accept: 'text/event-stream' },
    ];
    for (const { method, path, body, accept } of posts) {
      const theirs = await call('bob', method, path(chatId, turnId), body?.(chatId), accept);
      expect([path(chatId, turnId), theirs.status, json(theirs)]).toEqual([path(chatId, turnId), 404, { error: `no conversation ${chatId}` }]);
    }
    // useChat's resume of her chat: 404 (an id that names nothing: 204, nothing to resume).
    const resume = await call('bob', 'GET', `/api/chat/${chatId}/stream`);
    expect([resume.status, json(resume)]).toEqual([404, { error: `no conversation ${chatId}` }]);
    // The approval response, as useChat re-posts it with her message's parts.
    const answered = structuredClone(paused);
    Object.assign(toolParts(answered)[0]!, { state: 'approval-responded', approval: { id: toolParts(paused)[0]!.approval!.id, approved: true } });
    const decide = await call('bob', 'POST', '/api/chat', { id: chatId, messages: [userMessage('a1', SECRET), answered], trigger: 'submit-message', messageId: answered.id });
    expect([decide.status, json(decide)]).toEqual([404, { error: `no turn ${turnId}` }]);
    // Lists: none of hers.
    const lists = [await call('bob', 'GET', '/v1/conversations?limit=200'), await call('bob', 'GET', '/v1/approvals')];
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.text).not.toContain(chatId);
      expect(list.text).not.toContain(SECRET);
    }
  });

  it('is refused to bob through the ai package transport, send and resume alike', async () => {
    await expect(
      transport('bob').sendMessages({ chatId, messages: [userMessage('b2', 'hello?')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }),
    ).rejects.toThrow(/no conversation/);
    await expect(transport('bob').reconnectToStream({ chatId })).rejects.toThrow(/no conversation/);
    // Bob's own chat under another id works as anyone's.
    const own = await lastMessage(
      await transport('bob').sendMessages({ chatId: `${chatId}-bob`, messages: [userMessage('b3', 'mine')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined, body: { options: { model: 'quick' } } }),
    );
    expect(own.metadata).toMatchObject({ status: 'completed' });
  });

  it('is listed to root with alice as its owner; root reads and streams it; alice resumes it through the transport', async () => {
    await until(async () => JSON.stringify(json(await call('root', 'GET', '/v1/conversations?limit=200'))).includes(`${chatId}-bob`), "bob's conversation listed to root", 30_000);
    const rows = json<{ conversations: Array<{ id: string; owner?: string; summary?: string }> }>(await call('root', 'GET', '/v1/conversations?limit=200')).conversations;
    expect(rows.find((r) => r.id === chatId)).toMatchObject({ owner: 'alice', summary: SECRET });
    expect(rows.find((r) => r.id === `${chatId}-bob`)).toMatchObject({ owner: 'bob' });
    const approvals = json<{ approvals: Array<{ turnId: string; owner?: string }> }>(await call('root', 'GET', '/v1/approvals')).approvals;
    expect(approvals.find((a) => a.turnId === turnId)).toMatchObject({ owner: 'alice' });
    expect((await call('root', 'GET', `/v1/conversations/${chatId}`)).status).toBe(200);
    expect((await call('root', 'GET', `/v1/turns/${turnId}`)).text).toContain(SECRET);
    expect((await call('root', 'GET', `/v1/turns/${turnId}/events`, undefined, 'text/event-stream')).status).toBe(200);
    // alice's own reads and her resume (the running turn's stream from its start, paused at the approval).
    expect((await call('alice', 'GET', `/v1/turns/${turnId}`)).text).toContain(SECRET);
    const resumed = await transport('alice').reconnectToStream({ chatId });
    expect(resumed).not.toBeNull();
    expect(toolParts(await lastMessage(resumed!))[0]).toMatchObject({ state: 'approval-requested' });
  });

  it("lets root decide alice's call, recorded as root's decision", async () => {
    const decided = await call('root', 'POST', `/v1/approvals/${turnId}/${callId}`, { approved: true, reason: 'admin approves' });
    expect(decided.status).toBe(200);
    const result = await h.client.workflow.getHandle(turnId).result();
    expect(JSON.stringify(result)).toContain('"root"');
  });
});

describe('what bob, alice and root each see of turns', () => {
  it("keeps alice's standalone turn hers, and a turn the client API started root's to see only", async () => {
    const started = await call('alice', 'POST', '/v1/turns', { question: `${SECRET} standalone`, model: 'quick', stream: false });
    expect(started.status).toBe(202);
    const { id } = json<{ id: string }>(started);
    await until(async () => json<{ status: string }>(await call('alice', 'GET', `/v1/turns/${id}`)).status === 'completed', "alice's turn completed", 30_000);
    const bob = await call('bob', 'GET', `/v1/turns/${id}`);
    expect([bob.status, json(bob)]).toEqual([404, { error: `no turn ${id}` }]);
    expect((await call('root', 'GET', `/v1/turns/${id}`)).status).toBe(200);
    // The owner on the workflow is opaque: neither the name nor the token.
    const owner = (await h.client.workflow.getHandle(id).describe()).typedSearchAttributes.get(SA_OWNER);
    expect(owner).toBe(tokenCaller('alice', false).owner.key);
    expect(owner).toMatch(/^o[A-Za-z0-9_-]{32}$/);

    const cli = await startChatTurn(h.client, { question: 'started from code', model: 'quick' }, { taskQueue: h.taskQueue });
    await cli.result();
    for (const who of ['alice', 'bob'] as const) expect((await call(who, 'GET', `/v1/turns/${cli.workflowId}`)).status).toBe(404);
    expect((await call('root', 'GET', `/v1/turns/${cli.workflowId}`)).status).toBe(200);
  });

  it("makes every turn of alice's batch hers, with her fairness key", async () => {
    const name = `owners-batch-${RUN}`;
    const owner = tokenCaller('alice', false).owner;
    await runBatch(h.client, { name, items: [1, 2].map((i) => ({ id: `q${i}`, input: { question: `batch question ${i}`, model: 'quick' } })), taskQueue: h.taskQueue, owner, onResult: () => {} });
    for (const i of [1, 2]) {
      const id = batchChildId(name, `q${i}`);
      const described = await h.client.workflow.getHandle(id).describe();
      expect(described.typedSearchAttributes.get(SA_OWNER)).toBe(owner.key);
      expect(described.raw.workflowExecutionInfo?.priority?.fairnessKey).toBe(owner.key);
      expect((await call('alice', 'GET', `/v1/turns/${id}`)).status).toBe(200);
      expect((await call('bob', 'GET', `/v1/turns/${id}`)).status).toBe(404);
    }
  });

  it("keeps a conversation's owner across continue-as-new and on every turn, and the conversation itself refuses another's message", async () => {
    const id = `owners-long-${RUN}`;
    const owner = tokenCaller('alice', false).owner;
    await startConversation(h.client, id, { taskQueue: h.taskQueue, owner, turnsPerRun: 1, options: { model: 'quick' } });
    for (const text of ['one', 'two', 'three']) await sendMessage(h.client, id, text);
    await until(async () => {
      const d = await h.client.workflow.getHandle(id).describe();
      return d.runId !== d.raw.workflowExecutionInfo?.firstRunId;
    }, 'a run continued as new', 10_000);
    expect((await h.client.workflow.getHandle(id).describe()).typedSearchAttributes.get(SA_OWNER)).toBe(owner.key);
    for (const i of [0, 1, 2]) {
      const turn = await h.client.workflow.getHandle(conversationTurnId(id, i)).describe();
      expect(turn.typedSearchAttributes.get(SA_OWNER)).toBe(owner.key);
      expect(turn.raw.workflowExecutionInfo?.priority?.fairnessKey).toBe(owner.key);
    }
    expect((await call('alice', 'GET', `/v1/turns/${conversationTurnId(id, 2)}`)).status).toBe(200);
    // A message that reaches the conversation from someone else (as one racing its creation would) is refused by the conversation.
    const bobKey = tokenCaller('bob', false).owner.key;
    const refused = await h.client.workflow
      .getHandle(id)
      .executeUpdate(sendMessageUpdate, { args: [{ text: 'sneaking in', owner: bobKey }] })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((refused as WorkflowUpdateFailedError).cause?.message).toBe('no such conversation');
  });
});
