/**
 * The chat turn end to end: a real Temporal dev server, real server-everything over stdio, and the
 * real Anthropic SDK over HTTP to the scripted stub (which validates every request like the API).
 */
import { defaultPayloadConverter } from '@temporalio/common';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { SA_MODEL, SA_STATUS } from '../../src/core/search-attributes';
import type { Scenario } from '../../src/stub';
import { cancelTurn, getTurnProgress, startChatTurn } from '../../src/client/chat-turn-client';
import { questionOf, startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { countingStdio, everythingStdio } from '../support/mcp-servers';
import { subscribeTurn } from '../../src/client/subscribe';
import { collect } from '../support/stream-events';
import type { TurnStreamEvent } from '../../src/core/stream-events';

jest.setTimeout(120_000);


const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, name, input });
const answer = (content: string) => ({ conversation: [{ type: 'text', content }] });

const scenarios: Record<string, Scenario> = {
  // The first Claude call takes 20 s: long enough to cancel the turn in the middle of it.
  slow: {
    steps: [{ content: [text('too late')], latencyMs: 20_000 }],
    formatter: answer('too late'),
  },
  // A tool call that takes 30 s (progress every 3 s): long enough to cancel the turn during it.
  'slow-tool': {
    steps: [{ content: [use('everything__trigger-long-running-operation', { duration: 30, steps: 10 })] }, { content: [text('too late')] }],
    formatter: answer('too late'),
  },
  'two-round': {
    steps: [
      { content: [text('Let me echo first.'), use('everything__echo', { message: 'alpha' })] },
      { content: [text('Now the sum.'), use('everything__get-sum', { a: 2, b: 3 })] },
      { content: [text('Both done: {{toolResults}}')] },
    ],
    formatter: answer('Results: {{toolResults}}'),
  },
  parallel: {
    steps: [
      { content: [use('everything__echo', { message: 'one' }), use('everything__get-sum', { a: 40, b: 2 })] },
      { content: [text('Parallel results: {{toolResults}}')] },
    ],
    formatter: answer('{{toolResults}}'),
  },
  // Both calls run as local activities, so they end in the same workflow task.
  'parallel-speeds': {
    steps: [
      { content: [use('timed__slow', { label: 'quick', ms: 50 }), use('timed__slow', { label: 'slow', ms: 1500 })] },
      { content: [text('Timed: {{toolResults}}')] },
    ],
    formatter: answer('{{toolResults}}'),
  },
  failures: {
    steps: [
      {
        content: [
          use('everything__gzip-file-as-resource', { name: 'x.gz', data: 'https://example.com/not-allowed' }),
          use('nowhere__missing', { q: 1 }),
          use('everything__echo', { message: 42 }),
        ],
      },
      { content: [text('Errors seen: {{toolResults}}')] },
    ],
    formatter: answer('{{toolResults}}'),
  },
  'max-steps': {
    steps: [0, 1, 2, 3, 4].map((i) => ({ content: [use('everything__echo', { message: `m${i}` })] })),
    formatter: answer('stopped early'),
  },
  repeat: {
    steps: [
      { content: [use('everything__echo', { message: 'same' })] },
      { content: [use('everything__echo', { message: 'same' })] },
      { content: [text('should not be reached')] },
    ],
    formatter: answer('{{toolResults}}'),
  },
  'formatter-repair': {
    steps: [{ content: [text('plain answer')] }],
    formatter: [{ conversation: 'not an array' }, answer('repaired answer')],
  },
  'formatter-fallback': {
    steps: [{ content: [text('the last text Claude said')] }],
    formatter: [{ conversation: 'bad' }, { thinking: 'still bad' }],
  },
  'forced-refusal': {
    steps: [{ content: [text('answer before formatting')] }],
    formatter: answer('formatted without forcing'),
    formatterRefusesForcedTool: true,
  },
  'quick-rounds': {
    steps: [
      { content: [use('quick__echo', { message: 'q0' })] },
      { content: [use('quick__echo', { message: 'q1' })] },
      { content: [use('quick__echo', { message: 'q2' })] },
      { content: [text('echoed: {{toolResults}}')] },
    ],
    formatter: answer('{{toolResults}}'),
  },
  gather: {
    steps: [
      { content: [text('NEED MORE DATA: I also need a sum.'), use('everything__echo', { message: 'g1' })] },
      { content: [text('That is all I need.'), use('everything__get-sum', { a: 1, b: 1 })] },
      { content: [use('everything__echo', { message: 'never' })] },
    ],
    formatter: answer('gathered: {{toolResults}}'),
  },
};

