/**
 * Following a turn (`followTurn`, src/client/subscribe.ts): its stream, with each failed attempt of
 * a running activity as it is retried and each waiting call with the arguments to decide on, from
 * the history and describes alone (no query), against the real workflow on the shared dev server
 * with scripted activities.
 */
import { approveToolCall } from '../../src/client/approvals';
import { followTurn, subscribeTurn, type FollowedEvent } from '../../src/client/subscribe';
import { reply, startScriptedTurns, text, toolUse, type ScriptedTurns } from '../support/scripted-activities';

jest.setTimeout(30_000);

let turns: ScriptedTurns;
beforeAll(async () => {
  turns = await startScriptedTurns();
});
afterAll(async () => {
  await turns?.close();
});

it('hands on each failed attempt of a retried tool call once, before the call ends; a subscriber does not get them', async () => {
  const t = await turns.start(
    { question: 'look it up' },
    {
      tools: [{ server: 'kb', name: 'search', fail: { message: 'kb/search: connection refused' } }],
      // Retried two seconds apart: the follower describes the turn every half second while it runs.
      policies: { kb: { localTools: [], startToCloseTimeoutMs: 10_000, heartbeatTimeoutMs: 2_000, retry: { maximumAttempts: 3, initialIntervalMs: 2_000, backoffCoefficient: 1, maximumIntervalMs: 2_000 } } },
      claude: [reply([toolUse('kb__search', { q: 'a' }, 'call-1')]), reply([text('nothing found')])],
    },
  );
  const followed: FollowedEvent[] = [];
  const subscribed: FollowedEvent[] = [];
  await Promise.all([
    (async () => {
      for await (const e of followTurn(turns.client, t.handle.workflowId)) followed.push(e);
    })(),
    (async () => {
      for await (const e of subscribeTurn(turns.client, t.handle.workflowId)) subscribed.push(e);
    })(),
  ]);
  const failing = followed.flatMap((e) => (e.type === 'failing-call' ? [e.line] : []));
  expect(failing).toEqual([
    expect.stringMatching(/^tool kb__search failing: connection refused, attempt 1, (next in [12] s|retrying now)$/),
    expect.stringMatching(/^tool kb__search failing: connection refused, attempt 2, (next in [12] s|retrying now)$/),
  ]);
  const types = followed.map((e) => e.type);
  expect(types.lastIndexOf('failing-call')).toBeLessThan(types.indexOf('tool-output-available'));
  expect(followed.find((e) => e.type === 'tool-output-available')).toMatchObject({ toolCallId: 'call-1', isError: true });
  // The stream's events are the same either way, numbered alike; only the follower has the failed attempts.
  expect(subscribed.some((e) => e.type === 'failing-call')).toBe(false);
  expect(followed.filter((e) => e.type !== 'failing-call')).toEqual(subscribed);
  expect(subscribed[subscribed.length - 1]).toMatchObject({ type: 'finish' });
});

it('announces a waiting call with the arguments to decide on, and its decision', async () => {
  const t = await turns.start(
    { question: 'write it' },
    {
      tools: [{ server: 'fs', name: 'write_file', approval: {} }],
      claude: [reply([toolUse('fs__write_file', { path: '/tmp/a.txt' }, 'call-w')]), reply([text('done')])],
    },
  );
  const approvals: FollowedEvent[] = [];
  for await (const e of followTurn(turns.client, t.handle.workflowId)) {
    if (e.type !== 'data-approval') continue;
    approvals.push(e);
    if (e.state === 'waiting') await approveToolCall(turns.client, t.handle.workflowId, e.toolCallId, { identity: 'alice@test' });
  }
  expect(approvals).toEqual([
    expect.objectContaining({ toolCallId: 'call-w', toolName: 'fs__write_file', state: 'waiting', input: { path: '/tmp/a.txt' } }),
    expect.objectContaining({ toolCallId: 'call-w', state: 'approved', by: 'alice@test' }),
  ]);
});
