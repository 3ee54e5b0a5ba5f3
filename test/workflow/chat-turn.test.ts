/**
 * The rules of the chat-turn loop (workflows/chat-turn.ts), one test each, against the real workflow
 * on the shared dev server with scripted activities (test/support/scripted-activities.ts): what the
 * turn returns, and what Claude was sent. The same turns end to end, over HTTP and real MCP
 * servers, are in test/integration/chat-turn.e2e.test.ts.
 */
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { SA_BATCH } from '../../src/core/search-attributes';
import type { ContentBlockParam, MessageParam } from '../../src/core/contracts';
import { CONTEXT_WINDOW_ANSWER, GATHER_SYSTEM_PROMPT } from '../../src/core/prompts';
import { turnProgressQuery } from '../../src/core/workflow-handlers';
import { until } from '../support/until';
import { failureOf } from '../support/workflow-failure';
import { DEFAULT_MODEL } from '../../src/core/resolve-turn';
import type { ChatTurnInput } from '../../src/schemas/turn-input';
import { ZERO_USAGE } from '../../src/core/usage';
import {
  FAST_TOOL_POLICY,
  reply,
  startScriptedTurns,
  text,
  toolUse,
  type ClaudeFailure,
  type ScriptedTool,
  type ScriptedTurns,
} from '../support/scripted-activities';

jest.setTimeout(30_000);

const search: ScriptedTool = { server: 'kb', name: 'search', result: (args) => `found ${String(args.q)}` };
const fetchDoc: ScriptedTool = {
  server: 'kb',
  name: 'fetch',
  result: (args) => `document ${String(args.id)}`,
};
const tools = [search, fetchDoc];
const promptTooLong: ClaudeFailure = {
  fail: {
    type: 'ClaudePromptTooLong',
    message: 'prompt is too long: 250000 tokens > 200000 maximum',
    nonRetryable: true,
  },
};
/** Never settles: the scripted call waits until it is cancelled. */
const forever = new Promise<never>(() => undefined);

let turns: ScriptedTurns;
beforeAll(async () => {
  turns = await startScriptedTurns();
});
afterAll(async () => {
  await turns?.close();
});

type ToolResultBlock = Extract<ContentBlockParam, { type: 'tool_result' }>;

/** The tool_result blocks of a user message. */
function toolResults(message: MessageParam | undefined): ToolResultBlock[] {
  if (!message || message.role !== 'user' || typeof message.content === 'string')
    throw new Error(`not a tool-result message: ${JSON.stringify(message)}`);
  return message.content.filter((b): b is ToolResultBlock => b.type === 'tool_result');
}

