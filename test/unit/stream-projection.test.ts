/**
 * The projection's rules, from facts as a turn's history records them: a running call's record
 * becomes the same events its result later gives (so offsets never move), approvals wait and are
 * decided or time out, a server's questions for the person wait and are answered, declined or time
 * out (round by round), calls that never ran are answered at the step's end, a step asked again
 * says why, and a failed turn ends with `error` then `finish`.
 */
import { projectTurn } from '../../src/stream/turn-projection';
import type { TurnFact } from '../../src/stream/turn-facts';
import type { StreamRecord } from '../../src/core/stream-record';
import type { ContentBlock } from '../../src/core/contracts';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { ZERO_USAGE } from '../../src/core/usage';
import type { AskedAgain } from '../../src/core/activity-types';
import { MAX_INPUT_ROUNDS } from '../../src/core/input-requests';
import { WAITING_APPROVAL_STATUS } from '../../src/core/run-status';
import { recordedProgress } from '../../src/stream/recorded-progress';

const started: TurnFact = { kind: 'started', input: { question: 'q', stream: true } };
/** A step's Claude call scheduled; `askedAgain`: the workflow's reason for asking the step again, as its input records it. */
const claude = (activityId: string, step: number, timeMs = 0, askedAgain?: AskedAgain): TurnFact => ({
  kind: 'scheduled',
  activityId,
  activityType: 'claude',
  input: { model: 'm', maxTokens: 10, step, ...(askedAgain ? { askedAgain } : {}) },
  timeMs,
});
const reply = (
  activityId: string,
  content: ContentBlock[],
  stream: StreamRecord,
  stopReason = 'tool_use',
): TurnFact => ({
  kind: 'activity-completed',
  activityId,
  result: { content, stopReason, usage: ZERO_USAGE, model: 'm', stream },
  timeMs: 0,
});
const text = (t: string) => ({ type: 'text', text: t, citations: null }) as ContentBlock;
const use = (id: string, name: string, input: unknown) =>
  ({ type: 'tool_use', id, name, input }) as ContentBlock;
const types = (facts: TurnFact[], live = new Map<string, StreamRecord>()) =>
  projectTurn({ facts, live }).map((e) => e.type);

test('a running call shows its published deltas; its result later gives the same events, then more', () => {
  const live = new Map<string, StreamRecord>([['1', { attempt: 1, first: 1, parts: [['t', 'Hel']] }]]);
  const running = projectTurn({ facts: [started, claude('1', 1)], live });
  const done = projectTurn({
    facts: [
      started,
      claude('1', 1),
      reply(
        '1',
        [text('Hello')],
        {
          attempt: 1,
          first: 1,
          parts: [
            ['t', 3],
            ['t', 2],
          ],
        },
        'end_turn',
      ),
    ],
    live: new Map(),
  });
  expect(done.slice(0, running.length)).toEqual(running);
  expect(done.filter((e) => e.type === 'text-delta').map((e) => (e as { delta: string }).delta)).toEqual([
    'Hel',
    'lo',
  ]);
});

test('approvals: waiting from the memo, decided by the update, timed out when they leave the memo undecided', () => {
  const facts: TurnFact[] = [
    started,
    claude('1', 1),
    reply('1', [use('a', 'srv__write', { x: 1 }), use('b', 'srv__write', { x: 2 })], {
      attempt: 1,
      first: 1,
      parts: [],
    }),
    {
      kind: 'pending-approvals',
      pending: [
        { callId: 'a', name: 'srv__write', input: '{}', step: 1, text: '', requestedAt: '' } as never,
        {
          callId: 'b',
          name: 'srv__write',
          input: '{}',
          step: 1,
          text: '',
          requestedAt: '',
          timeoutMs: 5,
        } as never,
      ],
    },
    { kind: 'decision', decision: { callId: 'a', approve: false, identity: 'alice', reason: 'no' } },
    { kind: 'pending-approvals', pending: [{ callId: 'b', name: 'srv__write' } as never] },
    { kind: 'pending-approvals', pending: [] },
    claude('2', 2),
  ];
  const events = projectTurn({ facts, live: new Map() });
  const approvals = events.filter((e) => e.type === 'data-approval');
  expect(approvals).toEqual([
    expect.objectContaining({ toolCallId: 'a', state: 'waiting' }),
    expect.objectContaining({ toolCallId: 'b', state: 'waiting', timeoutMs: 5 }),
    expect.objectContaining({ toolCallId: 'a', state: 'denied', by: 'alice', reason: 'no' }),
    expect.objectContaining({ toolCallId: 'b', state: 'timed_out' }),
  ]);
  // Neither ran: both are answered as denied when the step ends, before finish-step.
  const outputs = events.filter((e) => e.type === 'tool-output-available');
  expect(outputs).toEqual([
    expect.objectContaining({ toolCallId: 'a', notRun: 'denied' }),
    expect.objectContaining({ toolCallId: 'b', notRun: 'denied' }),
  ]);
  expect(types(facts).slice(-3)).toEqual(['tool-output-available', 'finish-step', 'start-step']);
});

