import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { buildMessageParams } from '../../src/claude/call-claude';
import type { ClaudeRequest } from '../../src/core/contracts';

const tool = (name: string): Tool => ({ name, description: name, input_schema: { type: 'object', properties: {} } });

const input = (): ClaudeRequest => ({
  model: 'claude-sonnet-4-5',
  system: 'be brief',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [tool('a'), tool('b')],
  maxTokens: 100,
});

describe('buildMessageParams', () => {
  it('puts cache_control on the last tool and the system prompt, without mutating the input', () => {
    const i = input();
    const before = structuredClone(i);
    const p = buildMessageParams(i);
    expect(p.system).toEqual([{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }]);
    expect(p.tools?.[0]).toEqual(tool('a'));
    expect(p.tools?.[1]).toEqual({ ...tool('b'), cache_control: { type: 'ephemeral' } });
    expect(i).toEqual(before);
    expect(i.tools[1]).not.toHaveProperty('cache_control');
  });

  it('puts cache_control on the last block of the last user message, copying only that message', () => {
    const i = input();
    const p = buildMessageParams(i);
    expect(p.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }]);
    expect(i.messages).toEqual([{ role: 'user', content: 'hi' }]);

    const assistant = { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 't1', name: 'a', input: {} }] };
    const results = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: 'one' }] };
    const later = { ...input(), messages: [{ role: 'user' as const, content: 'hi' }, assistant, results] };
    const q = buildMessageParams(later);
    expect(q.messages[0]).toBe(later.messages[0]);
    expect(q.messages[1]).toBe(assistant); // Claude's content goes back untouched
    expect(q.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'one', cache_control: { type: 'ephemeral' } }] });
    expect(results.content[0]).not.toHaveProperty('cache_control');

    // A conversation ending on an assistant message (a prefill) gets no message breakpoint.
    const prefill = buildMessageParams({ ...input(), messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Sure' }] });
    expect(prefill.messages[1]).toEqual({ role: 'assistant', content: 'Sure' });
    expect(buildMessageParams(i, { cache: false }).messages).toBe(i.messages);
  });

  it('sends plain system and tools with caching off', () => {
    const p = buildMessageParams(input(), { cache: false });
    expect(p.system).toBe('be brief');
    expect(p.tools).toEqual([tool('a'), tool('b')]);
  });

  it('leaves out tool_choice, thinking, empty tools and an empty system', () => {
    const p = buildMessageParams({ ...input(), tools: [], system: '' });
    expect(Object.keys(p).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });

  it('passes tool_choice and thinking through', () => {
    const p = buildMessageParams({
      ...input(),
      toolChoice: { type: 'tool', name: 'a' },
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(p.tool_choice).toEqual({ type: 'tool', name: 'a' });
    expect(p.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(p.max_tokens).toBe(100);
    expect(p.model).toBe('claude-sonnet-4-5');
  });
});
