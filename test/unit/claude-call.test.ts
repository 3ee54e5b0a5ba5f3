/** callClaude against the scripted stub model, through the real SDK. */
import type Anthropic from '@anthropic-ai/sdk';
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import type { ApplicationFailure } from '@temporalio/common';
import { callClaude } from '../../src/claude/call-claude';
import { createClaudeClient } from '../../src/claude/client';
import { makePriceTable } from '../../src/claude/pricing';
import type { ClaudeRequest, ContentBlock, MessageParam } from '../../src/core/contracts';
import { startStubModel, type StubModel } from '../../src/stub';

const echo: Tool = {
  name: 'everything__echo',
  description: 'echo',
  input_schema: { type: 'object', properties: { message: { type: 'string' } } },
};
const add: Tool = {
  name: 'everything__add',
  description: 'add',
  input_schema: { type: 'object', properties: { a: { type: 'number' } } },
};

let stub: StubModel;
let client: Anthropic;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      tools: {
        steps: [
          {
            content: [
              { type: 'thinking', thinking: 'I should echo' },
              { type: 'text', text: 'calling echo' },
              { type: 'tool_use', name: 'everything__echo', input: { message: 'hi' } },
            ],
          },
          { content: [{ type: 'text', text: 'echo said: {{lastToolResult}}' }] },
        ],
      },
      // The stub counts faults per status, so the second kind of 429 needs its own scenario.
      spendCap: {
        steps: [{ content: [{ type: 'text', text: 'fine' }] }],
        faults: [{ step: 0, status: 429, times: 1 }],
      },
      slow: { steps: [{ content: [{ type: 'text', text: 'late' }] }], latencyMs: 1500 },
      faulty: {
        steps: [{ content: [{ type: 'text', text: 'fine' }] }],
        faults: [
          { step: 0, status: 529, times: 1 },
          { step: 0, status: 429, times: 1, retryAfter: 2 },
          { step: 0, status: 500, times: 1, shouldRetry: false },
          { step: 0, status: 401, times: 1 },
        ],
      },
    },
  });
  client = createClaudeClient({ baseURL: stub.url });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const base = (over: Partial<ClaudeRequest> = {}): ClaudeRequest => ({
  model: 'tools',
  system: 'You are terse.',
  messages: [{ role: 'user', content: 'say hi' }],
  tools: [echo, add],
  maxTokens: 1000,
  ...over,
});