test('a reply cut inside a tool call is asked again: its calls are never announced, and its text is discarded', () => {
  const facts: TurnFact[] = [
    started,
    claude('1', 1),
    reply(
      '1',
      [text('Let me'), use('a', 'srv__t', {})],
      { attempt: 1, first: 1, parts: [['t', 6]] },
      'max_tokens',
    ),
    claude('2', 1, 0, 'cut-inside-tool-use'),
  ];
  const events = projectTurn({ facts, live: new Map() });
  expect(events.map((e) => e.type)).toEqual(['start', 'start-step', 'text-delta', 'data-retry']);
  expect(events[3]).toMatchObject({ discard: ['step-1', 'reasoning-1'], step: 1 });
});

test('a failed turn ends with error, then finish; calls that never ran are answered first', () => {
  const facts: TurnFact[] = [
    started,
    claude('1', 1),
    reply('1', [use('a', 'srv__t', {})], { attempt: 1, first: 1, parts: [] }),
    { kind: 'closed', how: 'failed', message: 'boom' },
  ];
  expect(types(facts).slice(-4)).toEqual(['tool-output-available', 'finish-step', 'error', 'finish']);
  expect(projectTurn({ facts, live: new Map() }).at(-1)).toMatchObject({ type: 'finish', status: 'failed' });
});

test('the answer: streamed deltas, then the rest of response.conversation, data-answer and finish', () => {
  const output = { conversation: [{ type: 'text', content: 'Answer.' }] };
  const result = {
    response: { conversation: 'Answer.\n\nNote.', artifacts: [] },
    stopReason: 'completed',
    usage: ZERO_USAGE,
    costUsd: 0,
  } as unknown as ChatTurnResult;
  const facts: TurnFact[] = [
    started,
    claude('1', 1),
    reply('1', [text('x')], { attempt: 1, first: 1, parts: [['t', 1]] }, 'end_turn'),
    { kind: 'scheduled', activityId: '2', activityType: 'formatResponse', input: {}, timeMs: 0 },
    {
      kind: 'activity-completed',
      activityId: '2',
      result: {
        output,
        mode: 'forced',
        usage: ZERO_USAGE,
        calls: 1,
        notes: [],
        stream: { attempt: 1, first: 1, parts: [['a', 7]] },
      },
      timeMs: 0,
    },
    { kind: 'completed', result },
  ];
  const events = projectTurn({ facts, live: new Map() });
  const answer = events
    .filter((e) => e.type === 'text-delta' && e.id === 'answer')
    .map((e) => (e as { delta: string }).delta);
  expect(answer.join('')).toBe('Answer.\n\nNote.');
  expect(events.slice(-2).map((e) => e.type)).toEqual(['data-answer', 'finish']);
});

test('a full context window: the step is asked again after compacting, and the stream says both', () => {
  const facts: TurnFact[] = [
    started,
    claude('1', 1),
    reply(
      '1',
      [text('partial')],
      { attempt: 1, first: 1, parts: [['t', 7]] },
      'model_context_window_exceeded',
    ),
    claude('2', 1, 0, 'context-window-full'),
  ];
  const events = projectTurn({ facts, live: new Map() });
  expect(events.map((e) => e.type)).toEqual([
    'start',
    'start-step',
    'text-delta',
    'data-compaction',
    'data-retry',
  ]);
  expect(events[3]).toMatchObject({ step: 1 });
});

