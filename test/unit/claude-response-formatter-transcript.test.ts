import { ApplicationFailure } from '@temporalio/common';
import type { MessageParam } from '../../src/core/contracts';
import { isForcedToolRefusal, withFinalRequest } from '../../src/claude/response-formatter';

const ASK = 'give the answer';

describe('withFinalRequest', () => {
  it('adds a user message after a final assistant message', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }] },
    ];
    const before = structuredClone(messages);
    expect(withFinalRequest(messages, ASK)).toEqual([...messages, { role: 'user', content: ASK }]);
    expect(messages).toEqual(before);
  });

  it('appends a text block after the tool_results of a final user message', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'x', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'r' }] },
    ];
    const before = structuredClone(messages);
    const out = withFinalRequest(messages, ASK);
    expect(out).toHaveLength(3);
    expect(out[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'r' },
        { type: 'text', text: ASK },
      ],
    });
    expect(messages).toEqual(before);
  });

  it('turns a final string user message into blocks', () => {
    expect(withFinalRequest([{ role: 'user', content: 'q' }], ASK)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'q' },
          { type: 'text', text: ASK },
        ],
      },
    ]);
  });

  it('answers tool_use blocks a final assistant message left unanswered', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'calling' },
          { type: 'tool_use', id: 't1', name: 'x', input: {} },
          { type: 'tool_use', id: 't2', name: 'y', input: {} },
        ],
      },
    ];
    const last = withFinalRequest(messages, ASK).at(-1);
    expect(last?.role).toBe('user');
    const content = last?.content as Array<{ type: string; tool_use_id?: string }>;
    expect(content.map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'text']);
    expect(content.map((b) => b.tool_use_id)).toEqual(['t1', 't2', undefined]);
  });

  it('handles an empty transcript', () => {
    expect(withFinalRequest([], ASK)).toEqual([{ role: 'user', content: ASK }]);
  });
});

describe('isForcedToolRefusal', () => {
  it('matches a 400 about tool_choice only', () => {
    const refusal = ApplicationFailure.create({
      type: 'ClaudeInvalidRequest',
      message: 'Claude API 400 invalid_request_error: tool_choice forces tool use, which is not supported with thinking',
      nonRetryable: true,
    });
    expect(isForcedToolRefusal(refusal)).toBe(true);
    const other = ApplicationFailure.create({ type: 'ClaudeInvalidRequest', message: 'Claude API 400: bad tool name' });
    expect(isForcedToolRefusal(other)).toBe(false);
    const overloaded = ApplicationFailure.create({ type: 'ClaudeOverloaded', message: 'tool_choice' });
    expect(isForcedToolRefusal(overloaded)).toBe(false);
    expect(isForcedToolRefusal(new Error('tool_choice'))).toBe(false);
  });
});