describe('callClaude', () => {
  it('returns the same output plain and streamed', async () => {
    const plain = await callClaude(client, base());
    const progress = jest.fn();
    const streamed = await callClaude(client, base(), {
      stream: true,
      onProgress: progress,
      progressThrottleMs: 0,
    });
    expect(streamed.content).toEqual(plain.content);
    expect(streamed.stopReason).toBe(plain.stopReason);
    expect(streamed.model).toBe(plain.model);
    expect(streamed.usage.outputTokens).toBe(plain.usage.outputTokens);
    expect(plain.stopReason).toBe('tool_use');
    expect(plain.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(plain.requestId).toMatch(/^req_stub_/);
    expect(streamed.requestId).toMatch(/^req_stub_/);
    expect(progress).toHaveBeenCalled();
    expect(stub.requests.map((r) => r.stream)).toEqual([false, true]);
    // The output is plain JSON data: what Temporal records is what the workflow gets.
    expect(JSON.parse(JSON.stringify(streamed))).toEqual(streamed);
  });

  it('puts cache_control on the last tool, the system prompt and the last user message only', async () => {
    const out = await callClaude(client, base());
    const body = stub.requests[0]?.body;
    expect(body.system).toEqual([
      { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(body.tools[0]).not.toHaveProperty('cache_control');
    expect(body.tools[1].cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'say hi', cache_control: { type: 'ephemeral' } }] }]);
    expect(body).not.toHaveProperty('tool_choice');
    expect(body).not.toHaveProperty('thinking');
    expect(out.usage.cacheCreationInputTokens).toBeGreaterThan(0);
    const again = await callClaude(client, base());
    expect(again.usage.cacheReadInputTokens).toBe(out.usage.cacheCreationInputTokens);
  });

  it('sends no cache_control with caching off', async () => {
    await callClaude(client, base(), { cache: false });
    const body = stub.requests[0]?.body;
    expect(body.system).toBe('You are terse.');
    expect(JSON.stringify(body)).not.toContain('cache_control');
  });

  it('does not mutate its input', async () => {
    const input = base({ toolChoice: { type: 'auto' } });
    const before = structuredClone(input);
    await callClaude(client, input);
    await callClaude(client, input, { stream: true });
    expect(input).toEqual(before);
  });

  it('round-trips thinking blocks unchanged, in both modes', async () => {
    for (const stream of [false, true]) {
      const first = await callClaude(client, base(), { stream });
      const use = first.content.find(
        (b): b is Extract<ContentBlock, { type: 'tool_use' }> => b.type === 'tool_use',
      );
      expect(use).toBeDefined();
      const messages: MessageParam[] = [
        { role: 'user', content: 'say hi' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use!.id, content: 'Echo: hi' }] },
      ];
      // The stub refuses an altered thinking block or signature with a 400, like the API.
      const second = await callClaude(client, base({ messages }), { stream });
      expect(second.content).toEqual([{ type: 'text', text: 'echo said: Echo: hi', citations: null }]);
      expect(second.stopReason).toBe('end_turn');
    }
  });

  it('passes tool_choice and thinking through', async () => {
    await callClaude(
      client,
      base({
        toolChoice: { type: 'auto' },
        thinking: { type: 'enabled', budget_tokens: 1024 },
        maxTokens: 2048,
      }),
    );
    const body = stub.requests[0]?.body;
    expect(body.tool_choice).toEqual({ type: 'auto' });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(body.max_tokens).toBe(2048);
  });

  it('adds costUsd from a price table (unknown stub model: 0)', async () => {
    expect((await callClaude(client, base())).costUsd).toBeUndefined();
    expect((await callClaude(client, base(), { prices: makePriceTable() })).costUsd).toBe(0);
    const priced = await callClaude(client, base(), {
      prices: makePriceTable({ tools: { input: 1_000_000, output: 0 } }),
    });
    expect(priced.costUsd).toBeGreaterThan(0);
  });

  it('throws the abort reason when the signal cancels the call', async () => {
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    setTimeout(() => controller.abort(reason), 100);
    await expect(callClaude(client, base({ model: 'slow' }), { signal: controller.signal })).rejects.toBe(
      reason,
    );
    const c2 = new AbortController();
    setTimeout(() => c2.abort(reason), 100);
    await expect(
      callClaude(client, base({ model: 'slow' }), { signal: c2.signal, stream: true }),
    ).rejects.toBe(reason);
  });

  it('maps stub faults through the SDK to failures', async () => {
    const attempt = async (model = 'faulty'): Promise<ApplicationFailure> =>
      (await callClaude(client, base({ model })).catch((e: unknown) => e)) as ApplicationFailure;
    const overloaded = await attempt();
    expect(overloaded).toMatchObject({
      type: 'ClaudeOverloaded',
      nonRetryable: false,
      nextRetryDelay: undefined,
    });
    expect(overloaded.message).toMatch(
      /^Claude API 529 overloaded_error: Overloaded \(request-id req_stub_\d+\)$/,
    );
    expect(await attempt()).toMatchObject({
      type: 'ClaudeRateLimited',
      nonRetryable: false,
      nextRetryDelay: 2000,
    });
    expect(await attempt('spendCap')).toMatchObject({
      type: 'ClaudeRateLimitedNoRetryAfter',
      nonRetryable: false,
      nextRetryDelay: 30_000,
    });
    expect(await attempt()).toMatchObject({ type: 'ClaudeServerError', nonRetryable: true });
    const auth = await attempt();
    expect(auth).toMatchObject({ type: 'ClaudeAuth', nonRetryable: true });
    expect(auth.message).toContain('ANTHROPIC_API_KEY');
    const ok = await callClaude(client, base({ model: 'faulty' }));
    expect(ok.content).toEqual([{ type: 'text', text: 'fine', citations: null }]);
    // One HTTP request per call: the SDK did not retry any of them.
    expect(stub.requests).toHaveLength(6);
  });

  it('maps a 400 from request validation to a non-retryable ClaudeInvalidRequest', async () => {
    const err = (await callClaude(client, base({ toolChoice: { type: 'tool', name: 'nope' } })).catch(
      (e: unknown) => e,
    )) as ApplicationFailure;
    expect(err.type).toBe('ClaudeInvalidRequest');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toMatch(
      /^Claude API 400 invalid_request_error: tool_choice\.name: Tool 'nope' not found/,
    );
  });
});
