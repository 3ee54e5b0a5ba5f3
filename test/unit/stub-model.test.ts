/** The scripted Claude, through the real Anthropic SDK over HTTP. */
import Anthropic from '@anthropic-ai/sdk';
import { startStubModel, type StubModel } from '../../src/stub';
import { FINAL_ANSWER_REQUEST, withFinalRequest } from '../../src/claude/response-formatter';

const TEN_WORDS = 'one two three four five six seven eight nine ten';

let stub: StubModel;
let client: Anthropic;
const schema = { type: 'object' as const, properties: { message: { type: 'string' } } };
const tools = [{ name: 'everything__echo', input_schema: schema }];

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      tools: {
        steps: [
          {
            content: [
              { type: 'thinking', thinking: 'plan' },
              { type: 'text', text: 'calling' },
              { type: 'tool_use', name: 'everything__echo', input: { message: 'hi' } },
            ],
          },
          { content: [{ type: 'text', text: 'got: {{toolResults}}' }] },
        ],
        formatter: [
          { conversation: 'bad' },
          { conversation: [{ type: 'text', content: 'ok {{toolResults}}' }] },
        ],
      },
      conversation: {
        perTurn: true,
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
          { content: [{ type: 'text', text: 'answer to {{question}}: {{toolResults}}' }] },
        ],
      },
      // Every kind of streamed block, with whitespace a word split must keep.
      mixed: {
        steps: [
          {
            content: [
              { type: 'thinking', thinking: 'First I plan,  then I call the echo tool.' },
              { type: 'text', text: ' Calling the echo tool\nwith a   longer message, twice spaced. ' },
              {
                type: 'tool_use',
                name: 'everything__echo',
                input: { message: 'a message long enough for several chunks ✓ 🎉' },
              },
            ],
          },
        ],
        formatter: { conversation: [{ type: 'text', content: 'The echo tool answered with a greeting.' }] },
      },
      paced: {
        streamDelayMs: 100,
        formatterStreamDelayMs: 0,
        steps: [
          { content: [{ type: 'text', text: TEN_WORDS }] },
          { content: [{ type: 'text', text: TEN_WORDS }], streamDelayMs: 0 },
        ],
      },
      faulty: {
        steps: [{ content: [{ type: 'text', text: 'fine' }] }],
        faults: [{ step: 0, status: 529, times: 2, retryAfter: 1 }],
      },
      unformatted: {
        steps: [
          { content: [{ type: 'text', text: 'Let me echo.' }, { type: 'tool_use', name: 'everything__echo', input: { message: 'hi' } }] },
          { content: [{ type: 'text', text: 'The echo said: {{toolResults}}' }] },
        ],
      },
      'formatted-turns': {
        perTurn: true,
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
          { content: [{ type: 'text', text: 'answer to {{question}}' }] },
        ],
        formatter: [
          { conversation: [{ type: 'text', content: 'first {{question}}: {{toolResults}}' }] },
          { conversation: [{ type: 'text', content: 'repaired {{question}}: {{toolResults}}' }] },
        ],
      },
    },
  });
  client = new Anthropic({ apiKey: 'test', baseURL: stub.url, maxRetries: 0 });
});
afterAll(() => stub.close());

const ask = (extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) =>
  client.messages.create({
    model: 'tools',
    max_tokens: 100,
    tools,
    messages: [{ role: 'user', content: 'q' }],
    ...extra,
  });

it('answers a scripted step, with signed thinking and a deterministic tool_use id', async () => {
  const a = await ask();
  const b = await ask();
  expect(a.stop_reason).toBe('tool_use');
  expect(a.content.map((c) => c.type)).toEqual(['thinking', 'text', 'tool_use']);
  expect(a.content).toEqual(b.content);
  expect(a.usage.input_tokens).toBeGreaterThan(0);
});