/** The text of a tool_result. */
function resultText(block: ToolResultBlock | undefined): string {
  const content = block?.content;
  if (typeof content === 'string') return content;
  return (content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('stop reasons', () => {
  it('completed: a reply without tool_use ends the turn; the formatter is sent the whole conversation', async () => {
    const t = await turns.run(
      { question: 'hi' },
      { tools, claude: [reply([text('hello')])], formatter: { text: 'Hello!' } },
    );
    expect(t.result).toMatchObject({
      stopReason: 'completed',
      steps: 1,
      toolCalls: [],
      formatMode: 'forced',
      model: DEFAULT_MODEL,
    });
    expect(t.result.response.conversation).toBe('Hello!');
    expect(t.claude).toHaveLength(1);
    expect(t.claude[0]).toMatchObject({
      step: 1,
      model: DEFAULT_MODEL,
      maxTokens: 4096,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(t.claude[0]!.tools.map((tool) => tool.name)).toEqual(['kb__search', 'kb__fetch']);
    const conversation = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [text('hello')] },
    ];
    expect(t.formatter.map((f) => f.messages)).toEqual([conversation]);
    expect(t.result.messages).toEqual(conversation);
  });

  it('max_steps: stops between whole steps, every tool_use answered by its tool_result', async () => {
    const t = await turns.run(
      { question: 'loop', maxSteps: 2 },
      { tools, claude: [0, 1, 2].map((i) => reply([toolUse('kb__search', { q: `q${i}` })])) },
    );
    expect(t.result).toMatchObject({ stopReason: 'max_steps', steps: 2 });
    expect(t.result.toolCalls.map((c) => c.input)).toEqual([{ q: 'q0' }, { q: 'q1' }]);
    expect(t.claude).toHaveLength(2);
    expect(t.toolCalls).toHaveLength(2);
    const sent = t.formatter[0]!.messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    const lastUse = (sent[3]!.content as Array<{ id: string }>)[0]!.id;
    expect(toolResults(sent[4]).map((r) => [r.tool_use_id, resultText(r)])).toEqual([[lastUse, 'found q1']]);
  });

  it('max_tool_calls: calls beyond the turn budget are answered "not run" as errors, never run, and the turn stops', async () => {
    const t = await turns.run(
      { question: 'many', maxToolCalls: 2 },
      {
        tools,
        claude: [
          reply([toolUse('kb__search', { q: 'a' })]),
          reply([toolUse('kb__search', { q: 'b' }), toolUse('kb__fetch', { id: 'c' })]),
          reply([text('unreached')]),
        ],
      },
    );
    expect(t.result).toMatchObject({ stopReason: 'max_tool_calls', steps: 2 });
    expect(t.toolCalls.map((c) => c.arguments)).toEqual([{ q: 'a' }, { q: 'b' }]);
    expect(t.result.toolCalls.map((c) => [c.name, c.isError, c.attempts])).toEqual([
      ['kb__search', false, 1],
      ['kb__search', false, 1],
      ['kb__fetch', true, 0],
    ]);
    expect(t.result.toolCalls[2]!.error).toMatch(/not run.*budget \(2\)/);
    const results = toolResults(t.formatter[0]!.messages[4]);
    expect(results.map((r) => r.is_error ?? false)).toEqual([false, true]);
    expect(resultText(results[1])).toMatch(/not run.*budget \(2\)/);
  });

  it('max_tool_calls: a budget used up exactly stops the turn after that step', async () => {
    const t = await turns.run(
      { question: 'one', maxToolCalls: 1 },
      { tools, claude: [reply([toolUse('kb__search', { q: 'a' })]), reply([text('unreached')])] },
    );
    expect(t.result).toMatchObject({ stopReason: 'max_tool_calls', steps: 1 });
    expect(t.result.toolCalls.map((c) => [c.isError, c.attempts])).toEqual([[false, 1]]);
    expect(t.claude).toHaveLength(1);
  });

  it('max_tokens: the turn token budget, reached after a step, stops the turn between steps', async () => {
    const usage = { inputTokens: 100, outputTokens: 20 }; // 120 a call: the budget of 200 is passed by the second
    const t = await turns.run(
      { question: 'tokens', maxTokens: 200 },
      {
        tools,
        claude: [
          reply([toolUse('kb__search', { q: '1' })], { usage }),
          reply([toolUse('kb__search', { q: '2' })], { usage }),
          reply([text('unreached')], { usage }),
        ],
      },
    );
    expect(t.result).toMatchObject({ stopReason: 'max_tokens', steps: 2 });
    expect(t.claude).toHaveLength(2);
    expect(toolResults(t.formatter[0]!.messages[4]).map(resultText)).toEqual(['found 2']);
  });

  it('max_tokens: a reply cut inside a tool_use twice keeps its text and drops the unfinished call', async () => {
    const cut = reply([text('I was saying'), toolUse('kb__search', { q: 'unfinished' })], {
      stopReason: 'max_tokens',
    });
    const t = await turns.run({ question: 'long', format: false }, { tools, claude: [cut, cut] });
    expect(t.result).toMatchObject({ stopReason: 'max_tokens', steps: 1, toolCalls: [] });
    expect(t.result.response.conversation).toBe('I was saying');
    expect(t.toolCalls).toEqual([]);
    expect(t.result.messages).toEqual([
      { role: 'user', content: 'long' },
      { role: 'assistant', content: [text('I was saying')] },
    ]);
  });

  it('repeated_call: the same tool with the same arguments gets the earlier result, is not run again, and the turn stops', async () => {
    const t = await turns.run(
      { question: 'twice' },
      {
        tools,
        claude: [
          reply([toolUse('kb__search', { q: 'x', limit: 1 })]),
          reply([toolUse('kb__search', { limit: 1, q: 'x' })]),
          reply([text('unreached')]),
        ],
      },
    );
    expect(t.result).toMatchObject({ stopReason: 'repeated_call', steps: 2 });
    expect(t.toolCalls).toHaveLength(1);
    expect(t.result.toolCalls.map((c) => [!!c.repeated, c.attempts, c.isError])).toEqual([
      [false, 1, false],
      [true, 0, false],
    ]);
    const [again] = toolResults(t.formatter[0]!.messages[4]);
    expect(again!.is_error ?? false).toBe(false);
    expect(resultText(again)).toMatch(/^\(Repeated call: .*not run again\.\)\nfound x$/s);
  });

  it('refusal: the turn stops, the refusal is the answer, and the formatter is not called', async () => {
    const t = await turns.run(
      { question: 'bad idea' },
      { tools, claude: [reply([text('I can’t help with that.')], { stopReason: 'refusal' })] },
    );
    expect(t.result).toMatchObject({ stopReason: 'refusal', steps: 1 });
    expect(t.result.formatMode).toBeUndefined();
    expect(t.result.response.conversation).toBe('I can’t help with that.');
    expect(t.formatter).toEqual([]);
  });

  describe('context_window: the context is exhausted and nothing is left to compact', () => {
    it('a prompt the API refuses as too long completes the turn with context_window; the formatter is not called', async () => {
      const t = await turns.run({ question: 'too big' }, { tools, claude: [promptTooLong, reply([text('unreached')])] });
      expect(t.result).toMatchObject({ stopReason: 'context_window', steps: 1, toolCalls: [] });
      expect(t.result.formatMode).toBeUndefined();
      expect(t.result.response.conversation).toBe(CONTEXT_WINDOW_ANSWER);
      expect(t.result.response.conversation).not.toContain('\n');
      expect(t.claude).toHaveLength(1);
      expect(t.formatter).toEqual([]);
      expect(t.result.messages).toEqual([
        { role: 'user', content: 'too big' },
        { role: 'assistant', content: CONTEXT_WINDOW_ANSWER },
      ]);
    });

    it('a reply stopped by model_context_window_exceeded completes the turn with context_window, its unfinished tool_use dropped', async () => {
      const cut = reply([text('Let me look'), toolUse('kb__search', { q: 'x' })], { stopReason: 'model_context_window_exceeded' });
      const t = await turns.run({ question: 'too big' }, { tools, claude: [cut, reply([text('unreached')])] });
      expect(t.result).toMatchObject({ stopReason: 'context_window', steps: 1, toolCalls: [] });
      expect(t.result.response.conversation).toBe(CONTEXT_WINDOW_ANSWER);
      expect(t.claude).toHaveLength(1);
      expect(t.toolCalls).toEqual([]);
      expect(t.formatter).toEqual([]);
      expect(t.result.messages).toEqual([
        { role: 'user', content: 'too big' },
        { role: 'assistant', content: [text('Let me look')] },
      ]);
    });

    it('its usage counts the call that ran out of context', async () => {
      const usage = { inputTokens: 190_000, outputTokens: 12 };
      const t = await turns.run(
        { question: 'too big' },
        { tools, claude: [reply([text('cut')], { stopReason: 'model_context_window_exceeded', usage })] },
      );
      expect(t.result.stopReason).toBe('context_window');
      expect(t.result.usage).toMatchObject(usage);
    });
  });

  it('a failed Claude call fails the turn, naming the step', async () => {
    const t = await turns.start(
      { question: 'q' },
      {
        tools,
        claude: [
          reply([toolUse('kb__search', { q: 'a' })]),
          { fail: { type: 'ClaudeBadRequest', message: 'messages.0: bad', nonRetryable: true } },
        ],
      },
    );
    const failure = await failureOf(t.result());
    expect(failure.type).toBe('ClaudeBadRequest');
    expect(failure.message).toMatch(/^Claude call failed at step 2: messages\.0: bad/);
    expect(t.formatter).toEqual([]);
  });
});

describe('asking the same step again', () => {
  it('a reply cut inside a tool_use is asked again once with max_tokens doubled; the next step starts from the default again', async () => {
    const content = [text('calling'), toolUse('kb__search', { q: 'long' })];
    const t = await turns.run(
      { question: 'q' },
      {
        tools,
        claude: [reply(content, { stopReason: 'max_tokens' }), reply(content), reply([text('done')])],
      },
    );
    expect(t.claude.map((r) => [r.step, r.maxTokens])).toEqual([
      [1, 4096],
      [1, 8192],
      [2, 4096],
    ]);
    expect(t.result).toMatchObject({ stopReason: 'completed', steps: 2 });
    expect(t.toolCalls).toHaveLength(1);
    // The cut reply is not in the conversation: only the whole one is.
    expect(t.claude[2]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('the raised max_tokens is capped at 64000', async () => {
    const cut = reply([toolUse('kb__search', { q: 'long' })], { stopReason: 'max_tokens' });
    const t = await turns.run(
      { question: 'q', maxTokensPerCall: 40_000, format: false },
      { tools, claude: [cut, cut] },
    );
    expect(t.claude.map((r) => r.maxTokens)).toEqual([40_000, 64_000]);
    expect(t.result.stopReason).toBe('max_tokens');
  });

  // Prior history: the oldest half reaches into a tool_use/tool_result pair, so the cut moves on to q3.
  const history: NonNullable<ChatTurnInput['history']> = [
    { role: 'user', content: 'q1' },
    { role: 'assistant', content: 'a1' },
    { role: 'user', content: 'q2' },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_old', name: 'kb__search', input: { q: 'old' } }],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_old', content: 'found old' }] },
    { role: 'assistant', content: 'a2' },
    { role: 'user', content: 'q3' },
    { role: 'assistant', content: 'a3' },
  ];
  const now = { role: 'user' as const, content: 'now' };
  const marker = [{ type: 'text', text: '[tool result removed to fit the context window (9 characters)]' }];
  const withMarker = history.map((m) =>
    m.role === 'user' && Array.isArray(m.content) ? { ...m, content: [{ ...m.content[0], content: marker }] } : m,
  );

  it('a prompt too long compacts the prior history a stage at a time: older turns dropped, recent tool results replaced, then a turn at a time; never splitting a tool pair', async () => {
    const t = await turns.run(
      { question: 'now', history, format: false },
      { tools, claude: [promptTooLong, promptTooLong, promptTooLong, promptTooLong, reply([text('fits now')])] },
    );
    // Two recent turns are kept (q2 with its tool pair, q3): the first compaction drops q1's turn.
    expect(t.claude.map((r) => r.messages)).toEqual([
      [...history, now],
      [...history.slice(2), now],
      [...withMarker.slice(2), now],
      [...withMarker.slice(6), now],
      [now],
    ]);
    expect(t.result).toMatchObject({ stopReason: 'completed', steps: 1, compaction: { toolResultsReplaced: 1, messagesDropped: 8, stages: 4 } });
    expect(t.result.response.conversation).toBe('fits now');
    expect(t.result.messages).toEqual([now, { role: 'assistant', content: [text('fits now')] }]);
  });

  it("the turn's compaction policy: with no recent turns kept, every old tool result is replaced before anything is dropped", async () => {
    const t = await turns.run(
      { question: 'now', history, format: false, compaction: { keepRecentTurns: 0 } },
      { tools, claude: [reply([], { stopReason: 'model_context_window_exceeded' }), reply([text('fits now')])] },
    );
    expect(t.claude[1]!.messages).toEqual([...withMarker, now]);
    expect(t.result.compaction).toEqual({ toolResultsReplaced: 1, messagesDropped: 0, stages: 1 });
    expect(t.result.messages).toEqual([...withMarker, now, { role: 'assistant', content: [text('fits now')] }]);
  });

  it('a prompt still too long with all prior history compacted away completes the turn with context_window', async () => {
    const t = await turns.run(
      { question: 'now', history },
      { tools, claude: [promptTooLong, promptTooLong, promptTooLong, promptTooLong, promptTooLong, reply([text('unreached')])] },
    );
    expect(t.claude).toHaveLength(5);
    expect(t.claude[4]!.messages).toEqual([now]);
    expect(t.result).toMatchObject({ stopReason: 'context_window', compaction: { stages: 4 } });
    expect(t.result.response.conversation).toBe(CONTEXT_WINDOW_ANSWER);
    expect(t.formatter).toEqual([]);
  });

  it('pause_turn: the reply is sent back as-is and the loop continues without a tool round', async () => {
    const t = await turns.run(
      { question: 'q', format: false },
      {
        tools,
        claude: [reply([text('working on it')], { stopReason: 'pause_turn' }), reply([text('finished')])],
      },
    );
    expect(t.claude[1]!.messages).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [text('working on it')] },
    ]);
    expect(t.toolCalls).toEqual([]);
    expect(t.result).toMatchObject({ stopReason: 'completed', steps: 2 });
    expect(t.result.response.conversation).toBe('finished');
  });
});