let h: TurnHarness;

beforeAll(async () => {
  // The gzip tool refuses any domain outside this list: a real tool-level failure.
  // `everything` runs its calls as activities of their own (the history shapes below say so); `quick`
  // decides as a worker does by default (src/mcp/tool-speed.ts).
  h = await startTurnHarness({
    scenarios,
    servers: {
      everything: everythingStdio({ env: { GZIP_ALLOWED_DOMAINS: 'allowed.example' }, local_activity: false }),
      quick: everythingStdio(),
      timed: countingStdio(path.join(os.tmpdir(), `mcp-turns-timed-${process.pid}.jsonl`), { local_activity: true }),
    },
  });
});
afterAll(async () => {
  await h?.close();
});

function requestsFor(model: string) {
  return h.stub.requests.filter((r) => r.scenario === model);
}

it('runs a two-round turn whose answer holds both tools’ outputs', async () => {
  const result = await h.run({ question: 'echo alpha, then add 2 and 3', model: 'two-round' });
  expect(result.stopReason).toBe('completed');
  expect(result.steps).toBe(3);
  expect(result.toolCalls.map((c) => [c.server, c.tool, c.isError])).toEqual([
    ['everything', 'echo', false],
    ['everything', 'get-sum', false],
  ]);
  expect(result.response.conversation).toContain('Echo: alpha');
  expect(result.response.conversation).toMatch(/sum of 2 and 3 is 5/i);
  expect(result.formatMode).toBe('forced');
  // The transcript handed to the next turn: question, 3 assistant replies, 2 tool_result messages.
  expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  // Usage is the exact sum of what the stub reported for every answered request.
  const reported = requestsFor('two-round').filter((r) => r.status === 200);
  expect(reported).toHaveLength(4);
  const sum = (k: 'input_tokens' | 'output_tokens') => reported.reduce((n, r) => n + (r.usage?.[k] ?? 0), 0);
  expect(result.usage.inputTokens).toBe(sum('input_tokens'));
  expect(result.usage.outputTokens).toBe(sum('output_tokens'));
});

it('runs parallel tool calls of one step and answers them in one user message, in order', async () => {
  const result = await h.run({ question: 'both at once', model: 'parallel' });
  expect(result.toolCalls).toHaveLength(2);
  expect(result.toolCalls.every((c) => c.step === 1)).toBe(true);
  const second = requestsFor('parallel').find((r) => r.kind === 'step' && r.step === 1)!;
  const results = second.body.messages[2].content;
  expect(results.map((b: { type: string }) => b.type)).toEqual(['tool_result', 'tool_result']);
  expect(results.map((b: { tool_use_id: string }) => b.tool_use_id)).toEqual(
    second.body.messages[1].content.map((b: { id: string }) => b.id),
  );
  expect(result.response.conversation).toContain('Echo: one');
  expect(result.response.conversation).toMatch(/42/);
});

it("reports each parallel call's own duration, in the result and in the stream: a quick call is not given a slow one's time", async () => {
  const handle = await startChatTurn(h.client, { question: 'time both', model: 'parallel-speeds', servers: ['timed'] }, { taskQueue: h.taskQueue });
  const result = await handle.result();
  const [quick, slow] = result.toolCalls;
  expect([quick!.input, slow!.input]).toEqual([{ label: 'quick', ms: 50 }, { label: 'slow', ms: 1500 }]);
  expect(quick!.durationMs).toBeLessThan(1000);
  expect(slow!.durationMs).toBeGreaterThanOrEqual(1500);
  const outputs = (await collect(subscribeTurn(h.client, handle.workflowId))).filter(
    (e): e is Extract<TurnStreamEvent, { type: 'tool-output-available' }> => e.type === 'tool-output-available',
  );
  expect(outputs.map((e) => [e.toolCallId, e.durationMs])).toEqual([
    [quick!.id, quick!.durationMs],
    [slow!.id, slow!.durationMs],
  ]);
});

