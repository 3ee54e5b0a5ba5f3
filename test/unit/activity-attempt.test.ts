/**
 * The attempt stamped on the failures of the Claude and MCP activities, in one place: every
 * ApplicationFailure carries it in its details, a final one in its message too.
 */
import { Context } from '@temporalio/activity';
import { ActivityFailure, ApplicationFailure, ApplicationFailureCategory, CancelledFailure, RetryState } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { stampAttempt, stampingAttempt } from '../../activities/attempt';
import { makeClaudeActivities } from '../../activities/claude';
import { makeToolCallActivities } from '../../activities/tool-calls';
import { createClaudeClient } from '../../src/claude/client';
import { resolveClaudeConfig } from '../../src/claude/config';
import { segment } from '../../src/core/transcript-segment';
import { failedAttempt } from '../../src/core/tool-call-attempt';
import { McpPool } from '../../src/mcp/pool';
import { startStubModel, type StubModel } from '../../src/stub';

const retryPolicy = (maximumAttempts: number) => ({ maximumAttempts, initialInterval: 1000, backoffCoefficient: 2 });

describe('stampAttempt', () => {
  it('adds the attempt to the details of a retryable failure, keeping everything else', () => {
    const err = ApplicationFailure.create({
      type: 'ClaudeRateLimited',
      message: 'Claude API 429 rate_limit_error: slow down',
      details: [{ status: 429 }],
      nextRetryDelay: 2000,
      cause: new Error('inner'),
      category: ApplicationFailureCategory.BENIGN,
    });
    const stamped = stampAttempt(err, { attempt: 2, retryPolicy: retryPolicy(5) }) as ApplicationFailure;
    expect(stamped).toBeInstanceOf(ApplicationFailure);
    expect(stamped).toMatchObject({
      type: 'ClaudeRateLimited',
      message: 'Claude API 429 rate_limit_error: slow down',
      nonRetryable: false,
      details: [{ status: 429 }, { attempt: 2 }],
      nextRetryDelay: 2000,
      category: ApplicationFailureCategory.BENIGN,
    });
    expect(stamped.cause?.message).toBe('inner');
    expect(failedAttempt(new ActivityFailure('Activity task failed', 'claude', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'w', stamped))).toBe(2);
  });

  it('ends the message of a final failure with the attempt: non-retryable, or the retry policy\'s last attempt', () => {
    const refused = ApplicationFailure.create({ type: 'McpInvalidRequest', message: 'refused', nonRetryable: true });
    expect(stampAttempt(refused, { attempt: 1 })).toMatchObject({ message: 'refused; attempt 1', nonRetryable: true, details: [{ attempt: 1 }] });
    const broken = ApplicationFailure.create({ type: 'McpServerError', message: 'internal trouble' });
    expect(stampAttempt(broken, { attempt: 3, retryPolicy: retryPolicy(3) })).toMatchObject({ message: 'internal trouble; attempt 3', nonRetryable: false });
    expect(stampAttempt(broken, { attempt: 3, retryPolicy: retryPolicy(0) })).toMatchObject({ message: 'internal trouble' }); // unlimited
    expect(stampAttempt(broken, { attempt: 3 })).toMatchObject({ message: 'internal trouble' }); // policy unknown
  });

  it('makes a failure final when the activity gives up on it, saying why', () => {
    const capped = ApplicationFailure.create({ type: 'ClaudeRateLimitedNoRetryAfter', message: '429', nextRetryDelay: 30_000 });
    const giveUp = (f: ApplicationFailure, attempt: number) => (attempt >= 3 ? `${f.type} ${attempt} times` : undefined);
    expect(stampAttempt(capped, { attempt: 2 }, giveUp)).toMatchObject({ message: '429', nonRetryable: false });
    const final = stampAttempt(capped, { attempt: 3 }, giveUp) as ApplicationFailure;
    expect(final).toMatchObject({ message: '429; attempt 3 (gave up: ClaudeRateLimitedNoRetryAfter 3 times)', nonRetryable: true });
    expect(final.nextRetryDelay).toBeUndefined();
  });

  it('leaves anything else as it is: a cancellation, a plain error, a failure already stamped', () => {
    const cancelled = new CancelledFailure('cancelled');
    expect(stampAttempt(cancelled, { attempt: 2 })).toBe(cancelled);
    const plain = new Error('x');
    expect(stampAttempt(plain, { attempt: 2 })).toBe(plain);
    const once = stampAttempt(ApplicationFailure.create({ message: 'x', nonRetryable: true }), { attempt: 2 });
    expect(stampAttempt(once, { attempt: 2 })).toBe(once);
  });

  it('stampingAttempt stamps what the activity throws with its own attempt', async () => {
    const env = new MockActivityEnvironment({ attempt: 4 });
    const failing = () => stampingAttempt(Context.current(), async () => {
      throw ApplicationFailure.create({ type: 'T', message: 'no', nonRetryable: true });
    });
    await expect(env.run(failing)).rejects.toMatchObject({ type: 'T', message: 'no; attempt 4', details: [{ attempt: 4 }] });
    expect(await env.run(() => stampingAttempt(Context.current(), async () => 'ok'))).toBe('ok');
  });
});

