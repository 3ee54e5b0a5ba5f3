/**
 * The stream record's rules: deltas join per publication, a result's record (lengths) expands to
 * the same parts as the live one (texts), a retried attempt continues the record after a retry
 * part, the last attempt's deltas always join to the final texts, and the answer grows only by
 * continuation as the formatter's partial JSON arrives.
 */
import type { MessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { StreamRecorder } from '../../src/claude/stream-recorder';
import { buildResponse, partialAnswerText } from '../../src/core/response';
import { compactRecord, expandRecord, type StreamRecord } from '../../src/core/stream-record';

const textStart = (index: number): MessageStreamEvent =>
  ({
    type: 'content_block_start',
    index,
    content_block: { type: 'text', text: '', citations: null },
  }) as MessageStreamEvent;
const textDelta = (index: number, text: string): MessageStreamEvent =>
  ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }) as MessageStreamEvent;
const toolStart = (index: number, name: string): MessageStreamEvent =>
  ({
    type: 'content_block_start',
    index,
    content_block: { type: 'tool_use', id: 'toolu_1', name, input: {} },
  }) as MessageStreamEvent;
const jsonDelta = (index: number, partial_json: string): MessageStreamEvent =>
  ({
    type: 'content_block_delta',
    index,
    delta: { type: 'input_json_delta', partial_json },
  }) as MessageStreamEvent;

/** Every recorder made, closed after each test so that no publication timer outlives it. */
const made: StreamRecorder[] = [];
afterEach(() => made.splice(0).forEach((r) => r.close()));

function recorder(opts: { previous?: StreamRecord; attempt?: number; call?: 'step' | 'formatter' } = {}) {
  const published: StreamRecord[] = [];
  const r = new StreamRecorder({
    attempt: opts.attempt ?? 1,
    previous: opts.previous,
    call: opts.call ?? 'step',
    request: { reasoning: false },
    publish: (record) => published.push(record),
    publishEveryMs: 60_000, // only the first delta publishes at once: the rest join
  });
  made.push(r);
  return { r, published };
}

test('the first delta is published at once; later ones join until the next publication', () => {
  const { r, published } = recorder();
  r.onEvent(textStart(0));
  r.onEvent(textDelta(0, 'Hello'));
  r.onEvent(textDelta(0, ' wide'));
  r.onEvent(textDelta(0, ' world'));
  expect(published.at(-1)!.parts).toEqual([['t', 'Hello']]);
  expect(r.record.parts).toEqual([
    ['t', 'Hello'],
    ['t', ' wide world'],
  ]);
  const final = r.finish({ t: 'Hello wide world' });
  expect(final.parts).toEqual([
    ['t', 5],
    ['t', 11],
  ]);
  expect(expandRecord(final, { t: 'Hello wide world' })).toEqual(r.record.parts);
});

test('a part handed out (a heartbeat between publications) never grows: later deltas go into new parts', () => {
  const { r } = recorder();
  r.onEvent(textStart(0));
  r.onEvent(textDelta(0, 'word1 '));
  r.onEvent(textDelta(0, 'word2 '));
  const beat = r.record.parts.map((p) => [...p]);
  r.onEvent(textDelta(0, 'word3 '));
  const later = r.record.parts;
  expect(later.slice(0, beat.length)).toEqual(beat);
  expect(later.map((p) => p[1]).join('')).toBe('word1 word2 word3 ');
});

test('two text blocks are separated, and the final text is what stepText joins', () => {
  const { r } = recorder();
  r.onEvent(textStart(0));
  r.onEvent(textDelta(0, 'one'));
  r.onEvent(toolStart(1, 'srv__tool'));
  r.onEvent(textStart(2));
  r.onEvent(textDelta(2, 'two'));
  const final = r.finish({ t: 'one\n\ntwo' });
  expect(
    expandRecord(final, { t: 'one\n\ntwo' })
      .map((p) => p[1])
      .join(''),
  ).toBe('one\n\ntwo');
});

test('a retried attempt keeps the earlier record, marks the retry, and only its own deltas count as final', () => {
  const first = recorder();
  first.r.onEvent(textStart(0));
  first.r.onEvent(textDelta(0, 'partial te'));
  const left = first.r.close();

  const second = recorder({ previous: left, attempt: 2 });
  expect(second.r.record.parts).toEqual([
    ['t', 'partial te'],
    ['x', 2, expect.stringContaining('attempt 1')],
  ]);
  second.r.onEvent(textStart(0));
  second.r.onEvent(textDelta(0, 'full text'));
  const final = second.r.finish({ t: 'full text' });
  expect(final).toMatchObject({ attempt: 2, first: 1 });
  // The superseded attempt's text stays as text; the final attempt's is lengths.
  expect(final.parts).toEqual([
    ['t', 'partial te'],
    ['x', 2, expect.any(String)],
    ['t', 9],
  ]);
  expect(expandRecord(final, { t: 'full text' })).toEqual(second.r.record.parts);
});

test('a final text that does not continue what streamed is sent again whole, after a retry part', () => {
  const { r } = recorder();
  r.onEvent(textStart(0));
  r.onEvent(textDelta(0, 'draft'));
  const final = r.finish({ t: 'something else' });
  const parts = expandRecord(final, { t: 'something else' });
  expect(parts.slice(-2)).toEqual([
    ['x', 1, expect.any(String)],
    ['t', 'something else'],
  ]);
});

test("the formatter's answer streams from its partial JSON, only ever growing, and joins to the final answer", () => {
  const output = {
    conversation: [
      { type: 'text' as const, content: 'First "part", with \\ escapes.' },
      { type: 'text' as const, content: 'Second part.' },
    ],
  };
  const json = JSON.stringify(output);
  const { r } = recorder({ call: 'formatter' });
  r.onEvent(toolStart(0, 'response_formatter'));
  let previous = '';
  for (let i = 0; i < json.length; i += 3) {
    r.onEvent(jsonDelta(0, json.slice(i, i + 3)));
    const streamed = r.record.parts.map((p) => (p[0] === 'a' ? String(p[1]) : '')).join('');
    expect(streamed.startsWith(previous)).toBe(true);
    previous = streamed;
  }
  const answer = buildResponse(output).conversation;
  expect(previous).toBe(answer);
  const final = r.finish({ a: answer });
  expect(
    expandRecord(final, { a: answer })
      .map((p) => p[1])
      .join(''),
  ).toBe(answer);
});

test('partialAnswerText stops at a part not yet known to be text', () => {
  expect(partialAnswerText({ conversation: [{ type: 'text', content: 'a' }, { type: 'te' }] })).toBe('a');
  expect(
    partialAnswerText({
      conversation: [{ type: 'text', content: 'a' }, { type: 'artifact' }, { type: 'text', content: 'b' }],
    }),
  ).toBe('a');
  expect(partialAnswerText(undefined)).toBe('');
});

test('compacting and expanding a record with no final texts keeps it', () => {
  const record: StreamRecord = { attempt: 1, first: 1, parts: [['t', 'abc']] };
  expect(expandRecord(compactRecord(record), { t: 'abc' })).toEqual(record.parts);
});
