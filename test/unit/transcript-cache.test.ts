import { TranscriptCache } from '../../src/claude/transcript-cache';
import type { ContentBlock, MessageParam, Tool, TranscriptRef } from '../../src/core/contracts';
import { TranscriptDigests, transcriptDigest } from '../../src/core/transcript-digest';

const tools: Tool[] = [{ name: 'everything__echo', description: 'Echoes', input_schema: { type: 'object', properties: { message: { type: 'string' } } } }];
const question: MessageParam = { role: 'user', content: 'echo hi' };
// Shaped as the API answers; the SDK's types also require fields the stub leaves out.
const reply = [{ type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: { message: 'hi' } }] as unknown as ContentBlock[];
const results: MessageParam = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Echo: hi' }] };
const transcript: MessageParam[] = [question, { role: 'assistant', content: reply }, results];

function ref(messages: MessageParam[], extra: Partial<TranscriptRef> = {}): TranscriptRef {
  return { workflowId: 'wf', runId: 'run', count: messages.length, digest: transcriptDigest(tools, messages), ...extra };
}

describe('transcript digests', () => {
  it('extend lazily to the same value as computing at once, and change with any message', () => {
    const messages: MessageParam[] = [question];
    const digests = new TranscriptDigests(() => tools, () => messages);
    expect(digests.upTo(1)).toBe(transcriptDigest(tools, [question]));
    messages.push(transcript[1]!, transcript[2]!);
    expect(digests.upTo(3)).toBe(transcriptDigest(tools, transcript));
    expect(digests.upTo(1)).toBe(transcriptDigest(tools, [question]));
    expect(transcriptDigest(tools, [{ role: 'user', content: 'echo ho' }])).not.toBe(digests.upTo(1));
    expect(transcriptDigest([], [question])).not.toBe(digests.upTo(1));
  });

  it('do not depend on key order (activities see messages after a JSON round trip)', () => {
    const reordered = JSON.parse(JSON.stringify({ content: reply, role: 'assistant' })) as MessageParam;
    expect(transcriptDigest(tools, [question, reordered])).toBe(transcriptDigest(tools, [question, { role: 'assistant', content: reply }]));
  });
});

describe('TranscriptCache', () => {
  it('answers the next call from the previous call plus its reply and the tail', () => {
    const cache = new TranscriptCache();
    const first = ref([question]);
    expect(cache.lookup(first)).toBeUndefined(); // nothing held yet: the query answers
    cache.remember(first, { messages: [question], tools }, reply);
    const hit = cache.lookup(ref(transcript, { tail: [results] }));
    expect(hit).toEqual({ messages: transcript, tools });
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, turns: 1 });
  });

  it('misses when the workflow holds something else: changed reply, missing tail, other run, no digest', () => {
    const cache = new TranscriptCache();
    cache.remember(ref([question]), { messages: [question], tools }, reply);
    const edited: MessageParam[] = [question, { role: 'assistant', content: [{ type: 'text', text: 'cut' }] }, results];
    expect(cache.lookup(ref(edited, { tail: [results] }))).toBeUndefined();
    expect(cache.lookup(ref(transcript))).toBeUndefined(); // no tail: the cache lacks the tool results
    expect(cache.lookup(ref(transcript, { tail: [results], runId: 'other' }))).toBeUndefined();
    expect(cache.lookup({ workflowId: 'wf', runId: 'run', count: 3, tail: [results] })).toBeUndefined();
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 4 });
  });

  it('answers a repeated call with the same count (a reply cut at max_tokens asked again)', () => {
    const cache = new TranscriptCache();
    cache.remember(ref([question]), { messages: [question], tools }, reply);
    expect(cache.lookup(ref([question], { tail: [] }))).toEqual({ messages: [question], tools });
  });

  it('forgets a finished turn and evicts the least recently used over its turn and size bounds', () => {
    const cache = new TranscriptCache({ maxTurns: 2 });
    for (const id of ['a', 'b', 'c']) cache.remember({ ...ref([question]), workflowId: id }, { messages: [question], tools }, reply);
    expect(cache.stats().turns).toBe(2);
    expect(cache.lookup({ ...ref(transcript, { tail: [results] }), workflowId: 'a' })).toBeUndefined();
    cache.forget({ ...ref([question]), workflowId: 'b' });
    expect(cache.stats().turns).toBe(1);

    const small = new TranscriptCache({ maxChars: 10 });
    small.remember(ref([question]), { messages: [question], tools }, reply);
    expect(small.stats()).toMatchObject({ turns: 0, chars: 0 });
  });

  it('counts the characters it holds and releases them', () => {
    const cache = new TranscriptCache();
    cache.remember(ref([question]), { messages: [question], tools }, reply);
    const held = cache.stats().chars;
    expect(held).toBe(JSON.stringify(tools).length + JSON.stringify(question).length + JSON.stringify({ content: reply, role: 'assistant' }).length);
    cache.remember(ref(transcript), { messages: transcript, tools }, [{ type: 'text', text: 'done' }] as unknown as ContentBlock[]);
    expect(cache.stats().chars).toBeGreaterThan(held);
    cache.forget(ref(transcript));
    expect(cache.stats().chars).toBe(0);
  });
});
