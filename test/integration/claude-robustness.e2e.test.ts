/**
 * Claude calls under everything the real API does, through the real SDK to the stub's fault
 * injection, on the real dev server: retries owned by Temporal alone (retry-after honoured), final
 * errors that say what happened, stop reasons, thinking blocks, exact usage and cost, and a
 * per-worker cap on concurrent Claude calls under fan-out.
 */
import { WorkflowFailedError } from '@temporalio/client';
import type { Scenario } from '../../src/stub';
import { makePriceTable } from '../../src/claude/pricing';
import { describeFailure } from '../../src/client/describe-failure';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { fromApiUsage, addUsage, ZERO_USAGE } from '../../src/core/usage';
import { CONTEXT_WINDOW_ANSWER } from '../../src/core/prompts';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';

jest.setTimeout(120_000);

const text = (t: string) => ({ type: 'text' as const, text: t });
const echo = (message: string) => ({ type: 'tool_use' as const, name: 'everything__echo', input: { message } });
const done: Scenario['steps'] = [{ content: [text('done')] }];
const formatter = { conversation: [{ type: 'text', content: 'formatted: {{toolResults}}' }] };

const scenarios: Record<string, Scenario> = {
  overloaded: { steps: done, formatter, faults: [{ step: 0, status: 529, times: 2, retryAfter: 1 }] },
  'rate-limited': { steps: done, formatter, faults: [{ step: 0, status: 429, times: 1, retryAfter: 2 }] },
  'spend-cap': { steps: done, formatter, faults: [{ step: 0, status: 429, times: -1 }] },
  'bad-request': { steps: done, formatter, faults: [{ step: 0, status: 400, times: -1, message: 'messages.0: something the API dislikes' }] },
  unauthorized: { steps: done, formatter, faults: [{ step: 0, status: 401, times: -1 }] },
  'should-not-retry': { steps: done, formatter, faults: [{ step: 0, status: 503, times: -1, shouldRetry: false }] },
  paused: { steps: [{ content: [text('working on it…')], stopReason: 'pause_turn' }, { content: [text('finished after the pause')] }], formatter },
  'cut-tool-use': { steps: [{ content: [text('calling'), echo('long')], minMaxTokens: 5000 }, { content: [text('ok: {{toolResults}}')] }], formatter },
  'always-cut': { steps: [{ content: [text('I was saying'), echo('never')], minMaxTokens: 1_000_000 }], formatter },
  refusal: { steps: [{ content: [text('I can’t help with that.')], stopReason: 'refusal' }], formatter },
  'small-window': { steps: [{ content: [text('fits now')] }], formatter, contextWindowTokens: 150 },
  'tiny-window': { steps: [{ content: [text('never')] }], formatter, contextWindowTokens: 5 },
  thinking: {
    steps: [{ content: [{ type: 'thinking', thinking: 'I should echo first.' }, echo('thought')] }, { content: [{ type: 'thinking', thinking: 'Now answer.' }, text('answered: {{toolResults}}')] }],
    formatter,
  },
  'claude-sonnet-4-6': { steps: [{ content: [text('pricing'), echo('priced')] }, { content: [text('priced: {{toolResults}}')] }], formatter },
  'fan-out': { steps: [{ content: [text('hi')] }], formatter, latencyMs: 100 },
  'worker-default': { steps: [{ content: [text('from the worker default model')] }], formatter },
};

let h: TurnHarness;
beforeAll(async () => {
  h = await startTurnHarness({
    scenarios,
    servers: { everything: everythingStdio() },
    claude: { noRetryAfterDelayMs: 300, maxSpendCapAttempts: 3, maxConcurrentCalls: 5, model: 'worker-default' },
  });
});
afterAll(() => h?.close());

const calls = (model: string, kind: 'step' | 'formatter' = 'step') => h.stub.requests.filter((r) => r.scenario === model && r.kind === kind);