test('a prompt refused as too long is asked again after compacting', () => {
  const facts: TurnFact[] = [
    started,
    claude('1', 1),
    { kind: 'activity-ended', activityId: '1', how: 'failed', failureType: 'ClaudePromptTooLong', timeMs: 0 },
    claude('2', 1, 0, 'prompt-too-long'),
  ];
  expect(types(facts)).toEqual(['start', 'start-step', 'data-compaction', 'data-retry']);
});

describe('the turn\'s tools (data-tools)', () => {
  const schema = { type: 'object' as const, properties: {} };
  const prepared: TurnFact = {
    kind: 'prepared',
    prepared: {
      catalog: {
        tools: [
          { name: 'everything__echo', input_schema: schema },
          { name: 'crm__find', input_schema: schema },
          // No target: one of Claude's own server tools.
          { name: 'web_search', input_schema: schema },
        ],
        targets: {
          everything__echo: { server: 'everything', tool: 'echo' },
          crm__find: { server: 'crm', tool: 'find' },
        },
        dropped: [{ name: 'everything__add', reason: 'over maxToolsPerRequest (3)' }],
        deferred: ['crm__find'],
      },
      approvals: {},
      policies: {},
      unavailable: [{ server: 'files', reason: 'connect failed: ECONNREFUSED' }],
      unknownServers: ['billing'],
      workerDefaults: {},
    },
  };

  test('comes right after start, before the first step, with what the start recorded', () => {
    const facts: TurnFact[] = [
      started,
      prepared,
      claude('1', 1),
      reply('1', [text('Hi'), use('a', 'crm__find', { q: 'x' })], { attempt: 1, first: 1, parts: [['t', 2]] }),
    ];
    const events = projectTurn({ facts, live: new Map() });
    expect(events.map((e) => e.type)).toEqual(['start', 'data-tools', 'start-step', 'text-delta']);
    expect(events[1]).toEqual({
      type: 'data-tools',
      offered: [
        // Loaded up front: a deferred tool is listed under deferred only.
        { name: 'everything__echo', server: 'everything', tool: 'echo' },
        { name: 'web_search', providerExecuted: true },
      ],
      deferred: ['crm__find'],
      dropped: [{ name: 'everything__add', reason: 'over maxToolsPerRequest (3)' }],
      // The unknown servers after the others, as the workflow tells Claude.
      unavailable: [
        { server: 'files', reason: 'connect failed: ECONNREFUSED' },
        { server: 'billing', reason: 'not configured on the worker' },
      ],
    });
  });

  test('is at the same offset read live (before the first call) and after the end', () => {
    const early = projectTurn({ facts: [started, prepared], live: new Map() });
    const later = projectTurn({
      facts: [started, prepared, claude('1', 1), reply('1', [text('Done')], { attempt: 1, first: 1, parts: [['t', 4]] }, 'end_turn')],
      live: new Map(),
    });
    expect(early.map((e) => e.type)).toEqual(['start', 'data-tools']);
    expect(later.slice(0, early.length)).toEqual(early);
  });

  test('a catalog without deferred tools, without unavailable servers: empty lists', () => {
    const bare: TurnFact = {
      kind: 'prepared',
      prepared: {
        catalog: { tools: [], targets: {}, dropped: [] },
        approvals: {},
        policies: {},
        unavailable: [],
        unknownServers: [],
        workerDefaults: {},
      },
    };
    expect(projectTurn({ facts: [started, bare], live: new Map() })[1]).toEqual({
      type: 'data-tools',
      offered: [],
      deferred: [],
      dropped: [],
      unavailable: [],
    });
  });
});

