/**
 * Output requests in the stub (the call that asks for a turn's answer as one JSON object), through
 * the real SDK over HTTP: the structured path (`output_config.format`) and the instructed one (the
 * ask, OUTPUT_ASK, in the last user message), the scenario's `output` attempt by attempt or the
 * minimal instance of the schema, templates, streaming, faults, max_tokens and stop sequences,
 * perTurn and Message Batches.
 */
import Anthropic from '@anthropic-ai/sdk';
import { OUTPUT_ASK, OUTPUT_REPAIR_ASK } from '../../src/core/output-spec';
import { startStubModel, type Scenario, type StubModel } from '../../src/stub';
import { requestKind, turnPosition } from '../../src/stub/answer';

let stub: StubModel;
let client: Anthropic;
const echo = { name: 'everything__echo', input_schema: { type: 'object' as const, properties: { message: { type: 'string' } } } };
const formatterTool = { name: 'response_formatter', input_schema: { type: 'object' as const } };

const turnSteps: Scenario['steps'] = [
  { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
  { content: [{ type: 'text', text: 'The echo said {{toolResults}}.' }] },
];

/** The answer's schema, as a caller might write it for structured outputs. */
const schema = {
  type: 'object',
  properties: {
    answer: { type: 'string' },
    confidence: { type: 'number' },
    sure: { type: 'boolean' },
    sources: { type: 'array', items: { type: 'string' } },
    kind: { enum: ['fact', 'guess'] },
    when: { type: 'string', format: 'date' },
    detail: { type: 'object', properties: { note: { type: 'string' }, extra: { type: 'string' } }, required: ['note'], additionalProperties: false },
    optional: { type: 'string' },
  },
  required: ['answer', 'confidence', 'sure', 'sources', 'kind', 'when', 'detail'],
  additionalProperties: false,
};
const minimal = { answer: '', confidence: 0, sure: false, sources: [], kind: 'fact', when: '1970-01-01', detail: { note: '' } };

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      minimal: { steps: turnSteps },
      scripted: { steps: turnSteps, output: ['oops, not JSON', '```json\n{"answer": "{{question}}"}\n```', { answer: '{{question}}: {{toolResults}}' }] },
      single: { steps: turnSteps, output: { answer: 'always "{{question}}"' } },
      faulty: { steps: turnSteps, output: { answer: 'after the fault' }, faults: [{ step: 2, kind: 'output', status: 529, times: 1 }] },
      cut: { steps: [...turnSteps, { content: [{ type: 'text', text: 'unused' }], minMaxTokens: 500 }], output: { answer: 'a long enough answer' } },
      turns: { perTurn: true, steps: turnSteps, output: { answer: '{{question}} / {{lastToolResult}}' } },
      paced: { steps: turnSteps, streamDelayMs: 5, output: { answer: 'one two three four' } },
    },
    messageBatches: { processingMs: 20 },
  });
  client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

/** One turn of the loop: the question, the echo call, its result, the text. */
async function playTurn(model: string, history: Anthropic.MessageParam[], question: string): Promise<Anthropic.MessageParam[]> {
  const asked: Anthropic.MessageParam[] = [...history, { role: 'user', content: question }];
  const first = await client.messages.create({ model, max_tokens: 100, tools: [echo], messages: asked });
  const use = first.content.find((b) => b.type === 'tool_use')!;
  const results: Anthropic.MessageParam = {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: use.id, content: `Echo: ${(use.input as { message: string }).message}` }],
  };
  const withResults = [...asked, { role: 'assistant' as const, content: first.content }, results];
  const second = await client.messages.create({ model, max_tokens: 100, tools: [echo], messages: withResults });
  return [...withResults, { role: 'assistant', content: second.content }];
}

const ask: Anthropic.MessageParam = { role: 'user', content: OUTPUT_ASK };
/** A repair round after an answer: the JSON written, and the problems with it. */
const repair = (written: string): Anthropic.MessageParam[] => [
  { role: 'assistant', content: written },
  { role: 'user', content: `${OUTPUT_REPAIR_ASK}\n- /answer: must be string` },
];

/** The structured path: the turn's tools (to define what history names) and tool_choice none. */
const structured = (model: string, messages: Anthropic.MessageParam[], extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) =>
  client.messages.create({
    model,
    max_tokens: 1000,
    tools: [echo],
    tool_choice: { type: 'none' },
    output_config: { format: { type: 'json_schema', schema } },
    messages,
    ...extra,
  });