describe('tool rounds', () => {
  it('runs the tool calls of one step in parallel and answers them in one user message, in tool_use order', async () => {
    // The first call finishes only after the second has run (or after 3 s, if the calls ran one by one).
    let secondRan!: () => void;
    const hold = Promise.race([
      new Promise<void>((r) => (secondRan = r)),
      new Promise((r) => setTimeout(r, 3_000).unref()),
    ]);
    const slowSearch: ScriptedTool = { ...search, hold };
    const fetchThenRelease: ScriptedTool = {
      ...fetchDoc,
      result: (args) => {
        secondRan();
        return `document ${String(args.id)}`;
      },
    };
    const t = await turns.run(
      { question: 'both' },
      {
        tools: [slowSearch, fetchThenRelease],
        claude: [
          reply([toolUse('kb__search', { q: 's' }, 'use_1'), toolUse('kb__fetch', { id: 'f' }, 'use_2')]),
          reply([text('done')]),
        ],
      },
    );
    const [slow, fast] = t.toolCalls.sort((a, b) => a.toolUseId.localeCompare(b.toolUseId));
    expect(fast!.startedAt).toBeLessThan(slow!.endedAt!); // started while the other ran
    expect(fast!.endedAt!).toBeLessThan(slow!.endedAt!); // so tool_use order is not completion order
    const sent = t.claude[1]!.messages;
    expect(sent).toHaveLength(3);
    expect(toolResults(sent[2]).map((r) => [r.tool_use_id, resultText(r)])).toEqual([
      ['use_1', 'found s'],
      ['use_2', 'document f'],
    ]);
    expect(t.result.toolCalls.map((c) => [c.id, c.step, c.server, c.tool])).toEqual([
      ['use_1', 1, 'kb', 'search'],
      ['use_2', 1, 'kb', 'fetch'],
    ]);
  });

  it('an unknown tool name gets an is_error result listing the available tools, and nothing runs', async () => {
    const t = await turns.run(
      { question: 'q' },
      { tools, claude: [reply([toolUse('nowhere__missing', { q: 1 })]), reply([text('sorry')])] },
    );
    const expected = 'Unknown tool "nowhere__missing". Available tools: kb__search, kb__fetch.';
    expect(t.result.toolCalls).toEqual([
      expect.objectContaining({ name: 'nowhere__missing', isError: true, attempts: 0, error: expected }),
    ]);
    expect(t.result.toolCalls[0]!.server).toBeUndefined();
    expect(t.toolCalls).toEqual([]);
    const [result] = toolResults(t.claude[1]!.messages[2]);
    expect(result!.is_error).toBe(true);
    expect(resultText(result)).toBe(expected);
    expect(t.result.stopReason).toBe('completed');
  });

  it('a tool failing after its retries becomes an is_error result for Claude, and its record keeps the error', async () => {
    const flaky: ScriptedTool = { server: 'flaky', name: 'fetch', fail: { message: 'backend down' } };
    const policy = {
      localTools: [],
      startToCloseTimeoutMs: 5_000,
      heartbeatTimeoutMs: 2_000,
      retry: { maximumAttempts: 2, initialIntervalMs: 10, backoffCoefficient: 1, maximumIntervalMs: 10 },
    };
    const t = await turns.run(
      { question: 'q' },
      {
        tools: [flaky],
        policies: { flaky: policy },
        claude: [reply([toolUse('flaky__fetch', { id: 1 })]), reply([text('it failed')])],
      },
    );
    expect(t.toolCalls.map((c) => [c.attempt, c.outcome])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
    ]);
    expect(t.result.toolCalls).toEqual([
      expect.objectContaining({ server: 'flaky', tool: 'fetch', isError: true, attempts: 2 }),
    ]);
    expect(t.result.toolCalls[0]!.error).toMatch(/backend down/);
    const [result] = toolResults(t.claude[1]!.messages[2]);
    expect(result!.is_error).toBe(true);
    expect(resultText(result)).toMatch(/flaky.*fetch.*failed.*backend down/);
    expect(t.result).toMatchObject({ stopReason: 'completed', steps: 2 });
  });

  it('a tool its listing names local runs as a local activity: one workflow task per round, its summary on the marker, retries and records as for an activity', async () => {
    const flaky: ScriptedTool = { server: 'kb', name: 'flaky', fail: { message: 'backend down' } };
    const t = await turns.start(
      { question: 'q' },
      {
        tools: [search, flaky],
        policies: { kb: { ...FAST_TOOL_POLICY, localTools: ['search', 'flaky'] } },
        claude: [
          reply([toolUse('kb__search', { q: 'one' })]),
          reply([toolUse('kb__search', { q: 'two' }), toolUse('kb__flaky', {})]),
          reply([text('done')]),
        ],
        formatter: {},
      },
    );
    const result = await t.result();
    expect(result.toolCalls.map((c) => [c.tool, c.isError, c.attempts])).toEqual([
      ['search', false, 1],
      ['search', false, 1],
      ['flaky', true, 2],
    ]);
    expect(resultText(toolResults(t.claude[1]!.messages[2])[0])).toBe('found one');
    expect(t.toolCalls.map((c) => `${c.tool} ${c.attempt} ${c.outcome}`).sort()).toEqual(['flaky 1 failed', 'flaky 2 failed', 'search 1 ok', 'search 1 ok']);
    const { events } = await t.handle.fetchHistory();
    const scheduled = events!.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType!.name] : []));
    expect(scheduled).toEqual(['claude', 'claude', 'claude', 'formatResponse']);
    const summaries = events!
      .filter((e) => e.markerRecordedEventAttributes)
      .map((e) => defaultPayloadConverter.fromPayload(e.userMetadata!.summary!));
    expect(summaries).toEqual(['check input, list tools', 'kb · search', 'kb · search', 'kb · flaky']);
    // A round is one workflow task: the one that read Claude's reply ran the calls and scheduled the next step.
    const tasks = events!.filter((e) => e.workflowTaskCompletedEventAttributes).length;
    expect(tasks).toBe(5);
  });

  it("a worker that caps Claude calls per worker only runs an unstreamed turn's Claude calls on the turn's own queue; another worker's stay on the Claude queue", async () => {
    const script = (claudeOnTurnQueue: boolean) => ({
      tools: [search],
      workerDefaults: { claudeOnTurnQueue },
      claude: [reply([toolUse('kb__search', { q: 'one' })]), reply([text('done')])],
      formatter: {},
    });
    const queues = async (workflowId: string): Promise<string[]> => {
      const { events } = await turns.client.workflow.getHandle(workflowId).fetchHistory();
      return events!.flatMap((e) => {
        const a = e.activityTaskScheduledEventAttributes;
        return a && a.activityType!.name !== 'callTool' ? [`${a.activityType!.name} ${a.taskQueue!.name}`] : [];
      });
    };
    const [onTurnQueue, onClaudeQueue] = await Promise.all([turns.run({ question: 'q' }, script(true)), turns.run({ question: 'q' }, script(false))]);
    expect([onTurnQueue.result.stopReason, onClaudeQueue.result.stopReason]).toEqual(['completed', 'completed']);
    const own = turns.taskQueue;
    expect(await queues(onTurnQueue.workflowId)).toEqual([`claude ${own}`, `claude ${own}`, `formatResponse ${own}`]);
    expect(await queues(onClaudeQueue.workflowId)).toEqual([`claude ${own}-claude`, `claude ${own}-claude`, `formatResponse ${own}-claude`]);
  });

  it("a batch's turn runs a tool the worker has not seen yet locally; another turn runs it as an activity of its own", async () => {
    const script = () => ({
      tools: [search],
      policies: { kb: { ...FAST_TOOL_POLICY, localTools: [], unseenTools: ['search'] } },
      claude: [reply([toolUse('kb__search', { q: 'new' })]), reply([text('done')])],
      formatter: {},
    });
    const scheduled = async (workflowId: string): Promise<string[]> => {
      const { events } = await turns.client.workflow.getHandle(workflowId).fetchHistory();
      return events!.flatMap((e) => [
        ...(e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType!.name!] : []),
        ...(e.markerRecordedEventAttributes ? [`local ${defaultPayloadConverter.fromPayload<string>(e.userMetadata!.summary!)}`] : []),
      ]);
    };
    const batchId = `batch-child-${Date.now()}`;
    turns.expect(batchId, script());
    const child = await turns.client.workflow.start('chatTurn', {
      taskQueue: turns.taskQueue,
      workflowId: batchId,
      args: [{ question: 'in a batch' }],
      typedSearchAttributes: [{ key: SA_BATCH, value: 'b1' }],
    });
    await child.result();
    expect(await scheduled(batchId)).toEqual(['local check input, list tools', 'claude', 'local kb · search', 'claude', 'formatResponse']);
    const alone = await turns.start({ question: 'alone' }, script());
    await alone.result();
    expect(await scheduled(alone.workflowId)).toEqual(['local check input, list tools', 'claude', 'callTool', 'claude', 'formatResponse']);
  });

  it("a tool's own error result reaches Claude as is_error after one attempt", async () => {
    const broken: ScriptedTool = { server: 'kb', name: 'broken', isError: true, result: 'no such document' };
    const t = await turns.run(
      { question: 'q' },
      { tools: [broken], claude: [reply([toolUse('kb__broken')]), reply([text('ok')])] },
    );
    expect(t.result.toolCalls).toEqual([
      expect.objectContaining({ isError: true, attempts: 1, error: 'no such document' }),
    ]);
    const [result] = toolResults(t.claude[1]!.messages[2]);
    expect([result!.is_error, resultText(result)]).toEqual([true, 'no such document']);
  });
});

