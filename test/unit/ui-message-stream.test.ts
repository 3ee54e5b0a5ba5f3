/**
 * A turn's events as a UI message stream, read by the AI SDK itself: the chunks go over the wire as
 * server-sent events, are parsed with the SDK's chunk schema and built into a message by
 * `readUIMessageStream`, as `useChat` does. Texts, tool calls through their approval, denials and
 * calls that did not run, retried steps, a server's questions for the person, and a stream paused
 * for approval then continued.
 */
import {
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
  type DynamicToolUIPart,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import type { TurnStreamEvent, UnnumberedEvent } from '../../src/core/stream-events';
import {
  approvalIdOf,
  inputPartIdOf,
  parseApprovalId,
  UiMessageStream,
  type UiChunk,
} from '../../src/serve/ui-message-stream';

const TURN = 'chat-7/turn-2';
const usage = { inputTokens: 120, outputTokens: 40, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const echo = { toolCallId: 'toolu_1', toolName: 'everything__echo' };

/** What the turn offered Claude, as its start recorded it. */
const turnTools = {
  offered: [
    { name: 'everything__echo', server: 'everything', tool: 'echo' },
    { name: 'web_search', providerExecuted: true },
  ],
  deferred: ['web_search'],
  dropped: [{ name: 'everything__add', reason: 'over maxToolsPerRequest (1)' }],
  unavailable: [{ server: 'files', reason: 'connect failed: ECONNREFUSED' }],
};

/** A two-step turn whose first step echoes `alpha` once approved, as the projection emits it. */
const echoTurn: UnnumberedEvent[] = [
  { type: 'start', question: 'Echo alpha, please.' },
  { type: 'data-tools', ...turnTools },
  { type: 'start-step', step: 1 },
  { type: 'text-delta', id: 'step-1', delta: 'Let me ', step: 1, attempt: 1 },
  { type: 'text-delta', id: 'step-1', delta: 'echo it.', step: 1, attempt: 1 },
  {
    type: 'tool-input-available',
    ...echo,
    server: 'everything',
    tool: 'echo',
    input: { message: 'alpha' },
    step: 1,
  },
  { type: 'data-approval', ...echo, state: 'waiting', timeoutMs: 60_000 },
  // offset 7: the decision
  { type: 'data-approval', ...echo, state: 'approved', by: 'alice' },
  {
    type: 'tool-output-available',
    ...echo,
    isError: false,
    durationMs: 12,
    resultBytes: 40,
    output: 'Echo: alpha',
  },
  { type: 'finish-step', step: 1 },
  { type: 'start-step', step: 2 },
  { type: 'text-delta', id: 'step-2', delta: 'It echoed alpha.', step: 2, attempt: 1 },
  { type: 'finish-step', step: 2 },
  { type: 'text-delta', id: 'answer', delta: 'The echo ', attempt: 1 },
  { type: 'text-delta', id: 'answer', delta: 'said alpha.', attempt: 1 },
  { type: 'data-answer', response: { conversation: 'The echo said alpha.', artifacts: [] } },
  { type: 'finish', status: 'completed', stopReason: 'completed', usage, costUsd: 0.0012 },
];
const PAUSE = 7;

/** `events` numbered from `from`, as the stream hands them out. */
function numbered(events: readonly UnnumberedEvent[], from = 0): TurnStreamEvent[] {
  return events.map((e, i) => ({ ...e, offset: from + i, turnId: TURN }) as TurnStreamEvent);
}

/** A whole response: start, every event, end. */
function translate(
  s: UiMessageStream,
  events: readonly TurnStreamEvent[],
  why: Parameters<UiMessageStream['end']>[0],
): UiChunk[] {
  return [...s.start(), ...events.flatMap((e) => s.push(e)), ...s.end(why)];
}

/** The message the SDK builds from `chunks` sent as server-sent events (continuing `message` if given). */
async function read(
  chunks: readonly UIMessageChunk[],
  message?: UIMessage,
): Promise<{ message: UIMessage; snapshots: UIMessage[]; errors: string[] }> {
  const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('');
  const parsed = parseJsonEventStream({ stream: new Response(sse).body!, schema: uiMessageChunkSchema });
  const stream = parsed.pipeThrough(
    new TransformStream<typeof parsed extends ReadableStream<infer R> ? R : never, UIMessageChunk>({
      transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value);
      },
    }),
  );
  const errors: string[] = [];
  const snapshots: UIMessage[] = [];
  const onError = (e: unknown): void => void errors.push(e instanceof Error ? e.message : String(e));
  for await (const m of readUIMessageStream({ message, stream, onError })) snapshots.push(m);
  return { message: snapshots[snapshots.length - 1]!, snapshots, errors };
}

