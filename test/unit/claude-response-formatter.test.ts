/** The response formatter against the scripted stub model, through the real SDK. */
import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { createClaudeClient } from '../../src/claude/client';
import { makePriceTable } from '../../src/claude/pricing';
import type { FormatRequest, MessageParam } from '../../src/core/contracts';
import { FORMATTER_INSTRUCTIONS, FORMATTER_TOOL_NAME } from '../../src/schemas/response-formatter-tool';
import { addUsage, fromApiUsage, ZERO_USAGE, type TokenUsage } from '../../src/core/usage';
import { FALLBACK_THINKING, FINAL_ANSWER_REQUEST, formatResponse } from '../../src/claude/response-formatter';
import { startStubModel, type RecordedRequest, type StubModel } from '../../src/stub';

const good = { thinking: 'short', conversation: [{ type: 'text', content: 'The echo said **hi**.' }] };
const goodWithArtifact = {
  conversation: [
    { type: 'text', content: 'Here:' },
    {
      type: 'artifact',
      artifact: {
        type: 'application/vnd.ant.code',
        id: 'hello',
        title: 'Hello',
        content: 'print(1)',
        language: 'python',
      },
    },
  ],
};
const bad = { conversation: 'The echo said hi.' };
const step = { content: [{ type: 'text' as const, text: 'unused' }] };

let stub: StubModel;
let client: Anthropic;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      good: { steps: [step], formatter: good },
      artifact: { steps: [step], formatter: goodWithArtifact },
      repair: { steps: [step], formatter: [bad, good] },
      hopeless: { steps: [step], formatter: [bad, { conversation: [{ type: 'image', content: 'x' }] }] },
      refuses: { steps: [step], formatter: good, formatterRefusesForcedTool: true },
      refusesText: {
        steps: [step],
        formatter: good,
        formatterRefusesForcedTool: true,
        formatterAutoText: 'Plain answer: hi.',
      },
      autoRepair: { steps: [step], formatter: [bad, good], formatterRefusesForcedTool: true },
      overloaded: {
        steps: [step],
        formatter: good,
        faults: [{ step: 2, status: 529, kind: 'formatter', times: -1 }],
      },
    },
  });
  client = createClaudeClient({ baseURL: stub.url });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

/** A finished tool loop: question, a tool call and its result, then Claude's last text. */
const transcript = (): MessageParam[] => [
  { role: 'user', content: 'What does echo say?' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me call echo.' },
      { type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: { message: 'hi' } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Echo: hi' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Echo answered: hi.' }] },
];

const input = (model: string, over: Partial<FormatRequest> = {}): FormatRequest => ({
  model,
  system: 'Be helpful.',
  messages: transcript(),
  maxTokens: 1000,
  ...over,
});

const answered = (rs: RecordedRequest[]): TokenUsage =>
  rs
    .filter((r) => r.status === 200 && r.usage)
    .reduce((sum, r) => addUsage(sum, fromApiUsage(r.usage!)), ZERO_USAGE);

