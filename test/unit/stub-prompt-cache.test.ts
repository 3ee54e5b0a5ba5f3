/**
 * Prompt caching in the stub: the `cache_control` breakpoints it refuses as the API does (their
 * value, more than 4, a 1-hour one after a 5-minute one), and the usage it reports, with
 * `cache_creation` splitting the written tokens by ttl, in plain, streamed and batched answers.
 */
import Anthropic from '@anthropic-ai/sdk';
import { startStubModel, type StubModel } from '../../src/stub';
import { validateRequest } from '../../src/stub/validate-request';

const fiveMinutes = { type: 'ephemeral' } as const;
const oneHour = { type: 'ephemeral', ttl: '1h' } as const;
const echo = { name: 'everything__echo', input_schema: { type: 'object' as const, properties: { message: { type: 'string' } } } };

const text = (t: string, cache_control?: unknown) => ({ type: 'text', text: t, ...(cache_control ? { cache_control } : {}) });
const request = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'plain',
  max_tokens: 100,
  tools: [echo],
  messages: [{ role: 'user', content: 'q' }],
  ...extra,
});

describe('cache_control breakpoints', () => {
  it("takes { type: 'ephemeral' } with ttl 5m or 1h, and null as no breakpoint", () => {
    for (const control of [fiveMinutes, { type: 'ephemeral', ttl: '5m' }, oneHour, null]) {
      expect(validateRequest(request({ tools: [{ ...echo, cache_control: control }] }))).toBeUndefined();
    }
  });

  it('refuses another ttl, type or field, naming where it is', () => {
    expect(validateRequest(request({ messages: [{ role: 'user', content: [text('q', { type: 'ephemeral', ttl: '10m' })] }] }))).toBe(
      "messages.0.content.0.cache_control.ttl: Input should be '5m' or '1h'",
    );
    expect(validateRequest(request({ system: [text('s', { type: 'persistent' })] }))).toBe("system.0.cache_control.type: Input should be 'ephemeral'");
    expect(validateRequest(request({ tools: [{ ...echo, cache_control: { type: 'ephemeral', scope: 'org' } }] }))).toBe(
      'tools.0.cache_control.scope: Extra inputs are not permitted',
    );
    expect(validateRequest(request({ cache_control: { type: 'ephemeral', ttl: '24h' } }))).toBe("cache_control.ttl: Input should be '5m' or '1h'");
  });

  it('refuses more than 4 breakpoints, a top-level cache_control counting as one', () => {
    const four = {
      tools: [{ ...echo, cache_control: fiveMinutes }],
      system: [text('a', fiveMinutes), text('b', fiveMinutes)],
      messages: [{ role: 'user', content: [text('q', fiveMinutes)] }],
    };
    expect(validateRequest(request(four))).toBeUndefined();
    expect(validateRequest(request({ ...four, cache_control: fiveMinutes }))).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
    const inResult = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [text('r', fiveMinutes)], cache_control: fiveMinutes }] },
    ];
    expect(validateRequest(request({ ...four, messages: inResult }))).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
  });

  it('refuses a 1h breakpoint after a 5m one, in the order tools, system, messages, then the top-level one', () => {
    const ordered = { tools: [{ ...echo, cache_control: oneHour }], system: [text('s', oneHour)], messages: [{ role: 'user', content: [text('q', fiveMinutes)] }] };
    expect(validateRequest(request(ordered))).toBeUndefined();
    expect(validateRequest(request({ ...ordered, system: [text('s', fiveMinutes)], messages: [{ role: 'user', content: [text('q', oneHour)] }] }))).toBe(
      "messages.0.content.0.cache_control: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block",
    );
    expect(validateRequest(request({ tools: [{ ...echo, cache_control: {} }], system: [text('s', oneHour)] }))).toMatch(/^tools\.0\.cache_control\.type: /);
    expect(validateRequest(request({ tools: [{ ...echo, cache_control: fiveMinutes }], system: [text('s', oneHour)] }))).toBe(
      "system.0.cache_control: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block",
    );
    expect(validateRequest(request({ tools: [{ ...echo, cache_control: fiveMinutes }], cache_control: oneHour }))).toBe(
      "cache_control: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block",
    );
  });
});

