/**
 * The request's `stop_sequences` in the stub's answers, through the real SDK over HTTP: the answer
 * ends just before the earliest stop sequence in its text, with `stop_reason: "stop_sequence"` and
 * the sequence in `stop_sequence`, plain and streamed.
 */
import Anthropic from '@anthropic-ai/sdk';
import { startStubModel, type StubModel } from '../../src/stub';

let stub: StubModel;
let client: Anthropic;
const echo = { name: 'everything__echo', input_schema: { type: 'object' as const, properties: { message: { type: 'string' } } } };
const citation = { type: 'web_search_result_location' as const, url: 'https://example.com/a', title: 'A', cited_text: 'A says hello' };

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      mixed: {
        steps: [
          {
            content: [
              { type: 'thinking', thinking: 'I will say END in my head only.' },
              { type: 'text', text: 'First part. ' },
              { type: 'text', text: 'Second part, then END and more.' },
              { type: 'tool_use', name: 'everything__echo', input: { message: 'END' } },
            ],
          },
        ],
      },
      cited: { steps: [{ content: [{ type: 'text', text: 'A says hello. STOP Then more.', citations: [citation] }] }] },
      leading: { steps: [{ content: [{ type: 'text', text: 'kept' }, { type: 'text', text: 'STOP at once' }] }] },
    },
  });
  client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
});
afterAll(() => stub.close());

const params = (model: string, stop_sequences?: string[]): Anthropic.MessageCreateParamsNonStreaming => ({
  model,
  max_tokens: 100,
  tools: [echo],
  messages: [{ role: 'user', content: 'q' }],
  ...(stop_sequences ? { stop_sequences } : {}),
});

it('cuts the answer just before the stop sequence: the blocks after it dropped, thinking and tool input not matched', async () => {
  const reply = await client.messages.create(params('mixed', ['END']));
  expect(reply.stop_reason).toBe('stop_sequence');
  expect(reply.stop_sequence).toBe('END');
  expect(reply.content.map((b) => b.type)).toEqual(['thinking', 'text', 'text']);
  expect(reply.content.slice(1)).toMatchObject([
    { type: 'text', text: 'First part. ' },
    { type: 'text', text: 'Second part, then ' },
  ]);
});

it('stops at the earliest occurrence, whichever sequence it is', async () => {
  const reply = await client.messages.create(params('mixed', ['more', 'then', 'part.']));
  expect(reply.stop_sequence).toBe('part.');
  expect(reply.content.slice(1)).toMatchObject([{ type: 'text', text: 'First ' }]);
  expect(reply.content).toHaveLength(2);
});

it('answers as scripted when no sequence is in the text: a tool input is never matched', async () => {
  const reply = await client.messages.create(params('mixed', ['absent', 'echo']));
  expect(reply.stop_reason).toBe('tool_use');
  expect(reply.stop_sequence).toBeNull();
  expect(reply.content.map((b) => b.type)).toEqual(['thinking', 'text', 'text', 'tool_use']);
  const plain = await client.messages.create(params('mixed'));
  expect(plain.stop_sequence).toBeNull();
  expect(plain.content).toEqual(reply.content);
});

it('drops a block the sequence starts', async () => {
  const reply = await client.messages.create(params('leading', ['STOP']));
  expect(reply.content).toMatchObject([{ type: 'text', text: 'kept' }]);
  expect(reply.content).toHaveLength(1);
  expect(reply.stop_sequence).toBe('STOP');
});

it('signs the citations of a cut block for its new text: sent back, it is accepted', async () => {
  const reply = await client.messages.create(params('cited', ['STOP']));
  expect(reply.content).toMatchObject([{ type: 'text', text: 'A says hello. ', citations: [{ cited_text: 'A says hello' }] }]);
  const next = await client.messages.create({
    ...params('cited', ['STOP']),
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: reply.content },
      { role: 'user', content: 'more?' },
    ],
  });
  expect(next.stop_reason).toBe('stop_sequence');
});

it('streams the same message, with the stop reason and sequence in message_delta', async () => {
  const plain = await client.messages.create(params('mixed', ['END']));
  const stream = client.messages.stream(params('mixed', ['END']));
  const deltas: Anthropic.RawMessageDeltaEvent[] = [];
  const startedWith: unknown[] = [];
  for await (const event of stream) {
    if (event.type === 'message_delta') deltas.push(event);
    // The SDK goes on to update the started message: read it as it came.
    if (event.type === 'message_start') startedWith.push(event.message.stop_sequence);
  }
  expect(startedWith).toEqual([null]);
  expect(deltas.map((d) => d.delta)).toEqual([{ stop_reason: 'stop_sequence', stop_sequence: 'END' }]);
  const final = await stream.finalMessage();
  expect(final.content).toEqual(plain.content);
  expect(final.stop_reason).toBe('stop_sequence');
  expect(final.stop_sequence).toBe('END');
});