it('turns a failing tool, an unknown tool and bad arguments into is_error results Claude sees', async () => {
  const result = await h.run({ question: 'break things', model: 'failures' });
  expect(result.stopReason).toBe('completed');
  expect(result.toolCalls.map((c) => c.isError)).toEqual([true, true, true]);
  const [gzip, unknown, badArgs] = result.toolCalls;
  expect(gzip!.error).toMatch(/not in the allowed domains/);
  expect(unknown!.server).toBeUndefined();
  expect(unknown!.error).toMatch(/Unknown tool "nowhere__missing"/);
  expect(badArgs!.error).toMatch(/Invalid arguments/);
  const second = requestsFor('failures').find((r) => r.kind === 'step' && r.step === 1)!;
  const blocks = second.body.messages[2].content as Array<{ is_error?: boolean }>;
  expect(blocks.map((b) => b.is_error)).toEqual([true, true, true]);
  expect(result.response.conversation).toMatch(/Unknown tool/);
});

it('stops at the max-steps budget between whole steps', async () => {
  const result = await h.run({ question: 'loop', model: 'max-steps', maxSteps: 2 });
  expect(result.stopReason).toBe('max_steps');
  expect(result.steps).toBe(2);
  expect(result.toolCalls.map((c) => (c.input as { message: string }).message)).toEqual(['m0', 'm1']);
  // The transcript ends with the results of the last step: no tool_use is left unanswered.
  const last = result.messages[result.messages.length - 2]!;
  expect(last.role).toBe('user');
  expect(result.response.conversation).toBe('stopped early');
});

it('answers a repeated call from the earlier result and stops with repeated_call', async () => {
  const result = await h.run({ question: 'same twice', model: 'repeat' });
  expect(result.stopReason).toBe('repeated_call');
  expect(result.toolCalls.map((c) => !!c.repeated)).toEqual([false, true]);
  expect(result.toolCalls[1]!.attempts).toBe(0);
  expect(result.response.conversation).toContain('Echo: same');
  expect(requestsFor('repeat').filter((r) => r.kind === 'step')).toHaveLength(2);
});

it('repairs a malformed formatter answer once', async () => {
  const result = await h.run({ question: 'format me', model: 'formatter-repair' });
  expect(result.formatMode).toBe('repaired');
  expect(result.response.conversation).toBe('repaired answer');
  expect(requestsFor('formatter-repair').filter((r) => r.kind === 'formatter')).toHaveLength(2);
});

it('falls back to the last text when the repair fails too', async () => {
  const result = await h.run({ question: 'format me badly', model: 'formatter-fallback' });
  expect(result.formatMode).toBe('fallback');
  expect(result.response.conversation).toBe('the last text Claude said');
});

it('falls back to tool_choice auto when forced tool use is refused', async () => {
  const result = await h.run({ question: 'no forcing', model: 'forced-refusal' });
  expect(result.formatMode).toBe('auto');
  expect(result.response.conversation).toBe('formatted without forcing');
});

it('gather-then-format continues only while Claude says NEED MORE DATA', async () => {
  const result = await h.run({ question: 'gather', model: 'gather', loopPolicy: 'gather-then-format' });
  expect(result.stopReason).toBe('completed');
  expect(result.steps).toBe(2);
  expect(result.toolCalls.map((c) => c.tool)).toEqual(['echo', 'get-sum']);
  const first = requestsFor('gather').find((r) => r.kind === 'step' && r.step === 0)!;
  expect(JSON.stringify(first.body.system)).toContain('NEED MORE DATA:');
  expect(result.response.conversation).toContain('Echo: g1');
});

it('format: false answers with Claude’s last text and makes no formatter call', async () => {
  const before = requestsFor('two-round').length;
  const result = await h.run({ question: 'no formatter please', model: 'two-round', format: false });
  expect(result.formatMode).toBeUndefined();
  expect(result.response.conversation).toMatch(/^Both done: /);
  expect(requestsFor('two-round').slice(before).filter((r) => r.kind === 'formatter')).toHaveLength(0);
});

