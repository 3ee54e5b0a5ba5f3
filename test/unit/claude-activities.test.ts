/** The activity wrappers in a mock activity context: heartbeats, cancellation, config. */
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { makeClaudeActivities } from '../../activities/claude';
import { createClaudeClient } from '../../src/claude/client';
import { resolveClaudeConfig } from '../../src/claude/config';
import type { ClaudeCallInput, ClaudeCallOutput, FormatResponseInput, MessageParam } from '../../src/core/contracts';
import { segment, toolsSegment } from '../../src/core/transcript-segment';
import { startStubModel, type StubModel } from '../../src/stub';

let stub: StubModel;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      chat: {
        steps: [{ content: [{ type: 'text', text: 'hello' }] }],
        formatter: { conversation: [{ type: 'text', content: 'hello' }] },
      },
      slow: { steps: [{ content: [{ type: 'text', text: 'late' }] }], latencyMs: 1000 },
    },
  });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const messages: MessageParam[] = [{ role: 'user', content: 'hi' }];
const conversation = segment(messages);

const call = (model: string): ClaudeCallInput => ({ model, maxTokens: 100, step: 1 });

function activities(config: Record<string, unknown> = {}) {
  return makeClaudeActivities({
    client: createClaudeClient({ baseURL: stub.url }),
    config: resolveClaudeConfig(config),
  });
}

describe('makeClaudeActivities', () => {
  it('claude: streams with heartbeats when configured, and prices the call', async () => {
    const env = new MockActivityEnvironment();
    const beats = jest.fn();
    env.on('heartbeat', beats);
    const out = (await env.run(
      activities({ stream: true, pricing: { chat: { input: 1, output: 1 } } }).claude,
      call('chat'),
      conversation,
    )) as ClaudeCallOutput;
    expect(out.content).toEqual([{ type: 'text', text: 'hello', citations: null }]);
    expect(out.costUsd).toBeGreaterThan(0);
    expect(beats).toHaveBeenCalled();
    expect(stub.requests[0]?.stream).toBe(true);
  });

  it('claude: sends the messages and tools of its segments, in order', async () => {
    const tool = { name: 'srv__echo', description: 'echo', input_schema: { type: 'object' as const, properties: {} } };
    const more = segment([{ role: 'assistant', content: 'hello' }, { role: 'user', content: 'again' }]);
    await new MockActivityEnvironment().run(activities({ promptCaching: false }).claude, call('chat'), toolsSegment([tool]), conversation, more);
    expect(stub.requests[0]?.body.messages).toEqual([...messages, ...more.transcriptSegment]);
    expect(stub.requests[0]?.body.tools).toEqual([tool]);
  });

  it('claude: honours promptCaching: false', async () => {
    await new MockActivityEnvironment().run(activities({ promptCaching: false }).claude, {
      ...call('chat'),
      system: 's',
    }, conversation);
    expect(stub.requests[0]?.body.system).toBe('s');
  });

  it('claude: cancellation aborts the request and surfaces as CancelledFailure', async () => {
    const env = new MockActivityEnvironment();
    const running = env.run(activities().claude, call('slow'), conversation);
    setTimeout(() => env.cancel(), 100);
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  });

  it('formatResponse: runs the formatter', async () => {
    const input: FormatResponseInput = { model: 'chat', maxTokens: 100 };
    const out = await new MockActivityEnvironment().run(activities().formatResponse, input, conversation);
    expect(out).toMatchObject({
      mode: 'forced',
      calls: 1,
      costUsd: 0,
      output: { conversation: [{ type: 'text', content: 'hello' }] },
    });
  });
});