/** The raw events of a streamed call, each with the time it arrived, and the message the SDK accumulates. */
async function streamed(params: Anthropic.MessageStreamParams) {
  const stream = client.messages.stream(params);
  const events: Array<{ at: number; event: Anthropic.MessageStreamEvent }> = [];
  for await (const event of stream) events.push({ at: Date.now(), event });
  const deltas = <T extends Anthropic.RawContentBlockDelta['type']>(type: T) =>
    events.flatMap(({ at, event }) =>
      event.type === 'content_block_delta' && event.delta.type === type
        ? [
            {
              at,
              index: event.index,
              delta: event.delta as Extract<Anthropic.RawContentBlockDelta, { type: T }>,
            },
          ]
        : [],
    );
  return { events, deltas, final: await stream.finalMessage() };
}
const mixedParams = (
  extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {},
): Anthropic.MessageCreateParamsNonStreaming => ({
  model: 'mixed',
  max_tokens: 100,
  tools,
  messages: [{ role: 'user', content: 'q' }],
  ...extra,
});

it('streams the same message the plain call returns', async () => {
  for (const model of ['tools', 'mixed']) {
    const plain = await client.messages.create(mixedParams({ model }));
    const { final } = await streamed(mixedParams({ model }));
    // Everything the stub sends (the SDK adds `parsed_output` to a streamed message itself).
    const sent = ({ type, role, model, content, stop_reason, stop_sequence, usage }: Anthropic.Message) =>
      JSON.parse(
        JSON.stringify({ type, role, model, content, stop_reason, stop_sequence, usage }),
      ) as unknown;
    expect(sent(final)).toEqual(sent(plain));
    expect(final.content).toEqual(plain.content);
    expect(final.stop_reason).toBe(plain.stop_reason);
    expect(final.usage).toEqual(plain.usage);
    expect(final.content.map((c) => c.type)).toEqual(['thinking', 'text', 'tool_use']);
  }
});

it('streams text and thinking a word per delta and a tool_use input in small JSON chunks', async () => {
  const { deltas, final } = await streamed(mixedParams());
  const [thinking, text, use] = final.content as [
    Anthropic.ThinkingBlock,
    Anthropic.TextBlock,
    Anthropic.ToolUseBlock,
  ];
  const wordCount = (t: string) => t.split(/\s+/).filter(Boolean).length;

  const texts = deltas('text_delta').map((d) => d.delta.text);
  expect(texts.length).toBeGreaterThanOrEqual(wordCount(text.text));
  expect(texts.join('')).toBe(text.text);
  expect(texts.every((t) => wordCount(t) <= 1)).toBe(true);

  const thoughts = deltas('thinking_delta').map((d) => d.delta.thinking);
  expect(thoughts.length).toBeGreaterThanOrEqual(wordCount(thinking.thinking));
  expect(thoughts.join('')).toBe(thinking.thinking);
  const signatures = deltas('signature_delta');
  expect(signatures.map((d) => d.delta.signature)).toEqual([thinking.signature]);
  expect(signatures[0]!.index).toBe(0);

  const json = deltas('input_json_delta').map((d) => d.delta.partial_json);
  expect(json.length).toBeGreaterThan(3);
  expect(json.join('')).toBe(JSON.stringify(use.input));
});

it("streams the formatter's forced tool input as several input_json_delta events", async () => {
  const { deltas, final } = await streamed(
    mixedParams({
      tools: [{ name: 'response_formatter', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'response_formatter' },
    }),
  );
  const input = { conversation: [{ type: 'text', content: 'The echo tool answered with a greeting.' }] };
  expect(final.content).toMatchObject([{ type: 'tool_use', name: 'response_formatter', input }]);
  const json = deltas('input_json_delta').map((d) => d.delta.partial_json);
  expect(json.length).toBeGreaterThan(3);
  expect(json.join('')).toBe(JSON.stringify(input));
});

it('paces the deltas by streamDelayMs; a step and the formatter can set their own', async () => {
  const started = Date.now();
  const paced = await streamed({
    model: 'paced',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'q' }],
  });
  const ended = Date.now();
  const at = paced.deltas('text_delta').map((d) => d.at);
  expect(at.length).toBe(10);
  expect(at[at.length - 1]! - at[0]!).toBeGreaterThanOrEqual(800);
  expect(at[0]! - started).toBeLessThan((ended - started) / 2);
  expect(paced.final.content).toEqual([{ type: 'text', text: TEN_WORDS, citations: null }]);

  // Step 1 sets 0 and the formatter 0: written at once.
  const quick = async (params: Partial<Anthropic.MessageStreamParams>) => {
    const t0 = Date.now();
    await streamed({
      model: 'paced',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'q' }],
      ...params,
    });
    return Date.now() - t0;
  };
  const second: Anthropic.MessageParam[] = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: TEN_WORDS },
    { role: 'user', content: 'again' },
  ];
  expect(await quick({ messages: second })).toBeLessThan(500);
  const formatter = { tools: [{ name: 'response_formatter', input_schema: { type: 'object' as const } }] };
  expect(
    await quick({ ...formatter, tool_choice: { type: 'tool', name: 'response_formatter' } }),
  ).toBeLessThan(500);
});