it('fails a bad input started without the client at once, naming every bad field, and runs nothing', async () => {
  const before = h.stub.requests.length;
  const handle = await h.client.workflow.start('chatTurn', {
    taskQueue: h.taskQueue,
    workflowId: `bad-input-${Date.now()}`,
    args: [{ question: '  ', maxSteps: 0, loopPolicy: 'loop', serverz: ['x'] }],
  });
  const err = await handle.result().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe('InvalidTurnInput');
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  expect(cause!.message).toMatch(/question: question must not be empty/);
  expect(cause!.message).toMatch(/maxSteps: /);
  expect(cause!.message).toMatch(/loopPolicy: /);
  expect(cause!.message).toMatch(/serverz/);
  expect((cause as ApplicationFailure).details).toHaveLength(4); // one problem per field
  expect(h.stub.requests.length).toBe(before);
  const { events } = await handle.fetchHistory();
  expect(events!.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(0);
  expect((await handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('failed');
});

it('cancels a turn in the middle of a Claude call: the run ends cancelled at once, the HTTP request is aborted, the status says so', async () => {
  const handle = await startChatTurn(h.client, { question: 'cancel me mid call', model: 'slow' }, { taskQueue: h.taskQueue, workflowId: `cancel-${Date.now()}` });
  const inFlight = async () => h.stub.requests.find((r) => r.scenario === 'slow' && questionOf(r) === 'cancel me mid call');
  for (let i = 0; i < 100 && !(await inFlight()); i++) await new Promise((r) => setTimeout(r, 50));
  const request = (await inFlight())!;
  expect(request).toBeDefined();
  expect((await getTurnProgress(handle)).phase).toBe('asking-claude');

  const t0 = Date.now();
  await cancelTurn(handle);
  const err = await handle.result().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  expect(Date.now() - t0).toBeLessThan(5_000); // not the 20 s the call would take
  // The activity learns of the cancel with its next heartbeat (sent every 2 s, the worker's throttle:
  // not the SDK's default 8 s) and aborts the request.
  for (let i = 0; i < 100 && !request.aborted; i++) await new Promise((r) => setTimeout(r, 100));
  expect(request.aborted).toBe(true);
  expect(request.endedAt - t0).toBeLessThan(5_000);
  const described = await handle.describe();
  expect(described.status.name).toBe('CANCELLED');
  expect(described.typedSearchAttributes.get(SA_STATUS)).toBe('cancelled');
});

it('cancels a turn during a tool call: cancelled, not a tool failure handed back to Claude', async () => {
  const before = h.stub.requests.filter((r) => r.scenario === 'slow-tool').length;
  const handle = await startChatTurn(h.client, { question: 'cancel me mid tool', model: 'slow-tool' }, { taskQueue: h.taskQueue, workflowId: `cancel-tool-${Date.now()}` });
  // Asked at once: the query is answered even before the turn's start (its local activity) is done.
  await expect(getTurnProgress(handle)).resolves.toHaveProperty('phase');
  for (let i = 0; i < 100 && (await getTurnProgress(handle)).phase !== 'calling-tools'; i++) await new Promise((r) => setTimeout(r, 50));
  expect((await getTurnProgress(handle)).toolCalls.map((c) => c.status)).toEqual(['running']);
  const t0 = Date.now();
  await cancelTurn(handle);
  const err = await handle.result().catch((e: unknown) => e);
  expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  expect(Date.now() - t0).toBeLessThan(5_000);
  expect(h.stub.requests.filter((r) => r.scenario === 'slow-tool')).toHaveLength(before + 1); // Claude was not asked again
  expect((await handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('cancelled');
});

it('sets status and model once: at start by the client, not upserted again by the workflow', async () => {
  const { result, history } = await h.runWithHistory({ question: 'echo alpha, then add 2 and 3', model: 'two-round' }, 'sa-once');
  expect(result.stopReason).toBe('completed');
  const upserts = history.events!.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes);
  const fields = upserts.map((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes!.searchAttributes!.indexedFields!));
  expect(fields).toHaveLength(1); // the final one
  expect(fields[0]).toContain(SA_STATUS.name);
  expect(fields[0]).not.toContain(SA_MODEL.name);
});

it('starts with one local activity that checks the input and lists the tools, and records no patch markers', async () => {
  const { result, history } = await h.runWithHistory({ question: 'echo alpha, then add 2 and 3 (shape)', model: 'two-round' }, 'shape');
  expect(result.toolCalls.map((c) => c.tool)).toEqual(['echo', 'get-sum']);
  const events = history.events!;
  const scheduled = events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType!.name] : []));
  expect(scheduled).toEqual(['claude', 'callTool', 'claude', 'callTool', 'claude', 'formatResponse']);
  const markers = events.filter((e) => e.markerRecordedEventAttributes).map((e) => e.markerRecordedEventAttributes!.markerName);
  expect(markers).toEqual(['core_local_activity']);
  // One workflow task to start, one per Claude reply and one per tool result.
  expect(events.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(7);
});

it("a tool's calls run as local activities once three were quick: then a round is one workflow task, and each call's marker carries its summary", async () => {
  const first = await h.runWithHistory({ question: 'echo three times (learning)', model: 'quick-rounds' }, 'quick-first');
  const second = await h.runWithHistory({ question: 'echo three times (known quick)', model: 'quick-rounds' }, 'quick-second');
  for (const { result } of [first, second]) {
    expect(result.toolCalls.map((c) => [c.tool, c.isError, c.attempts])).toEqual([
      ['echo', false, 1],
      ['echo', false, 1],
      ['echo', false, 1],
    ]);
    expect(result.response.conversation).toContain('Echo: q2');
  }
  const scheduled = (events: typeof first.history.events) =>
    events!.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType!.name] : []));
  const tasks = (events: typeof first.history.events) => events!.filter((e) => e.workflowTaskCompletedEventAttributes).length;
  // Not yet seen: each call an activity, two workflow tasks a round.
  expect(scheduled(first.history.events)).toEqual(['claude', 'callTool', 'claude', 'callTool', 'claude', 'callTool', 'claude', 'formatResponse']);
  expect(tasks(first.history.events)).toBe(1 + 3 * 2 + 1 + 1);
  // Seen quick three times: local, one workflow task a round, the summary on the marker.
  const events = second.history.events!;
  expect(scheduled(events)).toEqual(['claude', 'claude', 'claude', 'claude', 'formatResponse']);
  expect(tasks(events)).toBe(1 + 3 + 1 + 1);
  const summaries = events.filter((e) => e.markerRecordedEventAttributes).map((e) => defaultPayloadConverter.fromPayload(e.userMetadata!.summary!));
  expect(summaries).toEqual(['check input, list tools', 'quick · echo', 'quick · echo', 'quick · echo']);
});