async function failure(model: string, question = 'q'): Promise<string> {
  const err = await h.run({ question, model }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  return describeFailure(err);
}

describe('retries belong to Temporal and honour retry-after', () => {
  it('529 twice with retry-after 1 → success on the third attempt, at least 1 s apart', async () => {
    const result = await h.run({ question: 'q', model: 'overloaded' });
    expect(result.stopReason).toBe('completed');
    const attempts = calls('overloaded');
    expect(attempts.map((r) => r.status)).toEqual([529, 529, 200]);
    expect(attempts[1]!.startedAt - attempts[0]!.endedAt).toBeGreaterThanOrEqual(950);
    expect(attempts[2]!.startedAt - attempts[1]!.endedAt).toBeGreaterThanOrEqual(950);
  });

  it('429 with retry-after 2 → one retry at least 2 s later', async () => {
    await h.run({ question: 'q', model: 'rate-limited' });
    const attempts = calls('rate-limited');
    expect(attempts.map((r) => r.status)).toEqual([429, 200]);
    expect(attempts[1]!.startedAt - attempts[0]!.endedAt).toBeGreaterThanOrEqual(1950);
  });

  it('429 without retry-after → a bounded number of attempts, then a clear failure', async () => {
    const message = await failure('spend-cap');
    expect(calls('spend-cap')).toHaveLength(3);
    expect(message).toMatch(/^Claude call failed at step 1: Claude API 429 rate_limit_error: .*\(request-id req_stub_\d+\); attempt 3 \(gave up: 429 without retry-after 3 times/);
  });

  it('400 → exactly one request, and the turn fails at once with the API message', async () => {
    const message = await failure('bad-request');
    expect(calls('bad-request')).toHaveLength(1);
    expect(message).toMatch(/^Claude call failed at step 1: Claude API 400 invalid_request_error: messages\.0: something the API dislikes \(request-id req_stub_\d+\); attempt 1$/);
  });

  it('401 → exactly one request, with a hint about the key', async () => {
    const message = await failure('unauthorized');
    expect(calls('unauthorized')).toHaveLength(1);
    expect(message).toMatch(/Claude API 401 authentication_error: invalid x-api-key - check ANTHROPIC_API_KEY/);
  });

  it('a key the API refuses (401) fails the turn at once, naming ANTHROPIC_API_KEY', async () => {
    const refusing = await startTurnHarness({ scenarios: { hello: { steps: done } }, servers: {}, stubApiKey: 'not-the-key-the-worker-has' });
    try {
      const started = Date.now();
      const err = await refusing.run({ question: 'q', model: 'hello' }).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(describeFailure(err)).toMatch(
        /^Claude call failed at step 1: Claude API 401 authentication_error: invalid x-api-key - check ANTHROPIC_API_KEY \(missing, mistyped or revoked key\) \(request-id req_stub_\d+\); attempt 1$/,
      );
      expect(refusing.stub.requests.map((r) => r.status)).toEqual([401]);
    } finally {
      await refusing.close();
    }
  });

  it('x-should-retry: false makes a 503 final', async () => {
    await failure('should-not-retry');
    expect(calls('should-not-retry')).toHaveLength(1);
  });
});

describe('stop reasons', () => {
  it('pause_turn: the reply goes back as-is and the turn continues', async () => {
    const result = await h.run({ question: 'q', model: 'paused' });
    expect(result.steps).toBe(2);
    const second = calls('paused')[1]!;
    expect(second.body.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'working on it…', citations: null }] });
    expect(result.stopReason).toBe('completed');
  });

  it('max_tokens inside a tool_use: asks once more with a larger max_tokens', async () => {
    const result = await h.run({ question: 'q', model: 'cut-tool-use' });
    const firstStep = calls('cut-tool-use').filter((r) => r.step === 0);
    expect(firstStep.map((r) => r.body.max_tokens)).toEqual([4096, 8192]);
    expect(result.toolCalls).toHaveLength(1);
    expect(result.stopReason).toBe('completed');
  });

  it('max_tokens again after the retry: stops with max_tokens and keeps what was said', async () => {
    const result = await h.run({ question: 'q', model: 'always-cut', format: false });
    expect(result.stopReason).toBe('max_tokens');
    expect(result.toolCalls).toHaveLength(0);
    expect(result.response.conversation).toBe('I was saying');
  });

  it('refusal: stops with refusal and skips the formatter', async () => {
    const result = await h.run({ question: 'q', model: 'refusal' });
    expect(result.stopReason).toBe('refusal');
    expect(result.response.conversation).toBe('I can’t help with that.');
    expect(calls('refusal', 'formatter')).toHaveLength(0);
  });

  it('context window overflow: compacts prior history (the oldest turn first here) and asks again', async () => {
    const history = [
      { role: 'user' as const, content: 'an old question '.repeat(20) },
      { role: 'assistant' as const, content: 'an old answer '.repeat(20) },
      { role: 'user' as const, content: 'a newer question' },
      { role: 'assistant' as const, content: 'a newer answer' },
    ];
    const result = await h.run({ question: 'now', model: 'small-window', history, format: false, servers: [] });
    expect(result.response.conversation).toBe('fits now');
    const [tooLong, trimmed] = calls('small-window');
    expect(tooLong!.status).toBe(400);
    expect(trimmed!.body.messages[0]).toEqual({ role: 'user', content: 'a newer question' });
    expect(trimmed!.status).toBe(200);
  });

  it('context window overflow with no prior history to compact: completes with context_window, without the formatter', async () => {
    const result = await h.run({ question: 'a question that can never fit', model: 'tiny-window' });
    expect(result.stopReason).toBe('context_window');
    expect(result.formatMode).toBeUndefined();
    expect(result.response.conversation).toBe(CONTEXT_WINDOW_ANSWER);
    expect(calls('tiny-window').map((c) => c.status)).toEqual([400]);
    expect(calls('tiny-window', 'formatter')).toEqual([]);
  });
});