/** The instructed path: the schema in the system prompt, the ask last. */
const instructed = (model: string, messages: Anthropic.MessageParam[], extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) =>
  client.messages.create({ model, max_tokens: 1000, system: `Answer in JSON: ${JSON.stringify(schema)}`, tools: [echo], tool_choice: { type: 'none' }, messages, ...extra });

const textOf = (m: Anthropic.Message): string => m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('');

it('answers a structured request with the minimal instance of its schema, as one text block', async () => {
  const transcript = await playTurn('minimal', [], 'q');
  const reply = await structured('minimal', [...transcript, ask]);
  expect(reply.content).toEqual([{ type: 'text', text: JSON.stringify(minimal), citations: null }]);
  expect(reply.stop_reason).toBe('end_turn');
  expect(reply.stop_sequence).toBeNull();
  const record = stub.requests.at(-1)!;
  expect(record).toMatchObject({ kind: 'output', step: 2, scenario: 'minimal' });
  // Without the ask too: output_config.format alone makes an output request.
  const bare = await structured('minimal', [{ role: 'user', content: 'q' }], { tools: undefined, tool_choice: undefined });
  expect(JSON.parse(textOf(bare))).toEqual(minimal);
});

it('answers the instructed path with {} unless the scenario scripts an output', async () => {
  const transcript = await playTurn('minimal', [], 'q');
  expect(textOf(await instructed('minimal', [...transcript, ask]))).toBe('{}');
  expect(stub.requests.at(-1)!.kind).toBe('output');
  expect(textOf(await instructed('single', [...transcript, ask]))).toBe('{"answer":"always \\"q\\""}');
});

it('takes the ask appended to the last user message, beside its tool results', async () => {
  const transcript = await playTurn('single', [], 'q');
  // The turn stopped after a tool round: the ask goes at the end of the results' message.
  const cut = transcript.slice(0, 3);
  const results = cut[2]!.content as Anthropic.ContentBlockParam[];
  const messages: Anthropic.MessageParam[] = [...cut.slice(0, 2), { role: 'user', content: [...results, { type: 'text', text: OUTPUT_ASK }] }];
  expect(textOf(await instructed('single', messages))).toBe('{"answer":"always \\"q\\""}');
  expect(stub.requests.at(-1)).toMatchObject({ kind: 'output', step: 1 });
});

it("plays the scenario's output attempt by attempt, the last repeating; strings as written, objects as JSON, templates expanded", async () => {
  const transcript = await playTurn('scripted', [], 'q');
  const first = await structured('scripted', [...transcript, ask]);
  expect(textOf(first)).toBe('oops, not JSON');
  const second = await structured('scripted', [...transcript, ask, ...repair(textOf(first))]);
  expect(textOf(second)).toBe('```json\n{"answer": "q"}\n```');
  const third = await structured('scripted', [...transcript, ask, ...repair(textOf(first)), ...repair(textOf(second))]);
  expect(textOf(third)).toBe('{"answer":"q: Echo: q"}');
  const fourth = await structured('scripted', [...transcript, ask, ...repair(textOf(first)), ...repair(textOf(second)), ...repair(textOf(third))]);
  expect(textOf(fourth)).toBe(textOf(third));
  // Each repair is one step more, and still an output request.
  expect(stub.requests.slice(-4).map((r) => [r.kind, r.step])).toEqual([
    ['output', 2],
    ['output', 3],
    ['output', 4],
    ['output', 5],
  ]);
});

it('is an output request before a formatter one: the response_formatter tool offered with tool_choice none', async () => {
  const transcript = await playTurn('single', [], 'q');
  const reply = await instructed('single', [...transcript, ask], { tools: [echo, formatterTool] });
  expect(textOf(reply)).toBe('{"answer":"always \\"q\\""}');
  expect(requestKind({ tools: [formatterTool], tool_choice: { type: 'auto' }, messages: [...transcript, ask] })).toBe('output');
  expect(requestKind({ tools: [formatterTool], tool_choice: { type: 'auto' }, messages: transcript })).toBe('formatter');
});