describe('loop policy, formatter and model', () => {
  it('gather-then-format continues only while Claude says NEED MORE DATA', async () => {
    const t = await turns.run(
      { question: 'gather', loopPolicy: 'gather-then-format', system: 'Be brief.' },
      {
        tools,
        claude: [
          reply([text('NEED MORE DATA: the document too.'), toolUse('kb__search', { q: 'g' })]),
          reply([text('That is all I need.'), toolUse('kb__fetch', { id: 'g' })]),
          reply([toolUse('kb__search', { q: 'never' })]),
        ],
      },
    );
    expect(t.result).toMatchObject({ stopReason: 'completed', steps: 2 });
    expect(t.result.toolCalls.map((c) => c.name)).toEqual(['kb__search', 'kb__fetch']);
    expect(t.claude[0]!.system).toBe(`${GATHER_SYSTEM_PROMPT}\n\nBe brief.`);
    expect(t.formatter[0]!.system).toBe('Be brief.');
    expect(t.formatter[0]!.messages).toHaveLength(5);
  });

  it('format: false makes no formatter call; the last text is the answer', async () => {
    const t = await turns.run(
      { question: 'q', format: false },
      {
        tools,
        claude: [reply([text('looking'), toolUse('kb__search', { q: 'a' })]), reply([text('the answer')])],
      },
    );
    expect(t.formatter).toEqual([]);
    expect(t.result.formatMode).toBeUndefined();
    expect(t.result.response.conversation).toBe('the answer');
  });

  it("uses the worker's default model when the input names none, and the input's when it does", async () => {
    const script = { tools, workerDefaults: { model: 'worker-default' }, claude: [reply([text('hi')])] };
    const [unnamed, named] = await Promise.all([
      turns.run({ question: 'q' }, script),
      turns.run({ question: 'q', model: 'named-model' }, script),
    ]);
    expect([unnamed.result.model, unnamed.claude[0]!.model, unnamed.formatter[0]!.model]).toEqual([
      'worker-default',
      'worker-default',
      'worker-default',
    ]);
    expect([named.result.model, named.claude[0]!.model, named.formatter[0]!.model]).toEqual([
      'named-model',
      'named-model',
      'named-model',
    ]);
    const described = await turns.client.workflow.getHandle(unnamed.workflowId).describe();
    expect(described.searchAttributes.McpTurnsModel).toEqual(['worker-default']);
  });

  it('unavailable servers are named in the system prompt and in the result', async () => {
    const t = await turns.run(
      { question: 'q', format: false },
      {
        tools: [],
        unavailable: [{ server: 'web', reason: 'connect failed' }],
        unknownServers: ['ghost'],
        claude: [reply([text('no tools')])],
      },
    );
    expect(t.claude[0]!.system).toMatch(
      /unavailable.*web \(connect failed\), ghost \(not configured on the worker\)/,
    );
    expect(t.claude[0]!.tools).toEqual([]);
    expect(t.result.unavailableServers).toEqual([
      { server: 'web', reason: 'connect failed' },
      { server: 'ghost', reason: 'not configured on the worker' },
    ]);
    expect(t.result.response.conversation).toBe(
      'no tools\n\n_Tools unavailable for this answer: web (connect failed), ghost (not configured on the worker)._',
    );
  });

  it('sums usage and cost over every call, the formatter included', async () => {
    const t = await turns.run(
      { question: 'q' },
      {
        tools,
        claude: [
          reply([toolUse('kb__search', { q: 'a' })], {
            usage: {
              inputTokens: 100,
              outputTokens: 10,
              cacheReadInputTokens: 5,
              cacheCreationInputTokens: 7,
            },
            costUsd: 0.001,
          }),
          reply([text('done')], {
            usage: {
              inputTokens: 200,
              outputTokens: 20,
              cacheReadInputTokens: 50,
              cacheCreationInputTokens: 0,
            },
            costUsd: 0.002,
          }),
        ],
        formatter: {
          usage: { inputTokens: 30, outputTokens: 40, cacheReadInputTokens: 0, cacheCreationInputTokens: 1 },
          costUsd: 0.0005,
        },
      },
    );
    expect(t.result.usage).toEqual({
      inputTokens: 330,
      outputTokens: 70,
      cacheReadInputTokens: 55,
      cacheCreationInputTokens: 8,
    });
    expect(t.result.costUsd).toBeCloseTo(0.0035, 10);
    const described = await turns.client.workflow.getHandle(t.workflowId).describe();
    expect(described.searchAttributes.McpTurnsOutputTokens).toEqual([70]);
    expect(described.searchAttributes.McpTurnsCostUsd?.[0]).toBeCloseTo(0.0035, 10);
  });
});