describe('formatResponse', () => {
  it('forced: one call with tool_choice forcing response_formatter', async () => {
    const i = input('good');
    const before = structuredClone(i);
    const out = await formatResponse(client, i);
    expect(out).toMatchObject({ mode: 'forced', calls: 1, notes: [], output: good });
    expect(i).toEqual(before);
    expect(stub.requests).toHaveLength(1);
    const body = stub.requests[0]!.body;
    expect(stub.requests[0]!.kind).toBe('formatter');
    expect(body.tool_choice).toEqual({ type: 'tool', name: FORMATTER_TOOL_NAME });
    expect(body.tools.map((t: { name: string }) => t.name)).toEqual([FORMATTER_TOOL_NAME]);
    expect(body.tools[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(body.system[0].text).toBe(`Be helpful.\n\n${FORMATTER_INSTRUCTIONS}`);
    expect(body.messages).toHaveLength(5);
    expect(body.messages[4]).toEqual({ role: 'user', content: [{ type: 'text', text: FINAL_ANSWER_REQUEST, cache_control: { type: 'ephemeral' } }] });
    expect(out.usage).toEqual(answered(stub.requests));
    expect(out.costUsd).toBeUndefined();
  });

  it('keeps artifacts, and works streamed', async () => {
    const out = await formatResponse(client, input('artifact'), { stream: true });
    expect(out.mode).toBe('forced');
    expect(out.output).toEqual(goodWithArtifact);
    expect(stub.requests[0]!.stream).toBe(true);
  });

  it('appends the request to a final user message, after its tool_results', async () => {
    const messages = transcript().slice(0, 3);
    const out = await formatResponse(client, input('good', { messages }));
    expect(out.mode).toBe('forced');
    const last = stub.requests[0]!.body.messages.at(-1);
    expect(last.content.map((b: { type: string }) => b.type)).toEqual(['tool_result', 'text']);
    expect(last.content[1].text).toBe(FINAL_ANSWER_REQUEST);
  });

  it('repaired: a malformed answer, then a good one after the validation errors are sent back', async () => {
    const out = await formatResponse(client, input('repair'));
    expect(out.mode).toBe('repaired');
    expect(out.calls).toBe(2);
    expect(out.output).toEqual(good);
    expect(stub.requests).toHaveLength(2);
    expect(out.usage).toEqual(answered(stub.requests));
    expect(out.usage.outputTokens).toBe(
      stub.requests[0]!.usage!.output_tokens + stub.requests[1]!.usage!.output_tokens,
    );
    const repair = stub.requests[1]!.body.messages;
    const assistant = repair.at(-2);
    expect(assistant.role).toBe('assistant');
    expect(assistant.content[0]).toMatchObject({ type: 'tool_use', name: FORMATTER_TOOL_NAME, input: bad });
    const result = repair.at(-1).content[0];
    expect(result).toMatchObject({
      type: 'tool_result',
      tool_use_id: assistant.content[0].id,
      is_error: true,
    });
    expect(result.content).toContain('conversation:');
    expect(result.content).toContain(`Call ${FORMATTER_TOOL_NAME} again`);
    expect(stub.requests[1]!.body.tool_choice).toEqual({ type: 'tool', name: FORMATTER_TOOL_NAME });
    expect(out.notes.join('\n')).toMatch(/first formatter answer unusable: invalid response_formatter input/);
  });

  it('fallback: malformed twice gives the last assistant text of the transcript', async () => {
    const out = await formatResponse(client, input('hopeless'));
    expect(out.mode).toBe('fallback');
    expect(out.calls).toBe(2);
    expect(out.output).toEqual({
      thinking: FALLBACK_THINKING,
      conversation: [{ type: 'text', content: 'Echo answered: hi.' }],
    });
    expect(out.usage).toEqual(answered(stub.requests));
    expect(out.notes.at(-1)).toBe('fallback: used the last assistant text of the conversation');
  });

  it('fallback without any assistant text uses the text of the invalid input', async () => {
    const out = await formatResponse(
      client,
      input('hopeless', { messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(out.mode).toBe('fallback');
    expect(out.output.conversation).toEqual([{ type: 'text', content: 'x' }]);
  });

  it('auto: a refused forced tool_choice falls back to offering the tool', async () => {
    const out = await formatResponse(client, input('refuses'));
    expect(out).toMatchObject({ mode: 'auto', calls: 2, output: good });
    expect(stub.requests.map((r) => r.status)).toEqual([400, 200]);
    expect(stub.requests[1]!.body).not.toHaveProperty('tool_choice');
    expect(stub.requests[1]!.body.tools[0].name).toBe(FORMATTER_TOOL_NAME);
    // Only the answered call counts.
    expect(out.usage).toEqual(fromApiUsage(stub.requests[1]!.usage!));
    expect(out.notes[0]).toMatch(
      /^forced tool_choice was refused \(Claude API 400 invalid_request_error: tool_choice/,
    );
  });

  it('auto: plain text is used as the answer', async () => {
    const out = await formatResponse(client, input('refusesText'));
    expect(out).toMatchObject({ mode: 'auto', calls: 2 });
    expect(out.output).toEqual({ conversation: [{ type: 'text', content: 'Plain answer: hi.' }] });
  });

  it('auto path repairs a malformed tool call too', async () => {
    const out = await formatResponse(client, input('autoRepair'));
    expect(out).toMatchObject({ mode: 'repaired', calls: 3, output: good });
    expect(stub.requests[2]!.body).not.toHaveProperty('tool_choice');
  });

  it('thinking on: goes to the auto path directly, with thinking kept', async () => {
    const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
    const out = await formatResponse(client, input('good', { thinking, maxTokens: 2048 }));
    expect(out).toMatchObject({ mode: 'auto', calls: 1, output: good });
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]!.body.thinking).toEqual(thinking);
    expect(stub.requests[0]!.body).not.toHaveProperty('tool_choice');
    expect(out.notes[0]).toMatch(/extended thinking/);
  });

  it('lets other errors propagate for Temporal to retry', async () => {
    const err = await formatResponse(client, input('overloaded')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'ClaudeOverloaded', nonRetryable: false });
    expect(stub.requests).toHaveLength(1);
  });

  it('reports the cost when given a price table', async () => {
    const prices = makePriceTable({ repair: { input: 1, output: 1 } });
    const out = await formatResponse(client, input('repair'), { prices });
    const u = out.usage;
    expect(out.costUsd).toBeCloseTo(
      (u.inputTokens + u.outputTokens + u.cacheCreationInputTokens * 1.25 + u.cacheReadInputTokens * 0.1) /
        1e6,
      10,
    );
  });
});