describe('the activities stamp their failures', () => {
  let stub: StubModel;
  beforeAll(async () => {
    stub = await startStubModel({
      scenarios: {
        'spend-cap': { steps: [{ content: [{ type: 'text', text: 'never' }] }], faults: [{ step: 0, status: 429, times: -1 }] },
        'bad-request': { steps: [{ content: [{ type: 'text', text: 'never' }] }], faults: [{ step: 0, status: 400, times: -1, message: 'bad' }] },
      },
    });
  });
  afterAll(() => stub.close());

  const claude = (model: string, attempt: number) =>
    new MockActivityEnvironment({ attempt }).run(
      makeClaudeActivities({
        client: createClaudeClient({ baseURL: stub.url }),
        config: resolveClaudeConfig({ maxSpendCapAttempts: 3 }),
      }).claude,
      { model, maxTokens: 100, step: 1 },
      segment([{ role: 'user', content: 'hi' }]),
    );

  it('claude: a 429 without retry-after is retried, then final at maxSpendCapAttempts, saying why', async () => {
    await expect(claude('spend-cap', 2)).rejects.toMatchObject({
      type: 'ClaudeRateLimitedNoRetryAfter',
      nonRetryable: false,
      details: [expect.objectContaining({ status: 429 }), { attempt: 2 }],
    });
    const final = (await claude('spend-cap', 3).catch((e: unknown) => e)) as ApplicationFailure;
    expect(final).toMatchObject({ type: 'ClaudeRateLimitedNoRetryAfter', nonRetryable: true });
    expect(final.message).toMatch(/; attempt 3 \(gave up: 429 without retry-after 3 times, likely a spend limit\)$/);
    expect(failedAttempt(final)).toBe(3);
  });

  it('claude: a non-retryable failure says its attempt', async () => {
    const err = (await claude('bad-request', 1).catch((e: unknown) => e)) as ApplicationFailure;
    expect(err).toMatchObject({ type: 'ClaudeInvalidRequest', nonRetryable: true });
    expect(err.message).toMatch(/^Claude API 400 invalid_request_error: bad \(request-id req_stub_\d+\); attempt 1$/);
    expect(failedAttempt(err)).toBe(1);
  });

  it('callTool: a failure of the pool carries the attempt', async () => {
    const pool = new McpPool([]);
    const env = new MockActivityEnvironment({ attempt: 2 });
    await expect(env.run(makeToolCallActivities(pool).callTool, { server: 'nowhere', tool: 't', arguments: {}, toolUseId: 'tu' })).rejects.toMatchObject({
      type: 'McpUnknownServer',
      nonRetryable: true,
      message: 'server nowhere is not configured on this worker; attempt 2',
      // The call's tool_use id too: a local call's failure names its call in history (activities/mcp.ts).
      details: [{ attempt: 2 }, { toolUseId: 'tu' }],
    });
    await pool.close();
  });
});