const textsOf = (m: UIMessage): string[] => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
const toolOf = (m: UIMessage, id: string): DynamicToolUIPart =>
  m.parts.find((p): p is DynamicToolUIPart => p.type === 'dynamic-tool' && p.toolCallId === id)!;
const dataOf = (m: UIMessage, type: string): unknown[] =>
  m.parts.flatMap((p) => (p.type === type && 'data' in p ? [p.data] : []));
/** The states a tool part went through, each once in a row. */
const statesOf = (snapshots: readonly UIMessage[], id: string): (string | undefined)[] =>
  snapshots.map((m) => toolOf(m, id)?.state).filter((s, i, all) => s !== undefined && s !== all[i - 1]);

describe('approval ids', () => {
  it('name the turn and the call, split at the last slash', () => {
    expect(approvalIdOf(TURN, 'toolu_1')).toBe('chat-7/turn-2/toolu_1');
    expect(parseApprovalId('chat-7/turn-2/toolu_1')).toEqual({ turnId: 'chat-7/turn-2', callId: 'toolu_1' });
    expect(parseApprovalId('toolu_1')).toBeUndefined();
    expect(parseApprovalId('/toolu_1')).toBeUndefined();
    expect(parseApprovalId('turn/')).toBeUndefined();
  });
});

