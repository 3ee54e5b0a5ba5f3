/** The loop's stop rules (src/core/stop-rules.ts): pure, one rule per test. */
import type { ContentBlock } from '../../src/core/contracts';
import { outcomeOfReply, replyToKeep, stopAfterToolRound, stopBeforeStep, type TurnLimits } from '../../src/core/stop-rules';

const text = (t: string) => ({ type: 'text', text: t, citations: null }) as ContentBlock;
const use = (id: string) => ({ type: 'tool_use', id, name: 'srv__echo', input: {} }) as ContentBlock;
const limits: TurnLimits = { maxSteps: 3, loopPolicy: 'native' };
const round = { repeated: false, overBudget: false, tokensUsed: 100, reply: [text('x'), use('a')] };

describe('stopBeforeStep', () => {
  it('lets steps run until maxSteps have been taken', () => {
    expect(stopBeforeStep(0, limits)).toBeUndefined();
    expect(stopBeforeStep(2, limits)).toBeUndefined();
    expect(stopBeforeStep(3, limits)).toBe('max_steps');
  });
});

describe('outcomeOfReply', () => {
  it('runs the tools of a reply that asks for them', () => {
    expect(outcomeOfReply({ stopReason: 'tool_use', content: [text('let me look'), use('a')] })).toEqual({ next: 'run-tools' });
  });
  it('completes on a reply without tool calls', () => {
    expect(outcomeOfReply({ stopReason: 'end_turn', content: [text('done')] })).toEqual({ next: 'stop', reason: 'completed' });
  });
  it('asks again after pause_turn, without a tool round', () => {
    expect(outcomeOfReply({ stopReason: 'pause_turn', content: [text('…')] })).toEqual({ next: 'ask-again' });
  });
  it('stops on a refusal, even with tool calls in it', () => {
    expect(outcomeOfReply({ stopReason: 'refusal', content: [use('a')] })).toEqual({ next: 'stop', reason: 'refusal' });
  });
  it('stops with max_tokens on a reply cut at max_tokens, inside a tool_use or not', () => {
    expect(outcomeOfReply({ stopReason: 'max_tokens', content: [text('half'), use('a')] })).toEqual({ next: 'stop', reason: 'max_tokens' });
    expect(outcomeOfReply({ stopReason: 'max_tokens', content: [text('half a sentence')] })).toEqual({ next: 'stop', reason: 'max_tokens' });
  });
  it('stops with context_window on a reply that ran out of context window (compaction already tried), tool calls or not', () => {
    expect(outcomeOfReply({ stopReason: 'model_context_window_exceeded', content: [text('half')] })).toEqual({ next: 'stop', reason: 'context_window' });
    expect(outcomeOfReply({ stopReason: 'model_context_window_exceeded', content: [use('a')] })).toEqual({ next: 'stop', reason: 'context_window' });
  });
  it('runs finished tool calls of a reply cut after them', () => {
    expect(outcomeOfReply({ stopReason: 'max_tokens', content: [use('a'), text('and then')] })).toEqual({ next: 'run-tools' });
  });
});

describe('replyToKeep', () => {
  it('keeps a reply whole', () => {
    const content = [text('a'), use('b')];
    expect(replyToKeep({ stopReason: 'tool_use', content })).toBe(content);
  });
  it('drops the unfinished tool_use of a reply cut inside it, keeping what was said', () => {
    expect(replyToKeep({ stopReason: 'max_tokens', content: [text('said'), use('cut')] })).toEqual([text('said')]);
  });
  it('drops the unfinished tool_use of a reply cut by the end of the context window', () => {
    expect(replyToKeep({ stopReason: 'model_context_window_exceeded', content: [text('said'), use('cut')] })).toEqual([text('said')]);
  });
  it('keeps nothing when the cut tool_use was all there was', () => {
    expect(replyToKeep({ stopReason: 'max_tokens', content: [use('cut')] })).toBeUndefined();
  });
});

describe('stopAfterToolRound', () => {
  it('goes on when no budget is reached', () => {
    expect(stopAfterToolRound(round, limits)).toBeUndefined();
  });
  it('stops on a repeated call before any budget', () => {
    expect(stopAfterToolRound({ ...round, repeated: true, overBudget: true }, { ...limits, maxTokens: 1 })).toBe('repeated_call');
  });
  it('stops when the tool-call budget is used up', () => {
    expect(stopAfterToolRound({ ...round, overBudget: true }, { ...limits, maxTokens: 1 })).toBe('max_tool_calls');
  });
  it('stops when the turn token budget is reached', () => {
    expect(stopAfterToolRound({ ...round, tokensUsed: 500 }, { ...limits, maxTokens: 500 })).toBe('max_tokens');
    expect(stopAfterToolRound({ ...round, tokensUsed: 499 }, { ...limits, maxTokens: 500 })).toBeUndefined();
  });
  it('gather-then-format goes on only while Claude says NEED MORE DATA', () => {
    const gather: TurnLimits = { ...limits, loopPolicy: 'gather-then-format' };
    expect(stopAfterToolRound(round, gather)).toBe('completed');
    expect(stopAfterToolRound({ ...round, reply: [text('NEED MORE DATA: the sum too'), use('a')] }, gather)).toBeUndefined();
  });
});