it('passes thinking blocks back unchanged (the stub refuses altered ones) and formats without forcing', async () => {
  const result = await h.run({ question: 'q', model: 'thinking', thinking: { budgetTokens: 2048 } });
  expect(result.stopReason).toBe('completed');
  const second = calls('thinking')[1]!;
  expect(second.status).toBe(200);
  expect(second.body.messages[1].content[0]).toMatchObject({ type: 'thinking', thinking: 'I should echo first.', signature: expect.any(String) });
  expect(result.formatMode).toBe('auto');
  expect(calls('thinking', 'formatter')[0]!.body.tool_choice).not.toEqual({ type: 'tool', name: 'response_formatter' });
});

it('sums usage exactly over every answered call (formatter included) and prices it from the table', async () => {
  const workflowId = `priced-${Date.now()}`;
  const result = await h.run({ question: 'what does it cost?', model: 'claude-sonnet-4-6' }, workflowId);
  const answered = h.stub.requests.filter((r) => r.scenario === 'claude-sonnet-4-6' && r.status === 200);
  expect(answered.map((r) => r.kind)).toEqual(['step', 'step', 'formatter']);
  const expected = answered.reduce((u, r) => addUsage(u, fromApiUsage(r.usage!)), ZERO_USAGE);
  expect(result.usage).toEqual(expected);
  expect(result.usage.cacheCreationInputTokens + result.usage.cacheReadInputTokens).toBeGreaterThan(0);
  // The conversation breakpoint: step 2 reads back all that step 1 read or wrote (tools, system, question).
  const [s1, s2] = answered.filter((r) => r.kind === 'step').map((r) => r.usage!);
  expect(s2!.cache_read_input_tokens).toBe(s1!.cache_read_input_tokens + s1!.cache_creation_input_tokens);
  expect(s2!.cache_read_input_tokens).toBeGreaterThan(s1!.cache_read_input_tokens);
  const prices = makePriceTable();
  const cost = answered.reduce((c, r) => c + prices.costOf(fromApiUsage(r.usage!), 'claude-sonnet-4-6').usd, 0);
  expect(result.costUsd).toBeCloseTo(cost, 10);
  expect(result.costUsd).toBeGreaterThan(0);
  const described = await h.client.workflow.getHandle(workflowId).describe();
  expect(described.searchAttributes.McpTurnsCostUsd?.[0]).toBeCloseTo(result.costUsd, 10);
  expect(described.searchAttributes.McpTurnsOutputTokens?.[0]).toBe(result.usage.outputTokens);
});

it("uses the worker's claude.model for a turn that names no model", async () => {
  const workflowId = `default-model-${Date.now()}`;
  const result = await h.run({ question: 'which model?', format: false }, workflowId);
  expect(result.model).toBe('worker-default');
  expect(result.response.conversation).toBe('from the worker default model');
  const described = await h.client.workflow.getHandle(workflowId).describe();
  expect(described.searchAttributes.McpTurnsModel).toEqual(['worker-default']);
});

it('caps concurrent Claude calls per worker under a 100-turn fan-out', async () => {
  h.stub.reset();
  const handles = await Promise.all(
    Array.from({ length: 100 }, (_, i) => startChatTurn(h.client, { question: `fan-out ${i}`, model: 'fan-out' }, { taskQueue: h.taskQueue })),
  );
  const results = await Promise.all(handles.map((hd) => hd.result()));
  expect(results.every((r) => r.stopReason === 'completed')).toBe(true);
  expect(h.stub.requests.filter((r) => r.status === 200)).toHaveLength(200);
  expect(h.stub.maxConcurrent).toBeLessThanOrEqual(5);
  expect(h.stub.maxConcurrent).toBeGreaterThanOrEqual(4);
});