describe('UiMessageStream', () => {
  it('makes one message of a whole turn: texts per step, the call through its approval, the answer', async () => {
    const s = new UiMessageStream({ turnId: TURN, messageId: 'msg-1' });
    const chunks = translate(s, numbered(echoTurn), 'finished');
    const { message, snapshots, errors } = await read(chunks);

    expect(errors).toEqual([]);
    expect(s.finished).toBe(true);
    expect(s.waitingApprovals).toBe(0);
    expect(message.id).toBe('msg-1');
    expect(textsOf(message)).toEqual(['Let me echo it.', 'It echoed alpha.', 'The echo said alpha.']);
    expect(message.parts.every((p) => p.type !== 'text' || p.state === 'done')).toBe(true);
    expect(message.parts.map((p) => p.type)).toEqual([
      'data-tools',
      'step-start',
      'text',
      'dynamic-tool',
      'data-approval',
      'step-start',
      'text',
      'text',
      'data-answer',
    ]);

    expect(statesOf(snapshots, 'toolu_1')).toEqual([
      'input-available',
      'approval-requested',
      'output-available',
    ]);
    expect(toolOf(message, 'toolu_1')).toMatchObject({
      toolName: 'everything__echo',
      title: 'everything · echo',
      input: { message: 'alpha' },
      output: 'Echo: alpha',
      approval: { id: 'chat-7/turn-2/toolu_1' },
    });
    expect(dataOf(message, 'data-approval')).toEqual([
      { toolCallId: 'toolu_1', state: 'approved', by: 'alice' },
    ]);
    expect(dataOf(message, 'data-answer')).toEqual([{ conversation: 'The echo said alpha.', artifacts: [] }]);
    // What the turn offered: before its first step, as the event has it.
    expect(chunks.slice(0, 3)).toEqual([
      { type: 'start', messageId: 'msg-1', messageMetadata: { turnId: TURN } },
      { type: 'data-tools', data: turnTools },
      { type: 'start-step' },
    ]);
    expect(dataOf(message, 'data-tools')).toEqual([turnTools]);

    expect(chunks[chunks.length - 1]).toEqual({
      type: 'finish',
      finishReason: 'stop',
      messageMetadata: {
        turnId: TURN,
        offset: 17,
        status: 'completed',
        stopReason: 'completed',
        usage,
        costUsd: 0.0012,
      },
    });
    expect(message.metadata).toEqual({
      turnId: TURN,
      offset: 17,
      status: 'completed',
      stopReason: 'completed',
      usage,
      costUsd: 0.0012,
    });
  });

  it('answers a denied call, a timed-out wait and calls that did not run, each once', async () => {
    const call = (toolCallId: string): { toolCallId: string; toolName: string } => ({
      toolCallId,
      toolName: 'fs__rm',
    });
    const input = (toolCallId: string): UnnumberedEvent => ({
      type: 'tool-input-available',
      ...call(toolCallId),
      input: {},
      step: 1,
    });
    const notRun = { durationMs: 0, resultBytes: 0 };
    const events = numbered([
      { type: 'start', question: 'q' },
      { type: 'start-step', step: 1 },
      input('a'),
      input('b'),
      input('c'),
      input('d'),
      input('e'),
      { type: 'data-approval', ...call('a'), state: 'waiting' },
      { type: 'data-approval', ...call('b'), state: 'waiting' },
      { type: 'data-approval', ...call('a'), state: 'denied', by: 'bob', reason: 'not that file' },
      { type: 'data-approval', ...call('b'), state: 'timed_out' },
      { type: 'tool-output-available', ...call('d'), isError: true, durationMs: 30, resultBytes: 0 },
      { type: 'tool-output-available', ...call('e'), isError: false, ...notRun, notRun: 'repeated' },
      // the step's end answers the calls that never ran
      { type: 'tool-output-available', ...call('a'), isError: true, ...notRun, notRun: 'denied' },
      { type: 'tool-output-available', ...call('b'), isError: true, ...notRun, notRun: 'denied' },
      { type: 'tool-output-available', ...call('c'), isError: true, ...notRun, notRun: 'refused' },
      { type: 'finish-step', step: 1 },
      { type: 'finish', status: 'completed', stopReason: 'max_steps' },
    ]);
    const s = new UiMessageStream({ turnId: TURN });
    const chunks = translate(s, events, 'finished');
    const { message, errors } = await read(chunks);

    expect(errors).toEqual([]);
    expect(chunks.filter((c) => c.type === 'tool-output-denied')).toEqual([
      { type: 'tool-output-denied', toolCallId: 'a' },
      { type: 'tool-output-denied', toolCallId: 'b' },
    ]);
    expect(['a', 'b', 'c', 'd', 'e'].map((id) => toolOf(message, id).state)).toEqual([
      'output-denied',
      'output-denied',
      'output-error',
      'output-error',
      'output-available',
    ]);
    expect(toolOf(message, 'c').errorText).toBe('not run: refused');
    expect(toolOf(message, 'd').errorText).toBe('the tool call failed');
    expect(toolOf(message, 'e').output).toBe('not run: repeated');
    expect(dataOf(message, 'data-approval')).toEqual([
      { toolCallId: 'a', state: 'denied', by: 'bob', reason: 'not that file' },
      { toolCallId: 'b', state: 'timed_out' },
    ]);
    expect(chunks[chunks.length - 1]).toMatchObject({ type: 'finish', finishReason: 'length' });
  });

  it('opens a new part after a retry and names the superseded ones', async () => {
    const events = numbered([
      { type: 'start', question: 'q' },
      { type: 'start-step', step: 1 },
      { type: 'reasoning-delta', id: 'reasoning-1', delta: 'Hmm', step: 1, attempt: 1 },
      { type: 'text-delta', id: 'step-1', delta: 'Hel', step: 1, attempt: 1 },
      { type: 'data-compaction', step: 1, reason: 'the context window is full' },
      // offset 5
      { type: 'data-retry', discard: ['step-1', 'reasoning-1'], attempt: 2, reason: 'overloaded', step: 1 },
      { type: 'reasoning-delta', id: 'reasoning-1', delta: 'Again', step: 1, attempt: 2 },
      { type: 'text-delta', id: 'step-1', delta: 'Hello', step: 1, attempt: 2 },
      { type: 'finish-step', step: 1 },
      { type: 'text-delta', id: 'answer', delta: 'Draft', attempt: 1 },
      // offset 10: the answer differs from what streamed
      {
        type: 'data-retry',
        discard: ['answer'],
        attempt: 1,
        reason: 'the answer differs from what streamed',
      },
      { type: 'text-delta', id: 'answer', delta: 'Final answer', attempt: 1 },
      { type: 'data-answer', response: { conversation: 'Final answer', artifacts: [] } },
      { type: 'finish', status: 'completed', stopReason: 'completed' },
    ]);
    const { message, errors } = await read(
      translate(new UiMessageStream({ turnId: TURN }), events, 'finished'),
    );

    expect(errors).toEqual([]);
    const retries = dataOf(message, 'data-retry') as { superseded: string[] }[];
    expect(retries).toEqual([
      { superseded: ['step-1', 'reasoning-1'], reason: 'overloaded', attempt: 2 },
      { superseded: ['answer'], reason: 'the answer differs from what streamed', attempt: 1 },
    ]);
    expect(dataOf(message, 'data-compaction')).toEqual([{ step: 1, reason: 'the context window is full' }]);
    const idOf = (p: UIMessage['parts'][number]): string =>
      (p as { providerMetadata?: { mcpTurns?: { id?: string } } }).providerMetadata?.mcpTurns?.id ?? '';
    const written = message.parts
      .filter((p) => p.type === 'text' || p.type === 'reasoning')
      .map((p) => [p.type, idOf(p), (p as { text: string }).text, (p as { state?: string }).state]);
    expect(written).toEqual([
      ['reasoning', 'reasoning-1', 'Hmm', 'done'],
      ['text', 'step-1', 'Hel', 'done'],
      ['reasoning', 'reasoning-1~5', 'Again', 'done'],
      ['text', 'step-1~5', 'Hello', 'done'],
      ['text', 'answer', 'Draft', 'done'],
      ['text', 'answer~10', 'Final answer', 'done'],
    ]);
    // What a page shows once it hides the superseded parts: exactly the turn's texts.
    const superseded = new Set(retries.flatMap((r) => r.superseded));
    const shown = message.parts.filter((p) => p.type === 'text' && !superseded.has(idOf(p)));
    expect(shown.map((p) => (p as { text: string }).text)).toEqual(['Hello', 'Final answer']);
  });

  it('pauses while a call waits for approval, then a continuation completes the same message', async () => {
    const events = numbered(echoTurn);
    const first = new UiMessageStream({ turnId: TURN, messageId: 'msg-1' });
    const firstChunks = [...first.start(), ...events.slice(0, PAUSE).flatMap((e) => first.push(e))];
    expect(first.waitingApprovals).toBe(1);
    expect(first.finished).toBe(false);
    const end = first.end('approval');
    // The step's text is still open (its step ends after its calls): the pause closes it.
    expect(end).toEqual([
      { type: 'text-end', id: 'step-1' },
      { type: 'finish', finishReason: 'tool-calls', messageMetadata: { turnId: TURN, offset: PAUSE } },
    ]);
    const paused = await read([...firstChunks, ...end]);
    expect(paused.errors).toEqual([]);
    expect(paused.message.metadata).toEqual({ turnId: TURN, offset: PAUSE });
    expect(toolOf(paused.message, 'toolu_1')).toMatchObject({
      state: 'approval-requested',
      approval: { id: 'chat-7/turn-2/toolu_1' },
    });

    // The page answers the request (as useChat's addToolApprovalResponse does) and posts again.
    const answered: UIMessage = {
      ...paused.message,
      parts: paused.message.parts.map((p) =>
        p.type === 'dynamic-tool' && p.state === 'approval-requested'
          ? { ...p, state: 'approval-responded', approval: { id: p.approval.id, approved: true } }
          : p,
      ),
    };
    const next = new UiMessageStream({ turnId: TURN });
    const nextChunks = translate(next, events.slice(PAUSE), 'finished');
    expect(nextChunks[0]).toEqual({ type: 'start', messageMetadata: { turnId: TURN } });
    const done = await read(nextChunks, structuredClone(answered));

    expect(done.errors).toEqual([]);
    expect(done.message.id).toBe('msg-1');
    expect(statesOf(done.snapshots, 'toolu_1')).toEqual(['approval-responded', 'output-available']);
    expect(toolOf(done.message, 'toolu_1')).toMatchObject({
      state: 'output-available',
      input: { message: 'alpha' },
      output: 'Echo: alpha',
      approval: { id: 'chat-7/turn-2/toolu_1', approved: true },
    });
    expect(textsOf(done.message)).toEqual(['Let me echo it.', 'It echoed alpha.', 'The echo said alpha.']);
    expect(done.message.metadata).toMatchObject({ turnId: TURN, offset: 17, status: 'completed' });
  });

  it('a continuation read without the message it continues fails at its first tool chunk (the SDK knows no such call)', async () => {
    const next = new UiMessageStream({ turnId: TURN });
    const { message, errors } = await read(translate(next, numbered(echoTurn).slice(PAUSE), 'finished'));
    expect(errors).toEqual([expect.stringContaining('No tool invocation found for tool call ID "toolu_1"')]);
    expect(message.parts.some((p) => p.type === 'text')).toBe(false);
  });

  it("shows a turn's output as one data-output part, replaced as it grows, then the result's object", async () => {
    const invoice = numbered([
      { type: 'start', question: 'The invoice, please.' },
      { type: 'start-step', step: 1 },
      { type: 'text-delta', id: 'step-1', delta: 'Found it.', step: 1, attempt: 1 },
      { type: 'finish-step', step: 1 },
      { type: 'text-delta', id: 'answer', delta: '{"total": 1', attempt: 1 },
      { type: 'data-output', output: { total: 1 }, partial: true },
      { type: 'text-delta', id: 'answer', delta: '2, "lines": [', attempt: 1 },
      { type: 'data-output', output: { total: 12, lines: [] }, partial: true },
      { type: 'text-delta', id: 'answer', delta: ']}', attempt: 1 },
      { type: 'data-output', output: { total: 12, lines: [] }, partial: false },
      { type: 'data-answer', response: { conversation: '{"total": 12, "lines": []}', artifacts: [] } },
      { type: 'finish', status: 'completed', stopReason: 'completed' },
    ]);
    const s = new UiMessageStream({ turnId: TURN });
    const chunks = translate(s, invoice, 'finished');
    expect(chunks.filter((c) => c.type === 'data-output')).toEqual([
      { type: 'data-output', id: 'output', data: { output: { total: 1 }, partial: true } },
      { type: 'data-output', id: 'output', data: { output: { total: 12, lines: [] }, partial: true } },
      { type: 'data-output', id: 'output', data: { output: { total: 12, lines: [] }, partial: false } },
    ]);
    const { message, snapshots, errors } = await read(chunks);
    expect(errors).toEqual([]);
    // One part, replaced in place: what it held as the answer was written, then the object.
    expect(dataOf(message, 'data-output')).toEqual([{ output: { total: 12, lines: [] }, partial: false }]);
    const seen = snapshots.map((m) => dataOf(m, 'data-output')).filter((d) => d.length > 0);
    expect(seen.every((d) => d.length === 1)).toBe(true);
    expect(seen.map((d) => d[0])).toContainEqual({ output: { total: 1 }, partial: true });
    expect(textsOf(message)).toEqual(['Found it.', '{"total": 12, "lines": []}']);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it("shows a server's questions as one data-input part per round, replaced by its end; the stream does not pause for them", async () => {
    const book = { toolCallId: 'toolu_9', toolName: 'modern__book_table', server: 'modern', tool: 'book_table' };
    const requests = [
      {
        key: 'details',
        mode: 'form' as const,
        message: 'How many guests, and when?',
        requestedSchema: { type: 'object', properties: { guests: { type: 'integer', minimum: 1, maximum: 20 }, time: { type: 'string' } }, required: ['guests', 'time'] },
      },
    ];
    const visit = [{ key: 'pay', mode: 'url' as const, message: 'Pay the deposit', url: 'https://pay.example/d/42' }];
    const asked = { ...book, requests };
    const events = numbered([
      { type: 'start', question: 'Book a table' },
      { type: 'start-step', step: 1 },
      { type: 'tool-input-available', ...book, input: { restaurant: 'Chez Nous' }, step: 1 },
      { type: 'data-input', ...asked, round: 1, state: 'waiting', timeoutMs: 600_000 },
      { type: 'data-input', ...asked, round: 1, state: 'answered', by: 'alice', answer: { guests: 4, time: '19:30' } },
      { type: 'data-input', ...book, requests: visit, round: 2, state: 'waiting' },
      { type: 'data-input', ...book, requests: visit, round: 2, state: 'declined', by: 'alice', reason: 'too dear' },
      { type: 'tool-output-available', ...book, isError: false, durationMs: 7, resultBytes: 30, output: 'no booking' },
      { type: 'finish-step', step: 1 },
      { type: 'finish', status: 'completed', stopReason: 'completed' },
    ]);
    const s = new UiMessageStream({ turnId: TURN });
    const chunks: UiChunk[] = [...s.start()];
    for (const e of events) {
      chunks.push(...s.push(e));
      // An approval pauses the stream (the chat route ends it); a question does not.
      expect(s.waitingApprovals).toBe(0);
    }
    chunks.push(...s.end('finished'));
    expect(chunks.filter((c) => c.type === 'data-input')).toEqual([
      { type: 'data-input', id: 'toolu_9:1', data: { ...asked, round: 1, state: 'waiting', timeoutMs: 600_000 } },
      { type: 'data-input', id: 'toolu_9:1', data: { ...asked, round: 1, state: 'answered', by: 'alice', answer: { guests: 4, time: '19:30' } } },
      { type: 'data-input', id: 'toolu_9:2', data: { ...book, requests: visit, round: 2, state: 'waiting' } },
      { type: 'data-input', id: 'toolu_9:2', data: { ...book, requests: visit, round: 2, state: 'declined', by: 'alice', reason: 'too dear' } },
    ]);
    expect(inputPartIdOf('toolu_9', 2)).toBe('toolu_9:2');

    const { message, snapshots, errors } = await read(chunks);
    expect(errors).toEqual([]);
    // While it waited, the part showed the questions; the message keeps each round's end, with what was asked.
    expect(snapshots.some((m) => (dataOf(m, 'data-input') as { state: string }[]).some((d) => d.state === 'waiting'))).toBe(true);
    expect(dataOf(message, 'data-input')).toEqual([
      { ...asked, round: 1, state: 'answered', by: 'alice', answer: { guests: 4, time: '19:30' } },
      { ...book, requests: visit, round: 2, state: 'declined', by: 'alice', reason: 'too dear' },
    ]);
    // A question is no approval: the call goes from its input to its output.
    expect(statesOf(snapshots, 'toolu_9')).toEqual(['input-available', 'output-available']);
    expect(toolOf(message, 'toolu_9').output).toBe('no booking');
  });

  it('finish reasons: invalid_output is an error, stop_sequence a stop', () => {
    const finish = (stopReason: 'invalid_output' | 'stop_sequence') => {
      const s = new UiMessageStream({ turnId: TURN });
      s.push({ type: 'finish', status: 'completed', stopReason, offset: 0, turnId: TURN });
      return s.end('finished').at(-1);
    };
    expect(finish('invalid_output')).toMatchObject({ type: 'finish', finishReason: 'error', messageMetadata: { stopReason: 'invalid_output' } });
    expect(finish('stop_sequence')).toMatchObject({ type: 'finish', finishReason: 'stop', messageMetadata: { stopReason: 'stop_sequence' } });
  });

  it('ends a failed turn with its error, and a cut stream with its open parts closed', async () => {
    const failed = numbered([
      { type: 'start', question: 'q' },
      { type: 'start-step', step: 1 },
      { type: 'text-delta', id: 'step-1', delta: 'Work', step: 1, attempt: 1 },
      { type: 'finish-step', step: 1 },
      { type: 'error', errorText: 'Claude is overloaded' },
      { type: 'finish', status: 'failed' },
    ]);
    const s = new UiMessageStream({ turnId: TURN });
    const chunks = translate(s, failed, 'finished');
    const { message, errors } = await read(chunks);
    expect(errors).toEqual(['Claude is overloaded']);
    expect(textsOf(message)).toEqual(['Work']);
    expect(message.metadata).toEqual({ turnId: TURN, offset: 6, status: 'failed' });
    // The error comes last: useChat stops reading at an error chunk.
    expect(chunks.slice(-2)).toEqual([
      {
        type: 'finish',
        finishReason: 'error',
        messageMetadata: { turnId: TURN, offset: 6, status: 'failed' },
      },
      { type: 'error', errorText: 'Claude is overloaded' },
    ]);

    const cut = new UiMessageStream({ turnId: TURN });
    const cutChunks = [
      ...cut.start(),
      ...failed.slice(0, 3).flatMap((e) => cut.push(e)),
      ...cut.end('aborted'),
    ];
    expect(cutChunks.slice(-2)).toEqual([
      { type: 'text-end', id: 'step-1' },
      { type: 'finish', finishReason: 'other', messageMetadata: { turnId: TURN, offset: 3 } },
    ]);
    const read2 = await read(cutChunks);
    expect(read2.errors).toEqual([]);
    expect(read2.message.parts.find((p) => p.type === 'text')).toMatchObject({ text: 'Work', state: 'done' });

    expect(new UiMessageStream({ turnId: TURN }).end('aborted')).toEqual([
      { type: 'finish', finishReason: 'other', messageMetadata: { turnId: TURN, offset: 0 } },
    ]);
  });
});
