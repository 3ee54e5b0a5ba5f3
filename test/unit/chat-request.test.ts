/**
 * What a posted chat body asks for. The bodies are the ones the AI SDK's own chat (`AbstractChat`
 * with `DefaultChatTransport`, what `useChat` runs) posts while it reads our streams: a new user
 * message, the answer to an approval request (sent by itself once every waiting call is answered),
 * a regenerate. Bodies that ask for nothing usable are refused with one line naming the field.
 */
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type ChatInit,
  type ChatState,
  type DynamicToolUIPart,
  type UIMessage,
} from 'ai';
import type { TurnStreamEvent, UnnumberedEvent } from '../../src/core/stream-events';
import { ChatRequestError, chatActionOf } from '../../src/serve/chat-request';
import { UiMessageStream, type UiChunk } from '../../src/serve/ui-message-stream';

/** The smallest concrete chat: its state in plain fields. */
class TestChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, 'messages'>) {
    let messages: UIMessage[] = [];
    const state: ChatState<UIMessage> = {
      status: 'ready',
      error: undefined,
      get messages() {
        return messages;
      },
      set messages(m) {
        messages = m;
      },
      pushMessage: (m) => void (messages = [...messages, m]),
      popMessage: () => void (messages = messages.slice(0, -1)),
      replaceMessage: (i, m) => void (messages = messages.map((old, j) => (j === i ? m : old))),
      snapshot: (thing) => structuredClone(thing),
    };
    super({ ...init, state });
  }
}

const TURN = 'chat-1/turn-1';
const numbered = (events: readonly UnnumberedEvent[], from = 0): TurnStreamEvent[] =>
  events.map((e, i) => ({ ...e, offset: from + i, turnId: TURN }) as TurnStreamEvent);
const echo = { toolCallId: 'toolu_1', toolName: 'everything__echo' };

const untilApproval = numbered([
  { type: 'start', question: 'Echo alpha, please.' },
  {
    type: 'data-tools',
    offered: [{ name: 'everything__echo', server: 'everything', tool: 'echo' }],
    deferred: [],
    dropped: [],
    unavailable: [{ server: 'files', reason: 'connect failed: ECONNREFUSED' }],
  },
  { type: 'start-step', step: 1 },
  { type: 'text-delta', id: 'step-1', delta: 'Let me echo it.', step: 1, attempt: 1 },
  {
    type: 'tool-input-available',
    ...echo,
    server: 'everything',
    tool: 'echo',
    input: { message: 'alpha' },
    step: 1,
  },
  { type: 'data-approval', ...echo, state: 'waiting' },
]);
const afterDenial = numbered(
  [
    { type: 'data-approval', ...echo, state: 'denied', by: 'web', reason: 'not today' },
    {
      type: 'tool-output-available',
      ...echo,
      isError: true,
      durationMs: 0,
      resultBytes: 0,
      notRun: 'denied',
    },
    { type: 'finish-step', step: 1 },
    { type: 'data-answer', response: { conversation: 'I did not echo.', artifacts: [] } },
    { type: 'finish', status: 'completed', stopReason: 'completed' },
  ],
  untilApproval.length,
);

