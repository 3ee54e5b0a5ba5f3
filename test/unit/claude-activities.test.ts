/** The activity wrappers in a mock activity context: heartbeats, cancellation, config. */
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { makeClaudeActivities } from '../../activities/claude';
import { createClaudeClient } from '../../src/claude/client';
import { resolveClaudeConfig } from '../../src/claude/config';
import { TranscriptCache } from '../../src/claude/transcript-cache';
import type { ClaudeCallInput, ClaudeCallOutput, FormatResponseInput, MessageParam, TranscriptRef } from '../../src/core/contracts';
import { transcriptDigest } from '../../src/core/transcript-digest';
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
/** A reference to `messages` that the activities' transcript cache answers (no workflow to query here). */
const transcript: TranscriptRef = { workflowId: 'wf', runId: 'run', count: 1, digest: transcriptDigest([], messages), tail: messages };

const call = (model: string): ClaudeCallInput => ({ model, transcript, maxTokens: 100, step: 1 });

function activities(config: Record<string, unknown> = {}) {
  const transcripts = new TranscriptCache();
  transcripts.remember({ ...transcript, count: 0 }, { messages: [], tools: [] });
  return makeClaudeActivities({
    client: createClaudeClient({ baseURL: stub.url, env: {} }),
    config: resolveClaudeConfig(config),
    transcripts,
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
    )) as ClaudeCallOutput;
    expect(out.content).toEqual([{ type: 'text', text: 'hello', citations: null }]);
    expect(out.costUsd).toBeGreaterThan(0);
    expect(beats).toHaveBeenCalled();
    expect(stub.requests[0]?.stream).toBe(true);
  });

  it('claude: reads the conversation by reference and sends it', async () => {
    await new MockActivityEnvironment().run(activities({ promptCaching: false }).claude, call('chat'));
    expect(stub.requests[0]?.body.messages).toEqual(messages);
  });

  it('claude: honours promptCaching: false', async () => {
    await new MockActivityEnvironment().run(activities({ promptCaching: false }).claude, {
      ...call('chat'),
      system: 's',
    });
    expect(stub.requests[0]?.body.system).toBe('s');
  });

  it('claude: cancellation aborts the request and surfaces as CancelledFailure', async () => {
    const env = new MockActivityEnvironment();
    const running = env.run(activities().claude, call('slow'));
    setTimeout(() => env.cancel(), 100);
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  });

  it('formatResponse: runs the formatter', async () => {
    const input: FormatResponseInput = { model: 'chat', transcript, maxTokens: 100 };
    const out = await new MockActivityEnvironment().run(activities().formatResponse, input);
    expect(out).toMatchObject({
      mode: 'forced',
      calls: 1,
      costUsd: 0,
      output: { conversation: [{ type: 'text', content: 'hello' }] },
    });
  });
});
