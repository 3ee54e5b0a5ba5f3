/**
 * The failing-call lines of a running workflow, from its described pending activities: Claude
 * unreachable, another Claude error, a tool call; each failed attempt reported once. And the failure
 * a refused connection gives the Claude activity, which the first line is made of.
 */
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { callClaude } from '../../src/claude/call-claude';
import { createClaudeClient } from '../../src/claude/client';
import { FailingCalls } from '../../src/client/failing-calls';
import { failingCallLine, type PendingActivity } from '../../src/stream/failing-call-line';
import { freePort } from '../support/ports';

const State = temporal.api.enums.v1.PendingActivityState;
const NOW = Date.parse('2026-05-01T10:00:00Z');

/** A Claude call that failed on attempt `attempt - 1` and waits `inMs` (from `now`) for the next. */
function claudeRetrying(
  message: string,
  type: string,
  attempt: number,
  inMs: number,
  now = NOW,
): PendingActivity {
  return {
    activityId: '2',
    activityType: { name: 'claude' },
    state: State.PENDING_ACTIVITY_STATE_SCHEDULED,
    attempt,
    lastFailure: { message, applicationFailureInfo: { type } },
    nextAttemptScheduleTime: msToTs(now + inMs),
  };
}

describe('failingCallLine', () => {
  it('says Claude is unreachable, the failed attempt and when the next one runs', () => {
    const refused = claudeRetrying(
      'Claude API connection error: connection refused (http://127.0.0.1:9/v1/messages)',
      'ClaudeConnection',
      5,
      7_400,
    );
    expect(failingCallLine(refused, NOW)).toBe(
      'Claude unreachable: connection refused (http://127.0.0.1:9/v1/messages), attempt 4, next in 8 s',
    );
  });

  it('gives any other Claude error in one line, the formatter included', () => {
    const overloaded = {
      ...claudeRetrying(
        'Claude API 529 overloaded_error: Overloaded\n(request-id req_1)',
        'ClaudeOverloaded',
        2,
        2_000,
      ),
      activityType: { name: 'formatResponse' },
    };
    expect(failingCallLine(overloaded, NOW)).toBe(
      'Claude call failing: 529 overloaded_error: Overloaded (request-id req_1), attempt 1, next in 2 s',
    );
  });

  it('names a failing tool as Claude does, and an attempt under way as retrying now', () => {
    const tool: PendingActivity = {
      activityId: '5',
      activityType: { name: 'callTool' },
      state: State.PENDING_ACTIVITY_STATE_STARTED,
      attempt: 3,
      lastFailure: {
        message: 'everything/echo: MCP error -32001: Request timed out',
        applicationFailureInfo: { type: 'McpTimeout' },
      },
    };
    expect(failingCallLine(tool, NOW)).toBe(
      'tool everything__echo failing: MCP error -32001: Request timed out, attempt 2, retrying now',
    );
  });

  it('has no line for a call that has not failed, or that is being cancelled', () => {
    expect(
      failingCallLine(
        {
          activityId: '1',
          activityType: { name: 'claude' },
          state: State.PENDING_ACTIVITY_STATE_STARTED,
          attempt: 1,
        },
        NOW,
      ),
    ).toBeUndefined();
    const cancelling = {
      ...claudeRetrying('Claude API connection error: x', 'ClaudeConnection', 2, 1_000),
      state: State.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED,
    };
    expect(failingCallLine(cancelling, NOW)).toBeUndefined();
  });
});

it('FailingCalls reports each failed attempt once', async () => {
  let pending: PendingActivity[] = [];
  const client = {
    workflow: {
      getHandle: () => ({ describe: async () => ({ runId: 'run-1', raw: { pendingActivities: pending } }) }),
    },
  } as unknown as Client;
  const calls = new FailingCalls(client);
  const refused = 'Claude API connection error: connection refused (http://x/v1/messages)';
  pending = [claudeRetrying(refused, 'ClaudeConnection', 2, 60_000, Date.now())];
  expect(await calls.lines('turn-1')).toEqual([
    expect.stringMatching(
      /^Claude unreachable: connection refused \(http:\/\/x\/v1\/messages\), attempt 1, next in \d+ s$/,
    ),
  ]);
  expect(await calls.lines('turn-1')).toEqual([]);
  pending = [claudeRetrying(refused, 'ClaudeConnection', 3, 60_000, Date.now())];
  expect(await calls.lines('turn-1')).toEqual([expect.stringContaining('attempt 2, next in')]);
});

it("a refused connection's failure says so, with the URL the call went to", async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  const err = await callClaude(createClaudeClient({ baseURL: url, apiKey: 'k' }), {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    maxTokens: 10,
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect((err as ApplicationFailure).type).toBe('ClaudeConnection');
  expect((err as ApplicationFailure).message).toBe(
    `Claude API connection error: connection refused (${url}/v1/messages)`,
  );
});