it('stops writing when the client aborts mid-stream, and keeps answering', async () => {
  const stream = client.messages.stream({
    model: 'paced',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'q' }],
  });
  let received = 0;
  const consumed = (async () => {
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && ++received === 2) stream.abort();
    }
  })();
  await expect(consumed).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
  const abortedAt = Date.now();
  const record = stub.requests.filter((r) => r.scenario === 'paced').at(-1)!;
  while ((!record.aborted || stub.inFlight > 0) && Date.now() - abortedAt < 2000)
    await new Promise((r) => setTimeout(r, 10));
  expect(record.aborted).toBe(true);
  // The server gave up on the remaining eight deltas (800 ms of pauses) at once.
  expect(stub.inFlight).toBe(0);
  expect(Date.now() - abortedAt).toBeLessThan(400);
  expect(received).toBe(2);

  const next = await streamed({
    model: 'paced',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'q' }],
  });
  expect(next.final.content).toEqual([{ type: 'text', text: TEN_WORDS, citations: null }]);
});

it('expands {{toolResults}} and refuses transcripts the real API refuses', async () => {
  const first = await ask();
  const use = first.content.find((c) => c.type === 'tool_use')!;
  const ok = await ask({
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Echo: hi' }] },
    ],
  });
  expect(ok.content[0]).toMatchObject({ type: 'text', text: 'got: Echo: hi' });

  const bad = (messages: Anthropic.MessageParam[]) => ask({ messages });
  await expect(
    bad([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: 'no results' },
    ]),
  ).rejects.toThrow(/tool_use` ids were found without `tool_result` blocks immediately after/);
  await expect(
    bad([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: first.content },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'tool_result', tool_use_id: use.id, content: 'x' },
        ],
      },
    ]),
  ).rejects.toThrow(/`tool_result` blocks must come first/);
  const altered = first.content.map((c) => (c.type === 'thinking' ? { ...c, thinking: 'edited' } : c));
  await expect(
    bad([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: altered },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'x' }] },
    ]),
  ).rejects.toThrow(/Invalid `signature`/);
  await expect(ask({ tools: [{ name: 'bad.name', input_schema: schema }] })).rejects.toThrow(
    /String should match pattern/,
  );
  await expect(ask({ tool_choice: { type: 'tool', name: 'absent' } })).rejects.toBeInstanceOf(
    Anthropic.BadRequestError,
  );
});

it('answers forced formatter calls attempt by attempt', async () => {
  const f = await ask({
    tools: [{ name: 'response_formatter', input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: 'response_formatter' },
  });
  expect(f.content[0]).toMatchObject({
    type: 'tool_use',
    name: 'response_formatter',
    input: { conversation: 'bad' },
  });
});

it('injects faults with retry-after, counted per question', async () => {
  const call = (q: string) =>
    client.messages.create({ model: 'faulty', max_tokens: 10, messages: [{ role: 'user', content: q }] });
  const err = await call('a').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(Anthropic.InternalServerError);
  expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
  expect((err as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after')).toBe('1');
  await expect(call('a')).rejects.toThrow();
  await expect(call('a')).resolves.toMatchObject({ content: [{ type: 'text', text: 'fine' }] });
  await expect(call('b')).rejects.toThrow(); // another question has its own count
});

it('given a key, refuses any other key or none as the API does: 401 authentication_error, before the request is read', async () => {
  const keyed = await startStubModel({ scenarios: { hi: { steps: [{ content: [{ type: 'text', text: 'hello' }] }] } }, apiKey: 'the-right-key' });
  try {
    const ask = (credential: { apiKey: string } | { authToken: string }) =>
      new Anthropic({ ...credential, baseURL: keyed.url, maxRetries: 0 }).messages.create({ model: 'hi', max_tokens: 10, messages: [{ role: 'user', content: 'q' }] });
    await expect(ask({ apiKey: 'the-right-key' })).resolves.toMatchObject({ content: [{ type: 'text', text: 'hello' }] });
    await expect(ask({ authToken: 'the-right-key' })).resolves.toMatchObject({ content: [{ type: 'text', text: 'hello' }] });
    const err = (await ask({ apiKey: 'sk-ant-fake' }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(err.error).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' }, request_id: expect.stringMatching(/^req_stub_/) });
    expect(err.headers?.get('request-id')).toBe((err.error as { request_id: string }).request_id);
    const bearer = (await ask({ authToken: 'wrong' }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(bearer.status).toBe(401);
    // A request without a credential at all, and a batch, are refused the same way.
    const bare = await fetch(`${keyed.url}/v1/messages`, { method: 'POST', body: '{}' });
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ error: { type: 'authentication_error', message: 'x-api-key header is required' } });
    const batch = await fetch(`${keyed.url}/v1/messages/batches`, { method: 'POST', headers: { 'x-api-key': 'wrong' }, body: '{}' });
    expect(batch.status).toBe(401);
    expect(keyed.requests.map((r) => r.status)).toEqual([200, 200, 401, 401, 401]);
  } finally {
    await keyed.close();
  }
});

it('caches by prefix like the API: a marker writes the prefix up to it, the next step reads it back', async () => {
  const eph = { type: 'ephemeral' as const };
  const marked = [{ ...tools[0]!, cache_control: eph }];
  const question = `cache me ${Date.now()}`;
  const first = await client.messages.create({
    model: 'tools',
    max_tokens: 100,
    tools: marked,
    messages: [{ role: 'user', content: [{ type: 'text', text: question, cache_control: eph }] }],
  });
  expect(first.usage.cache_read_input_tokens).toBe(0);
  expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
  // Step 2 repeats step 1's conversation (markers moved to the new last message) and adds to it.
  const second = await client.messages.create({
    model: 'tools',
    max_tokens: 100,
    tools: marked,
    messages: [
      { role: 'user', content: question },
      { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: (first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock).id,
            content: 'hi',
            cache_control: eph,
          },
        ],
      },
    ],
  });
  // It reads everything step 1 wrote (the tools and the question) and writes only what is new.
  expect(second.usage.cache_read_input_tokens).toBe(
    first.usage.cache_read_input_tokens! + first.usage.cache_creation_input_tokens!,
  );
  expect(second.usage.cache_creation_input_tokens).toBeGreaterThan(0);
  // Without markers nothing is cached or read.
  const plain = await client.messages.create({
    model: 'tools',
    max_tokens: 100,
    tools,
    messages: [{ role: 'user', content: question }],
  });
  expect(plain.usage.cache_read_input_tokens).toBe(0);
  expect(plain.usage.cache_creation_input_tokens).toBe(0);
});

it('plays a perTurn scenario once per turn of a conversation, keyed on the current question', async () => {
  const turn = async (
    history: Anthropic.MessageParam[],
    question: string,
  ): Promise<Anthropic.MessageParam[]> => {
    const asked: Anthropic.MessageParam[] = [...history, { role: 'user', content: question }];
    const first = await client.messages.create({
      model: 'conversation',
      max_tokens: 100,
      tools,
      messages: asked,
    });
    const use = first.content.find((c) => c.type === 'tool_use')!;
    expect(use.input).toEqual({ message: question });
    const results: Anthropic.MessageParam = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: use.id, content: `Echo: ${question}` }],
    };
    const second = await client.messages.create({
      model: 'conversation',
      max_tokens: 100,
      tools,
      messages: [...asked, { role: 'assistant', content: first.content }, results],
    });
    expect(second.content[0]).toMatchObject({
      type: 'text',
      text: `answer to ${question}: Echo: ${question}`,
    });
    return [
      ...asked,
      { role: 'assistant', content: first.content },
      results,
      { role: 'assistant', content: second.content },
    ];
  };
  const afterOne = await turn([], 'one');
  const afterTwo = await turn(afterOne, 'two');
  // Each turn's tool_use has an id of its own.
  const ids = afterTwo
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b) => b.type === 'tool_use')
    .map((b) => (b as { id: string }).id);
  expect(new Set(ids).size).toBe(2);
  expect(stub.requests.filter((r) => r.scenario === 'conversation').map((r) => r.step)).toEqual([0, 1, 0, 1]);
});

/**
 * One turn of the tool loop against scenario `model`: the question, step 0's reply, the echo
 * tool's result (`Echo: <message>`), step 1's reply. Returns the history with the turn added.
 */
async function playTurn(model: string, history: Anthropic.MessageParam[], question: string): Promise<Anthropic.MessageParam[]> {
  const asked: Anthropic.MessageParam[] = [...history, { role: 'user', content: question }];
  const first = await client.messages.create({ model, max_tokens: 100, tools, messages: asked });
  const use = first.content.find((c) => c.type === 'tool_use')!;
  const results: Anthropic.MessageParam = {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: use.id, content: `Echo: ${(use.input as { message: string }).message}` }],
  };
  const withResults = [...asked, { role: 'assistant' as const, content: first.content }, results];
  const second = await client.messages.create({ model, max_tokens: 100, tools, messages: withResults });
  return [...withResults, { role: 'assistant', content: second.content }];
}

const formatterTools = [{ name: 'response_formatter', input_schema: { type: 'object' as const } }];

/** The response formatter's forced call over a transcript, as src/claude/response-formatter.ts sends it. */
const formatterCall = (model: string, messages: Anthropic.MessageParam[]) =>
  client.messages.create({
    model,
    max_tokens: 100,
    tools: formatterTools,
    tool_choice: { type: 'tool', name: 'response_formatter' },
    messages,
  });

it("answers the formatter with the turn's last text when the scenario scripts none", async () => {
  const transcript = await playTurn('unformatted', [], 'q');
  const formatted = await formatterCall('unformatted', withFinalRequest(transcript, FINAL_ANSWER_REQUEST));
  expect(formatted.content).toMatchObject([
    { type: 'tool_use', name: 'response_formatter', input: { conversation: [{ type: 'text', content: 'The echo said: Echo: hi' }] } },
  ]);

  // A turn stopped after a tool call (max steps): the last text written, from the step before.
  const stopped = await client.messages.create({ model: 'unformatted', max_tokens: 100, tools, messages: [{ role: 'user', content: 'q' }] });
  const cut = withFinalRequest([{ role: 'user', content: 'q' }, { role: 'assistant', content: stopped.content }], FINAL_ANSWER_REQUEST);
  expect((await formatterCall('unformatted', cut)).content).toMatchObject([
    { type: 'tool_use', input: { conversation: [{ type: 'text', content: 'Let me echo.' }] } },
  ]);
});

it("perTurn: the formatter's {{question}} and {{toolResults}} are the current turn's, in its repair call too", async () => {
  const afterOne = await playTurn('formatted-turns', [], 'one');
  const afterTwo = await playTurn('formatted-turns', afterOne, 'two');
  const base = withFinalRequest(afterTwo, FINAL_ANSWER_REQUEST);
  const first = await formatterCall('formatted-turns', base);
  expect(first.content).toMatchObject([
    { type: 'tool_use', name: 'response_formatter', input: { conversation: [{ type: 'text', content: 'first two: Echo: two' }] } },
  ]);
  // The repair round the response formatter adds: its call sent back with an is_error result.
  const repair: Anthropic.MessageParam[] = [
    ...base,
    { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: (first.content[0] as Anthropic.ToolUseBlock).id, is_error: true, content: 'invalid' }] },
  ];
  expect((await formatterCall('formatted-turns', repair)).content).toMatchObject([
    { type: 'tool_use', input: { conversation: [{ type: 'text', content: 'repaired two: Echo: two' }] } },
  ]);
  // Steps count in the turn: the formatter after a 2-step turn is step 2, its repair step 3.
  const formatterSteps = stub.requests.filter((r) => r.scenario === 'formatted-turns' && r.kind === 'formatter').map((r) => r.step);
  expect(formatterSteps).toEqual([2, 3]);
});
