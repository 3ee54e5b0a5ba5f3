import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { buildMessageParams } from '../../src/claude/call-claude';
import type { ClaudeCallInput } from '../../src/core/contracts';

const tool = (name: string): Tool => ({ name, description: name, input_schema: { type: 'object', properties: {} } });

const input = (): ClaudeCallInput => ({
  model: 'claude-sonnet-4-5',
  system: 'be brief',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [tool('a'), tool('b')],
  maxTokens: 100,
  step: 1,
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