describe("a turn's output (data-output)", () => {
  const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } } };
  const json = '{"city": "Paris", "days": 3}';
  const formatter = (input: object = { output: { schema } }): TurnFact => ({ kind: 'scheduled', activityId: 'f', activityType: 'formatResponse', input: { model: 'm', maxTokens: 10, ...input }, timeMs: 0 });
  const formatted = (text: string, stream: StreamRecord): TurnFact => ({
    kind: 'activity-completed',
    activityId: 'f',
    result: { output: { conversation: [{ type: 'text', content: text }] }, mode: 'forced', usage: ZERO_USAGE, calls: 1, notes: [], stream },
    timeMs: 0,
  });
  const completed = (text: string, output?: unknown): TurnFact => ({
    kind: 'completed',
    result: {
      response: { conversation: text, artifacts: [] },
      stopReason: output === undefined ? 'invalid_output' : 'completed',
      usage: ZERO_USAGE,
      costUsd: 0,
      ...(output !== undefined ? { output } : {}),
    } as unknown as ChatTurnResult,
  });
  const before: TurnFact[] = [started, claude('1', 1), reply('1', [text('ok')], { attempt: 1, first: 1, parts: [['t', 2]] }, 'end_turn')];
  const outputs = (events: ReturnType<typeof projectTurn>) =>
    events.flatMap((e) => (e.type === 'data-output' ? [{ output: e.output, partial: e.partial }] : []));

  test('follows the answer as it is written, live and from the result alike, then the result\'s object before data-answer', () => {
    const live = new Map<string, StreamRecord>([
      ['f', { attempt: 1, first: 1, parts: [['a', '{"city'], ['a', '": "Par'], ['a', 'is", "d']] }],
    ]);
    const running = projectTurn({ facts: [...before, formatter()], live });
    expect(outputs(running)).toEqual([
      // `{"city` parses to {} (no key yet), `": "Par` to the city so far; `is", "d` changes it again.
      { output: {}, partial: true },
      { output: { city: 'Par' }, partial: true },
      { output: { city: 'Paris' }, partial: true },
    ]);
    const record: StreamRecord = { attempt: 1, first: 1, parts: [['a', 6], ['a', 7], ['a', 7], ['a', 8]] };
    const done = projectTurn({ facts: [...before, formatter(), formatted(json, record), completed(json, { city: 'Paris', days: 3 })], live: new Map() });
    // Offsets never move: the closed turn's events begin with what the running one showed.
    expect(done.slice(0, running.length)).toEqual(running);
    expect(outputs(done).slice(3)).toEqual([
      { output: { city: 'Paris', days: 3 }, partial: true },
      { output: { city: 'Paris', days: 3 }, partial: false },
    ]);
    expect(done.slice(-3).map((e) => e.type)).toEqual(['data-output', 'data-answer', 'finish']);
    // The answer's text deltas stay as they are: the JSON as written.
    expect(done.filter((e) => e.type === 'text-delta' && e.id === 'answer').map((e) => (e as { delta: string }).delta).join('')).toBe(json);
  });

  test('a delta that does not change the object parsed so far adds no data-output', () => {
    const live = new Map<string, StreamRecord>([['f', { attempt: 1, first: 1, parts: [['a', '{"city": "P"'], ['a', ' '], ['a', ',']] }]]);
    expect(outputs(projectTurn({ facts: [...before, formatter()], live }))).toEqual([{ output: { city: 'P' }, partial: true }]);
  });

  test('a retry that discards the answer starts the parse again', () => {
    const live = new Map<string, StreamRecord>([
      ['f', { attempt: 2, first: 1, parts: [['a', '{"city": "Pa'], ['x', 2, 'attempt 1 did not finish'], ['a', '{"city": "Pa']] }],
    ]);
    const events = projectTurn({ facts: [...before, formatter()], live });
    expect(events.slice(-5).map((e) => e.type)).toEqual(['text-delta', 'data-output', 'data-retry', 'text-delta', 'data-output']);
    expect(outputs(events)).toEqual([
      { output: { city: 'Pa' }, partial: true },
      { output: { city: 'Pa' }, partial: true },
    ]);
  });

  test('an answer that differs from what streamed is discarded and parsed again', () => {
    const record: StreamRecord = { attempt: 1, first: 1, parts: [['a', '{"city": "Rome"}']] };
    const facts = [...before, formatter(), formatted('{"city": "Rome"}', record), completed(json, { city: 'Paris', days: 3 })];
    expect(outputs(projectTurn({ facts, live: new Map() }))).toEqual([
      { output: { city: 'Rome' }, partial: true },
      { output: { city: 'Paris', days: 3 }, partial: true },
      { output: { city: 'Paris', days: 3 }, partial: false },
    ]);
  });

  test('without a valid object (invalid_output) there is no final data-output; without output, none at all', () => {
    const record: StreamRecord = { attempt: 1, first: 1, parts: [['a', 16]] };
    const invalid = projectTurn({ facts: [...before, formatter(), formatted('{"city": "Rome"}', record), completed('{"city": "Rome"}')], live: new Map() });
    expect(outputs(invalid)).toEqual([{ output: { city: 'Rome' }, partial: true }]);
    expect(invalid.slice(-2).map((e) => e.type)).toEqual(['data-answer', 'finish']);

    const prose = projectTurn({ facts: [...before, formatter({}), formatted('{"city": "Rome"}', record), completed('{"city": "Rome"}')], live: new Map() });
    expect(outputs(prose)).toEqual([]);
  });
});