describe('input, progress and cancellation', () => {
  it('fails a bad input at once, non-retryably, with InvalidTurnInput naming every bad field; no activity runs', async () => {
    const bad = {
      question: '  ',
      maxSteps: 0,
      loopPolicy: 'loop',
      serverz: ['x'],
    } as unknown as ChatTurnInput;
    const t = await turns.start(bad, { tools, claude: [reply([text('unreached')])] });
    const failure = await failureOf(t.result());
    expect(failure.type).toBe('InvalidTurnInput');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(/question: question must not be empty/);
    expect(failure.message).toMatch(/maxSteps: /);
    expect(failure.message).toMatch(/loopPolicy: /);
    expect(failure.message).toMatch(/serverz/);
    expect(failure.details).toHaveLength(4);
    expect(t.prepared).toBe(1);
    expect([t.claude, t.toolCalls, t.formatter]).toEqual([[], [], []]);
    const { events } = await t.handle.fetchHistory();
    expect(events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
  });

  it('progress query: answered right after start; reports running, ok and error tool calls and the usage so far', async () => {
    let answer!: () => void;
    let finishSlow!: () => void;
    const claudeAnswers = new Promise<void>((r) => (answer = r));
    const slowDone = new Promise<void>((r) => (finishSlow = r));
    const usage = { inputTokens: 50, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
    const t = await turns.start(
      { question: 'progress' },
      {
        tools: [
          search,
          { server: 'kb', name: 'broken', isError: true },
          { server: 'kb', name: 'slow', hold: slowDone },
        ],
        claude: [
          reply(
            [
              toolUse('kb__search', { q: 'p' }, 'p_ok'),
              toolUse('kb__broken', {}, 'p_error'),
              toolUse('kb__slow', {}, 'p_running'),
            ],
            { usage, costUsd: 0.01, hold: claudeAnswers },
          ),
          reply([text('done')], { usage }),
        ],
        formatter: { usage },
      },
    );
    const first = await t.handle.query(turnProgressQuery);
    expect(first).toMatchObject({ toolCalls: [], usage: ZERO_USAGE, costUsd: 0 });
    answer();
    const statuses = async (): Promise<Record<string, string>> =>
      Object.fromEntries((await t.handle.query(turnProgressQuery)).toolCalls.map((c) => [c.id, c.status]));
    await until(
      async () => Object.keys(await statuses()).length === 3 && (await statuses()).p_error === 'error',
      'two calls to finish',
    );
    const during = await t.handle.query(turnProgressQuery);
    expect(during).toMatchObject({ phase: 'calling-tools', step: 1, usage, costUsd: 0.01 });
    expect(await statuses()).toEqual({ p_ok: 'ok', p_error: 'error', p_running: 'running' });
    finishSlow();
    await t.result();
    const done = await t.handle.query(turnProgressQuery);
    expect(done).toMatchObject({
      phase: 'done',
      step: 2,
      usage: { ...usage, inputTokens: 150, outputTokens: 15 },
    });
    expect(await statuses()).toEqual({ p_ok: 'ok', p_error: 'error', p_running: 'ok' });
  });

  it('cancelled during a Claude call: the run ends CANCELLED and the call is cancelled', async () => {
    const t = await turns.start(
      { question: 'cancel me' },
      { tools, claude: [reply([text('too late')], { hold: forever })] },
    );
    await until(() => t.claude.length === 1, 'the Claude call');
    await t.handle.cancel();
    const err = await t.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect((await t.handle.describe()).status.name).toBe('CANCELLED');
    await until(() => t.claude[0]!.outcome === 'cancelled', 'the Claude activity to see the cancel');
    expect(t.formatter).toEqual([]);
  });

  it('cancelled during a tool call: the run ends CANCELLED, not a tool error handed to Claude', async () => {
    const stuck: ScriptedTool = { server: 'kb', name: 'stuck', hold: forever };
    const t = await turns.start(
      { question: 'cancel me' },
      { tools: [stuck], claude: [reply([toolUse('kb__stuck')]), reply([text('unreached')])] },
    );
    await until(() => t.toolCalls.length === 1, 'the tool call');
    await t.handle.cancel();
    const err = await t.result().catch((e: unknown) => e);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect((await t.handle.describe()).status.name).toBe('CANCELLED');
    await until(() => t.toolCalls[0]!.outcome === 'cancelled', 'the tool activity to see the cancel');
    // The cancelled call was not handed back as a result: the turn never went on to another step.
    expect(await t.handle.query(turnProgressQuery)).toMatchObject({ phase: 'calling-tools', step: 1 });
    expect(t.claude).toHaveLength(1);
    expect(t.formatter).toEqual([]);
  });
});