/** A chat whose server answers each request with the next of `replies`, and the bodies it posted. */
function chatAnswering(replies: UiChunk[][]): { chat: TestChat; bodies: unknown[] } {
  const bodies: unknown[] = [];
  const fetch = (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    bodies.push(JSON.parse(String(init?.body)));
    const chunks = replies.shift() ?? [];
    const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('');
    return Promise.resolve(new Response(sse, { headers: { 'content-type': 'text/event-stream' } }));
  };
  let n = 0;
  const chat = new TestChat({
    id: 'chat-1',
    generateId: () => `client-${++n}`,
    transport: new DefaultChatTransport({ api: 'http://serve.test/api/chat', fetch }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  return { chat, bodies };
}

async function until(ready: () => boolean): Promise<void> {
  for (let waited = 0; !ready(); waited += 5) {
    if (waited > 5000) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('chatActionOf, on what useChat posts', () => {
  it('a user message, an approval answer with where the stream paused, a regenerate', async () => {
    const first = new UiMessageStream({ turnId: TURN, messageId: 'turn-msg-1' });
    const paused = [
      ...first.start(),
      ...untilApproval.flatMap((e) => first.push(e)),
      ...first.end('approval'),
    ];
    const next = new UiMessageStream({ turnId: TURN });
    const continued = [...next.start(), ...afterDenial.flatMap((e) => next.push(e)), ...next.end('finished')];
    const { chat, bodies } = chatAnswering([paused, continued, []]);

    await chat.sendMessage({ text: 'Echo alpha, please.' });
    expect(bodies[0]).toMatchObject({ id: 'chat-1', trigger: 'submit-message' });
    expect(chatActionOf(bodies[0])).toEqual({
      kind: 'message',
      chatId: 'chat-1',
      text: 'Echo alpha, please.',
      messageId: 'client-1',
      regenerate: false,
    });

    const asked = chat.lastMessage!.parts.find((p): p is DynamicToolUIPart => p.type === 'dynamic-tool')!;
    expect(asked).toMatchObject({ state: 'approval-requested', approval: { id: 'chat-1/turn-1/toolu_1' } });
    await chat.addToolApprovalResponse({ id: asked.approval!.id, approved: false, reason: 'not today' });
    await until(() => bodies.length === 2 && chat.status === 'ready');
    expect(chatActionOf(bodies[1])).toEqual({
      kind: 'approvals',
      chatId: 'chat-1',
      decisions: [{ turnId: TURN, callId: 'toolu_1', approved: false, reason: 'not today' }],
      resume: { turnId: TURN, offset: untilApproval.length },
    });
    // The continuation completed the same message.
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(chat.lastMessage!.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'output-denied',
      approval: { id: 'chat-1/turn-1/toolu_1', approved: false, reason: 'not today' },
    });
    expect(chat.lastMessage!.metadata).toMatchObject({ turnId: TURN, offset: 11, status: 'completed' });

    // Regenerating the answer drops it and posts the conversation up to the question again.
    await chat.regenerate({ messageId: 'turn-msg-1' });
    expect(bodies[2]).toMatchObject({ trigger: 'regenerate-message', messageId: 'turn-msg-1' });
    expect((bodies[2] as { messages: UIMessage[] }).messages.map((m) => m.role)).toEqual(['user']);
    expect(chatActionOf(bodies[2])).toEqual({
      kind: 'message',
      chatId: 'chat-1',
      text: 'Echo alpha, please.',
      messageId: 'client-1',
      regenerate: true,
    });
  });
});

describe('chatActionOf, by hand', () => {
  const user = (parts: unknown[], id = 'u1'): unknown => ({ id, role: 'user', parts });
  const responded = (id: string, approved: boolean, toolCallId = 'toolu_2'): unknown => ({
    type: 'dynamic-tool',
    toolName: 'fs__rm',
    toolCallId,
    state: 'approval-responded',
    input: { path: '/tmp/x' },
    approval: { id, approved },
  });
  const assistant = (parts: unknown[], metadata?: unknown): unknown => ({
    id: 'a1',
    role: 'assistant',
    parts,
    metadata,
  });
  const body = (...messages: unknown[]): unknown => ({ id: 'chat-9', messages, trigger: 'submit-message' });

  it('joins the text parts of a user message and passes unknown parts and keys', () => {
    const action = chatActionOf({
      ...(body(
        user([
          { type: 'text', text: 'one' },
          { type: 'file', url: 'data:,x', mediaType: 'text/plain' },
          { type: 'text', text: 'two' },
        ]),
      ) as object),
      extra: { anything: true },
    });
    expect(action).toEqual({
      kind: 'message',
      chatId: 'chat-9',
      text: 'one\ntwo',
      messageId: 'u1',
      regenerate: false,
    });
  });

  it('reads every responded approval of a static or dynamic tool part; the metadata only when valid', () => {
    const parts = [
      { type: 'step-start' },
      responded('t/1/toolu_2', true),
      {
        ...(responded('t/1/toolu_3', false, 'toolu_3') as object),
        type: 'tool-fs__rm',
        approval: { id: 't/1/toolu_3', approved: false, reason: 'no' },
      },
      { type: 'dynamic-tool', toolCallId: 'toolu_4', state: 'output-available', input: {}, output: 'x' },
    ];
    expect(
      chatActionOf(
        body(user([{ type: 'text', text: 'hi' }]), assistant(parts, { turnId: 't/1', offset: 12 })),
      ),
    ).toEqual({
      kind: 'approvals',
      chatId: 'chat-9',
      decisions: [
        { turnId: 't/1', callId: 'toolu_2', approved: true },
        { turnId: 't/1', callId: 'toolu_3', approved: false, reason: 'no' },
      ],
      resume: { turnId: 't/1', offset: 12 },
    });
    const noResume = chatActionOf(body(assistant(parts, { turnId: 't/1', offset: -1 })));
    expect(noResume).toMatchObject({ kind: 'approvals' });
    expect(noResume).not.toHaveProperty('resume');
  });

  const refusals: [string, unknown, string][] = [
    ['not an object', null, 'body: Invalid input: expected object, received null'],
    ['no chat id', { messages: [user([])] }, 'id: Invalid input: expected string, received undefined'],
    ['no message', { id: 'c', messages: [] }, 'messages: Too small: expected array to have >=1 items'],
    [
      'parts not a list',
      { id: 'c', messages: [user([]), { id: 'm', role: 'user', parts: 'hi' }] },
      'messages[1].parts: Invalid input: expected array, received string',
    ],
    [
      'an unknown role',
      { id: 'c', messages: [{ id: 'm', role: 'tool', parts: [] }] },
      'messages[0].role: Invalid option',
    ],
    [
      'an unknown trigger',
      { ...(body(user([])) as object), trigger: 'resume-stream' },
      'trigger: Invalid option',
    ],
    [
      'a text part without text',
      body(
        user([
          { type: 'text', text: 'a' },
          { type: 'text', text: 3 },
        ]),
      ),
      'messages[0].parts[1].text: Invalid input: expected string, received number',
    ],
    [
      'a blank user message',
      body(user([{ type: 'text', text: '  \n' }, { type: 'file' }])),
      'messages: the last message has no text',
    ],
    [
      'an assistant message that answers nothing',
      body(user([{ type: 'text', text: 'hi' }]), assistant([{ type: 'text', text: 'yes' }])),
      "messages: the last message is the assistant's and answers no approval request",
    ],
    [
      'an approval id that is not ours',
      body(user([]), assistant([{ type: 'step-start' }, responded('toolu_2', true)])),
      'messages[1].parts[1].approval.id: not an approval id of call toolu_2',
    ],
    [
      'an approval id of another call',
      body(assistant([responded('t/1/toolu_9', true)])),
      'messages[0].parts[0].approval.id: not an approval id of call toolu_2',
    ],
    [
      'an answer without its decision',
      body(assistant([{ ...(responded('t/1/toolu_2', true) as object), approval: { id: 't/1/toolu_2' } }])),
      'messages[0].parts[0].approval.approved: Invalid input: expected boolean, received undefined',
    ],
    [
      'a system message last',
      body({ id: 's', role: 'system', parts: [] }),
      "messages[0].role: the last message is neither the user's nor the assistant's",
    ],
  ];
  it.each(refusals)('refuses %s in one line naming the field', (_what, bad, message) => {
    let error: unknown;
    try {
      chatActionOf(bad);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ChatRequestError);
    const text = (error as Error).message;
    expect(text).not.toContain('\n');
    expect(text.startsWith(message)).toBe(true);
  });
});