describe("a server's questions for the person (data-input)", () => {
  const SCHEMA = {
    type: 'object',
    properties: { guests: { type: 'integer', minimum: 1, maximum: 20 }, time: { type: 'string' } },
    required: ['guests', 'time'],
  };
  const requests = [{ key: 'details', mode: 'form' as const, message: 'How many guests, and when?', requestedSchema: SCHEMA }];
  const prepared: TurnFact = {
    kind: 'prepared',
    prepared: {
      catalog: { tools: [], targets: { modern__book_table: { server: 'modern', tool: 'book_table' } }, dropped: [] },
      approvals: {},
      policies: {},
      unavailable: [],
      unknownServers: [],
      workerDefaults: {},
    },
  };
  const args = { restaurant: 'Chez Nous' };
  /** One activity of the call (its first sending, or a later one with the answers). */
  const callTool = (activityId: string, callId = 'a'): TurnFact => ({
    kind: 'scheduled',
    activityId,
    activityType: 'callTool',
    input: { server: 'modern', tool: 'book_table', arguments: args, toolUseId: callId },
    timeMs: 1000,
  });
  const asks = (activityId: string, callId = 'a'): TurnFact => ({
    kind: 'activity-completed',
    activityId,
    result: { content: [], isError: false, artifacts: [], truncatedBytes: 0, toolUseId: callId, durationMs: 5, inputRequired: { requests, requestState: 'opaque' } },
    timeMs: 1005,
  });
  const answers = (activityId: string, text: string, callId = 'a'): TurnFact => ({
    kind: 'activity-completed',
    activityId,
    result: { content: [{ type: 'text', text }], isError: false, artifacts: [], truncatedBytes: 0, toolUseId: callId, durationMs: 7 },
    timeMs: 9000,
  });
  /** The memo while round `round` of call `callId` waits (as workflows/approval-status.ts publishes it). */
  const waitingInput = (round = 1, callId = 'a'): TurnFact => ({
    kind: 'pending-approvals',
    pending: [
      {
        kind: 'input',
        requests,
        round,
        callId,
        name: 'modern__book_table',
        server: 'modern',
        tool: 'book_table',
        input: args,
        step: 1,
        text: '',
        requestedAt: '2026-11-27T10:00:00.000Z',
        timeoutMs: 600_000,
      },
    ],
  });
  const none: TurnFact = { kind: 'pending-approvals', pending: [] };
  const before: TurnFact[] = [
    started,
    prepared,
    claude('1', 1),
    reply('1', [use('a', 'modern__book_table', args)], { attempt: 1, first: 1, parts: [] }),
  ];
  const asked = { toolCallId: 'a', toolName: 'modern__book_table', server: 'modern', tool: 'book_table', requests };
  const project = (facts: TurnFact[]) => projectTurn({ facts, live: new Map() });
  const inputs = (facts: TurnFact[]) => project(facts).filter((e) => e.type === 'data-input');

  test('waits with the questions, then is answered by whom with what; the call ends once, with the result of the call sent again', () => {
    const facts: TurnFact[] = [
      ...before,
      callTool('2'),
      asks('2'),
      waitingInput(),
      { kind: 'decision', decision: { callId: 'a', approve: true, input: { guests: 4, time: '19:30' }, identity: 'alice' } },
      none,
      callTool('3'),
      answers('3', 'booked Chez Nous for 4 at 19:30'),
      claude('4', 2),
    ];
    const events = project(facts);
    expect(events.filter((e) => e.type === 'data-input')).toEqual([
      { type: 'data-input', ...asked, round: 1, state: 'waiting', timeoutMs: 600_000 },
      { type: 'data-input', ...asked, round: 1, state: 'answered', by: 'alice', answer: { guests: 4, time: '19:30' } },
    ]);
    // Not an approval: no data-approval, and the activity that asked did not end the call.
    expect(events.filter((e) => e.type === 'data-approval')).toEqual([]);
    expect(events.filter((e) => e.type === 'tool-output-available')).toEqual([
      expect.objectContaining({ toolCallId: 'a', isError: false, output: 'booked Chez Nous for 4 at 19:30', durationMs: 7 }),
    ]);
    expect(events.map((e) => e.type).slice(3)).toEqual([
      'tool-input-available',
      'data-input',
      'data-input',
      'tool-output-available',
      'finish-step',
      'start-step',
    ]);
  });

  test('read while it waits, at every point, the events are those the finished turn begins with (offsets never move)', () => {
    const facts: TurnFact[] = [
      ...before,
      callTool('2'),
      asks('2'),
      waitingInput(),
      { kind: 'decision', decision: { callId: 'a', approve: true, input: { guests: 2, time: '20:00' }, identity: 'bob' } },
      none,
      callTool('3'),
      answers('3', 'booked'),
      claude('4', 2),
    ];
    const whole = project(facts);
    for (let n = before.length; n <= facts.length; n++) {
      const early = project(facts.slice(0, n));
      expect(whole.slice(0, early.length)).toEqual(early);
    }
  });

  test('declined, and asked again then timed out: each round its own events; a decline is not a denial of the call', () => {
    const facts: TurnFact[] = [
      ...before,
      callTool('2'),
      asks('2'),
      waitingInput(1),
      { kind: 'decision', decision: { callId: 'a', approve: false, identity: 'alice', reason: 'not tonight' } },
      none,
      callTool('3'),
      asks('3'),
      waitingInput(2),
      // The same round listed again (another call started waiting meanwhile): nothing new.
      waitingInput(2),
      none,
      callTool('4'),
      answers('4', 'no booking at Chez Nous: the person said decline'),
      claude('5', 2),
    ];
    expect(inputs(facts).map((e) => e.type === 'data-input' && [e.round, e.state, e.by, e.reason, e.answer])).toEqual([
      [1, 'waiting', undefined, undefined, undefined],
      [1, 'declined', 'alice', 'not tonight', undefined],
      [2, 'waiting', undefined, undefined, undefined],
      [2, 'timed_out', undefined, undefined, undefined],
    ]);
    // The call ran (with the decline): its result, not a denial.
    expect(project(facts).filter((e) => e.type === 'tool-output-available')).toEqual([
      expect.objectContaining({ toolCallId: 'a', isError: false, output: 'no booking at Chez Nous: the person said decline' }),
    ]);
  });

  test('a call approved first, then asked for input: approval events unchanged, then the input wait', () => {
    const facts: TurnFact[] = [
      ...before,
      { kind: 'pending-approvals', pending: [{ callId: 'a', name: 'modern__book_table', server: 'modern', tool: 'book_table', input: args, step: 1, text: '', requestedAt: '' }] },
      { kind: 'decision', decision: { callId: 'a', approve: true, identity: 'alice' } },
      none,
      callTool('2'),
      asks('2'),
      waitingInput(),
      { kind: 'decision', decision: { callId: 'a', approve: true, input: { guests: 3, time: '18:00' }, identity: 'bob' } },
      none,
      callTool('3'),
      answers('3', 'booked'),
    ];
    const events = project(facts).filter((e) => e.type === 'data-approval' || e.type === 'data-input');
    expect(events.map((e) => [e.type, e.state, 'by' in e ? e.by : undefined])).toEqual([
      ['data-approval', 'waiting', undefined],
      ['data-approval', 'approved', 'alice'],
      ['data-input', 'waiting', undefined],
      ['data-input', 'answered', 'bob'],
    ]);
  });

  test('a decision without a call id ends every wait, approvals and questions alike', () => {
    const facts: TurnFact[] = [
      started,
      prepared,
      claude('1', 1),
      reply('1', [use('a', 'modern__book_table', args), use('b', 'srv__write', {})], { attempt: 1, first: 1, parts: [] }),
      callTool('2'),
      asks('2'),
      {
        kind: 'pending-approvals',
        pending: [
          { callId: 'b', name: 'srv__write', server: 'srv', tool: 'write', input: {}, step: 1, text: '', requestedAt: '' },
          ...(waitingInput() as Extract<TurnFact, { kind: 'pending-approvals' }>).pending,
        ],
      },
      { kind: 'decision', decision: { approve: false, identity: 'ops' } },
      none,
    ];
    const ends = project(facts).flatMap((e) =>
      (e.type === 'data-approval' || e.type === 'data-input') && e.state !== 'waiting' ? [[e.type, e.toolCallId, e.state]] : [],
    );
    expect(ends).toEqual([
      ['data-input', 'a', 'declined'],
      ['data-approval', 'b', 'denied'],
    ]);
  });

  test('a call run as a local activity: its result asking for input does not end it either', () => {
    const local = (result: object): TurnFact => ({ kind: 'local-tool-call', toolUseId: 'a', result: result as never, durationMs: 3, attempts: 1 });
    const facts: TurnFact[] = [
      ...before,
      local({ content: [], isError: false, toolUseId: 'a', inputRequired: { requests } }),
      waitingInput(),
      { kind: 'decision', decision: { callId: 'a', approve: true, input: { guests: 1, time: 'noon' } } },
      none,
      local({ content: [{ type: 'text', text: 'booked' }], isError: false, toolUseId: 'a' }),
    ];
    const events = project(facts).filter((e) => e.type === 'data-input' || e.type === 'tool-output-available');
    expect(events.map((e) => [e.type, 'state' in e ? e.state : e.output])).toEqual([
      ['data-input', 'waiting'],
      ['data-input', 'answered'],
      ['tool-output-available', 'booked'],
    ]);
  });

  test(`a server asking more than ${MAX_INPUT_ROUNDS} rounds: the call ends with the workflow's error`, () => {
    const facts: TurnFact[] = [...before];
    for (let round = 1; round <= MAX_INPUT_ROUNDS; round++) {
      facts.push(callTool(`c${round}`), asks(`c${round}`), waitingInput(round), { kind: 'decision', decision: { callId: 'a', approve: true, input: { guests: 1, time: 'x' } } }, none);
    }
    facts.push(callTool('last'), asks('last'));
    const events = project(facts);
    expect(events.filter((e) => e.type === 'data-input' && e.state === 'answered')).toHaveLength(MAX_INPUT_ROUNDS);
    expect(events.filter((e) => e.type === 'tool-output-available')).toEqual([
      expect.objectContaining({ toolCallId: 'a', isError: true, output: `Tool modern/book_table kept asking for input (${MAX_INPUT_ROUNDS} rounds answered); it was stopped.` }),
    ]);
  });

  test("the recorded progress shows the call waiting, as the workflow's progress query does", () => {
    const progress = recordedProgress([...before, callTool('2'), asks('2'), waitingInput()]);
    expect(progress.toolCalls).toEqual([expect.objectContaining({ id: 'a', status: WAITING_APPROVAL_STATUS })]);
    expect(progress.pendingApprovals).toEqual([expect.objectContaining({ kind: 'input', callId: 'a', round: 1, requests })]);
  });
});
