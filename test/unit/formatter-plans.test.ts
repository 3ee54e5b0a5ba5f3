import type { ClaudeCallOutput, FormatRequest } from '../../src/core/contracts';
import { FORMATTER_TOOL_NAME } from '../../src/schemas/response-formatter-tool';
import { planFormatterCall } from '../../src/message-batches/formatter-plan';
import { FormatterPlans } from '../../src/message-batches/formatter-plans';

const input: FormatRequest = { model: 'claude-sonnet-4-6', maxTokens: 1000, messages: [{ role: 'user', content: 'what is 2 + 2?' }] };
const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

function reply(content: unknown[]): ClaudeCallOutput {
  return { content: content as ClaudeCallOutput['content'], stopReason: 'tool_use', usage, model: input.model, requestId: 'msg_1', costUsd: 0.001 };
}

const answer = reply([{ type: 'tool_use', id: 'toolu_1', name: FORMATTER_TOOL_NAME, input: { conversation: [{ type: 'text', content: '4' }] } }]);
const notATool = reply([{ type: 'text', text: 'four' }]);

describe('FormatterPlans', () => {
  it("finishes the formatter with a reply that makes its answer: the same answer the turn's own planning gives", async () => {
    const plans = new FormatterPlans();
    plans.keep('c1', input, [], 100);
    const done = await plans.finish('c1', answer);
    const planned = await planFormatterCall(input, [answer]);
    expect('done' in planned && planned.done).toEqual(done);
    expect(done?.output.conversation).toEqual([{ type: 'text', content: '4' }]);
    expect(plans.size).toBe(0);
    // Once only: a reply delivered again goes to its turn as the message.
    expect(await plans.finish('c1', answer)).toBeUndefined();
  });

  it('leaves to the turn a reply after which the formatter needs another call, and one whose plan it does not keep', async () => {
    const plans = new FormatterPlans();
    plans.keep('c1', input, [], 100);
    const planned = await planFormatterCall(input, [notATool]);
    expect('request' in planned).toBe(true);
    expect(await plans.finish('c1', notATool)).toBeUndefined();
    expect(await plans.finish('unknown', answer)).toBeUndefined();
  });

  it('keeps at most its bytes, dropping the oldest plans first', async () => {
    const plans = new FormatterPlans(250);
    plans.keep('a', input, [], 100);
    plans.keep('b', input, [], 100);
    plans.keep('c', input, [], 100);
    expect(plans.size).toBe(2);
    expect(await plans.finish('a', answer)).toBeUndefined();
    expect(await plans.finish('c', answer)).toBeDefined();
    plans.drop('b');
    expect(plans.size).toBe(0);
  });
});