describe('usage.cache_creation', () => {
  let stub: StubModel;
  let client: Anthropic;
  beforeAll(async () => {
    stub = await startStubModel({
      scenarios: {
        plain: { steps: [{ content: [{ type: 'text', text: 'fine' }] }] },
        scripted: { steps: [{ content: [{ type: 'text', text: 'fine' }], usage: { input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: 7 } }] },
      },
      messageBatches: { processingMs: 20 },
    });
    client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
  });
  afterAll(() => stub.close());

  /** A question of its own, so the cache has nothing of it yet. */
  let questions = 0;
  const fresh = (): string => `question ${++questions} ${Date.now()}`;

  /** Tools and system written for an hour, the conversation for 5 minutes. */
  const marked = (question: string, ...more: Anthropic.MessageParam[]): Anthropic.MessageCreateParamsNonStreaming => ({
    model: 'plain',
    max_tokens: 100,
    tools: [{ ...echo, cache_control: oneHour }],
    system: [{ type: 'text', text: `You are a stub. ${question}`, cache_control: oneHour }],
    messages: [{ role: 'user', content: more.length ? question : [{ type: 'text', text: question, cache_control: fiveMinutes }] }, ...more],
  });

  it('splits the written tokens by the ttl of the breakpoint that ends each span', async () => {
    const question = fresh();
    const first = await client.messages.create(marked(question));
    const created = first.usage.cache_creation!;
    expect(created.ephemeral_1h_input_tokens).toBeGreaterThan(0);
    expect(created.ephemeral_5m_input_tokens).toBeGreaterThan(0);
    expect(created.ephemeral_1h_input_tokens + created.ephemeral_5m_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(first.usage.cache_read_input_tokens).toBe(0);

    // The next step reads all of it back and writes only the new messages, for 5 minutes.
    const next = await client.messages.create(
      marked(question, { role: 'assistant', content: 'fine' }, { role: 'user', content: [{ type: 'text', text: 'and then?', cache_control: fiveMinutes }] }),
    );
    expect(next.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(next.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: next.usage.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 });
    expect(next.usage.cache_creation_input_tokens).toBeGreaterThan(0);

    // The same request again writes nothing.
    const again = await client.messages.create(marked(question));
    expect(again.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
    expect(again.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
  });

  it('a top-level cache_control writes the whole request with its ttl', async () => {
    const reply = await client.messages.create({ model: 'plain', max_tokens: 100, messages: [{ role: 'user', content: fresh() }], cache_control: oneHour });
    expect(reply.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(reply.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: reply.usage.cache_creation_input_tokens });
  });

  it('is all zeros, not null, without breakpoints; a scripted usage writes for 5 minutes', async () => {
    const plain = await client.messages.create({ model: 'plain', max_tokens: 100, messages: [{ role: 'user', content: fresh() }] });
    expect(plain.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
    const scripted = await client.messages.create({ model: 'scripted', max_tokens: 100, messages: [{ role: 'user', content: fresh() }] });
    expect(scripted.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 7, ephemeral_1h_input_tokens: 0 });
  });

  it('is the same streamed', async () => {
    const stream = client.messages.stream(marked(fresh()));
    const starts: Anthropic.Usage[] = [];
    for await (const event of stream) if (event.type === 'message_start') starts.push(event.message.usage);
    const final = await stream.finalMessage();
    const created = final.usage.cache_creation!;
    expect(created.ephemeral_1h_input_tokens).toBeGreaterThan(0);
    expect(created.ephemeral_1h_input_tokens + created.ephemeral_5m_input_tokens).toBe(final.usage.cache_creation_input_tokens);
    expect(starts[0]!.cache_creation).toEqual(created);
  });

  it('is in the messages of Message Batch results', async () => {
    const batch = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: marked(fresh()) }] });
    while ((await client.messages.batches.retrieve(batch.id)).processing_status !== 'ended') await new Promise((r) => setTimeout(r, 10));
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await client.messages.batches.results(batch.id)) results.push(r);
    expect(results[0]!.result.type).toBe('succeeded');
    const { usage } = (results[0]!.result as Anthropic.Messages.MessageBatchSucceededResult).message;
    expect(usage.cache_creation!.ephemeral_1h_input_tokens).toBeGreaterThan(0);
    expect(usage.cache_creation!.ephemeral_1h_input_tokens + usage.cache_creation!.ephemeral_5m_input_tokens).toBe(usage.cache_creation_input_tokens);
  });
});