it('ends the transcript with the ask: the repair rounds are not part of the turn', () => {
  const messages = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'text' },
    { role: 'user', content: OUTPUT_ASK },
    { role: 'assistant', content: '{}' },
    { role: 'user', content: `${OUTPUT_REPAIR_ASK} …` },
  ];
  expect(turnPosition(messages, false, 'output')).toEqual({ step: 2, question: 'q', from: 0, to: 3 });
  expect(turnPosition(messages, true, 'output')).toEqual({ step: 2, question: 'q', from: 0, to: 3 });
  // An ask of an earlier turn, answered, is history: the next question is a step again.
  const later = [...messages.slice(0, 4), { role: 'user', content: 'next question' }];
  expect(requestKind({ messages: later })).toBe('step');
});

it('streams the JSON as text deltas, the same message as the plain answer', async () => {
  const transcript = await playTurn('paced', [], 'q');
  const plain = await structured('paced', [...transcript, ask]);
  const stream = client.messages.stream({
    model: 'paced',
    max_tokens: 1000,
    tools: [echo],
    tool_choice: { type: 'none' },
    output_config: { format: { type: 'json_schema', schema } },
    messages: [...transcript, ask],
  });
  const deltas: string[] = [];
  for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') deltas.push(event.delta.text);
  const final = await stream.finalMessage();
  expect(deltas.length).toBeGreaterThan(1);
  expect(deltas.join('')).toBe('{"answer":"one two three four"}');
  expect(final.content).toEqual(plain.content);
  expect(final.stop_reason).toBe('end_turn');
});

it("fails as the scenario's output faults say", async () => {
  const transcript = await playTurn('faulty', [], 'q');
  const err = (await structured('faulty', [...transcript, ask]).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
  expect(err.status).toBe(529);
  expect(textOf(await structured('faulty', [...transcript, ask]))).toBe('{"answer":"after the fault"}');
});

it("cuts the JSON with stop max_tokens when max_tokens is below its step's minMaxTokens", async () => {
  const transcript = await playTurn('cut', [], 'q');
  const short = await structured('cut', [...transcript, ask], { max_tokens: 100 });
  expect(short.stop_reason).toBe('max_tokens');
  // The first half of '{"answer":"a long enough answer"}'.
  expect(textOf(short)).toBe('{"answer":"a lon');
  const enough = await structured('cut', [...transcript, ask], { max_tokens: 500 });
  expect(enough.stop_reason).toBe('end_turn');
  expect(textOf(enough)).toBe('{"answer":"a long enough answer"}');
});

it('stops at a stop sequence in the JSON', async () => {
  const transcript = await playTurn('single', [], 'q');
  const reply = await instructed('single', [...transcript, ask], { stop_sequences: ['"q'] });
  expect(reply).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '"q', content: [{ type: 'text', text: '{"answer":"always \\' }] });
});

it('perTurn: keys on the turn whose answer it asks for', async () => {
  const one = await playTurn('turns', [], 'one');
  const oneAnswered = await instructed('turns', [...one, ask]);
  expect(textOf(oneAnswered)).toBe('{"answer":"one / Echo: one"}');
  const two = await playTurn('turns', [...one, ask, { role: 'assistant', content: oneAnswered.content }], 'two');
  expect(textOf(await instructed('turns', [...two, ask]))).toBe('{"answer":"two / Echo: two"}');
  expect(stub.requests.filter((r) => r.kind === 'output').map((r) => r.step)).toEqual([2, 2]);
});

it('answers an output request in a Message Batch as /v1/messages does', async () => {
  const transcript = await playTurn('single', [], 'q');
  const batch = await client.messages.batches.create({
    requests: [{ custom_id: 'answer', params: { model: 'single', max_tokens: 1000, tools: [echo], tool_choice: { type: 'none' }, messages: [...transcript, ask] } }],
  });
  while ((await client.messages.batches.retrieve(batch.id)).processing_status !== 'ended') await new Promise((r) => setTimeout(r, 10));
  const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
  for await (const r of await client.messages.batches.results(batch.id)) results.push(r);
  expect(results[0]!.result).toMatchObject({ type: 'succeeded', message: { content: [{ type: 'text', text: '{"answer":"always \\"q\\""}' }] } });
  expect(stub.messageBatches.batches.at(-1)!.requests[0]).toMatchObject({ kind: 'output', step: 2 });
});