it("starts a turn eagerly from a client on the worker's own connection: the start answers with its first workflow task", async () => {
  const handle = await startChatTurn(h.workerClient, { question: 'echo alpha, then add 2 and 3 (eager)', model: 'two-round' }, { taskQueue: h.taskQueue, eagerStart: true });
  expect(handle.eagerlyStarted).toBe(true);
  expect((await handle.result()).stopReason).toBe('completed');
  // A client on its own connection cannot: the start says why rather than losing the task.
  await expect(startChatTurn(h.client, { question: 'not eager' }, { taskQueue: h.taskQueue, eagerStart: true })).rejects.toThrow(/NativeConnection/);
});

it('sends the conversation as segments: each Claude call gets the input, the tools and one segment per step so far', async () => {
  const { result, history } = await h.runWithHistory({ question: 'echo alpha, then add 2 and 3 (segments)', model: 'two-round' }, 'segments');
  expect(result.steps).toBe(3);
  expect(result.response.conversation).toContain('Echo: alpha');
  const payloads = (name: string) =>
    history
      .events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name)
      .map((e) => e.activityTaskScheduledEventAttributes!.input!.payloads!.length);
  // claude: input + tools + the turn's steps, three segments once there are three (src/core/segment-groups.ts):
  // [q], [q][s1], [q][s1][s2]; the formatter: input + [q s1][s2][s3], the first two sent before.
  expect(payloads('claude')).toEqual([3, 4, 5]);
  expect(payloads('formatResponse')).toEqual([4]);
});

it('keeps zod out of the workflow bundle (the sandbox would load it again for every run)', () => {
  const code = fs.readFileSync(process.env.MCP_TURNS_TEST_BUNDLE!, 'utf8');
  expect(code).toContain('node_modules/@temporalio/workflow');
  expect(code).not.toMatch(/node_modules\/zod\//);
});
