/**
 * The Temporal Cloud Actions of bench/billable-actions.ts on small hand-built histories, one rule
 * at a time: starts (client, continue-as-new, child: 2 in the parent, 0 in the child's first run),
 * activity attempts (the last Started event's attempt), local activities (one per workflow task),
 * timers, signals (counted where received when both sides are measured), updates, search attribute
 * upserts; the same history as fetchHistory() returns it (protobuf objects) and as JSON; and the
 * plain figures of a history.
 */
import { temporal } from '@temporalio/proto';
import { billableActions, billableActionsOfAll, historyFigures, type HistoryEventLike } from '../../bench/billable-actions';

let nextId = 1;
beforeEach(() => {
  nextId = 1;
});

/** An event as JSON: `eventType` and its `*EventAttributes` field. */
function ev(type: string, attributes: Record<string, unknown> = {}): HistoryEventLike {
  const name = type.charAt(0).toLowerCase() + type.slice(1);
  const eventType = `EVENT_TYPE_${type.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`;
  return { eventId: String(nextId++), eventType, [`${name}EventAttributes`]: attributes };
}

const started = (attributes: Record<string, unknown> = {}): HistoryEventLike => ev('WorkflowExecutionStarted', { workflowType: { name: 'chatTurn' }, ...attributes });
const wft = (): HistoryEventLike[] => [ev('WorkflowTaskScheduled'), ev('WorkflowTaskStarted'), ev('WorkflowTaskCompleted')];
const history = (...events: Array<HistoryEventLike | HistoryEventLike[]>) => ({ events: events.flat() });

describe('billableActions', () => {
  test('a run started by a client is 1 Action, whatever search attributes it starts with', () => {
    const h = history(started({ searchAttributes: { indexedFields: { McpTurnsStatus: { data: 'InJ1bm5pbmci' } } } }), wft(), ev('WorkflowExecutionCompleted'));
    expect(billableActions(h)).toEqual({ total: 1, byKind: expect.objectContaining({ workflowStarted: 1 }) });
  });

  test('continue-as-new: the new run\'s start is 1, the old run\'s ContinuedAsNew event is 0', () => {
    const first = history(started(), wft(), ev('WorkflowExecutionContinuedAsNew', { newExecutionRunId: 'run-2' }));
    const second = history(started({ continuedExecutionRunId: 'run-1' }), wft(), ev('WorkflowExecutionCompleted'));
    expect(billableActions(first).total).toBe(1);
    expect(billableActions(second).total).toBe(1);
  });

  test('a child start is 2 in the parent and 0 in the child\'s first run; a child\'s continue-as-new is 1', () => {
    const parent = history(
      started(),
      wft(),
      ev('StartChildWorkflowExecutionInitiated', { workflowId: 'child', workflowType: { name: 'chatTurn' } }),
      ev('ChildWorkflowExecutionStarted', { workflowExecution: { workflowId: 'child', runId: 'c1' } }),
      ev('ChildWorkflowExecutionCompleted', { workflowExecution: { workflowId: 'child', runId: 'c1' } }),
    );
    const parentRef = { parentWorkflowExecution: { workflowId: 'parent', runId: 'p1' } };
    const childFirst = history(started(parentRef), wft(), ev('WorkflowExecutionCompleted'));
    const childNext = history(started({ ...parentRef, continuedExecutionRunId: 'c1' }), wft(), ev('WorkflowExecutionCompleted'));
    expect(billableActions(parent).byKind).toEqual(expect.objectContaining({ workflowStarted: 1, childWorkflowStarted: 2 }));
    expect(billableActions(parent).total).toBe(3);
    expect(billableActions(childFirst).total).toBe(0);
    expect(billableActions(childNext).total).toBe(1);
    expect(billableActionsOfAll([{ workflowId: 'parent', history: parent }, { workflowId: 'child', history: childFirst }]).total).toBe(3);
  });

  test('each activity attempt is 1: the highest attempt of its Started events; one never started is 0', () => {
    const h = history(
      started(),
      wft(),
      ev('ActivityTaskScheduled', { activityType: { name: 'claude' } }), // 5
      ev('ActivityTaskScheduled', { activityType: { name: 'claude' } }), // 6
      ev('ActivityTaskScheduled', { activityType: { name: 'callTool' } }), // 7
      ev('ActivityTaskStarted', { scheduledEventId: '5', attempt: 3 }), // retried twice: only the last attempt's event
      ev('ActivityTaskCompleted', { scheduledEventId: '5', startedEventId: '8' }),
      ev('ActivityTaskStarted', { scheduledEventId: '6', attempt: 1 }),
      ev('ActivityTaskCompleted', { scheduledEventId: '6', startedEventId: '10' }),
      ev('ActivityTaskCancelRequested', { scheduledEventId: '7' }),
      ev('ActivityTaskCanceled', { scheduledEventId: '7' }),
    );
    expect(billableActions(h).byKind.activityAttempts).toBe(4);
    expect(billableActions(h).total).toBe(5);
    expect(historyFigures(h).activityAttempts).toEqual({ claude: 4, callTool: 0 });
  });

  test('local activities recorded in one workflow task are 1 Action together; other markers are free', () => {
    const h = history(
      started(), // 1
      wft(), // 2-4
      ev('MarkerRecorded', { markerName: 'core_local_activity', workflowTaskCompletedEventId: '4' }),
      ev('MarkerRecorded', { markerName: 'core_local_activity', workflowTaskCompletedEventId: '4' }),
      ev('MarkerRecorded', { markerName: 'core_local_activity', workflowTaskCompletedEventId: '4' }),
      ev('MarkerRecorded', { markerName: 'core_patch', workflowTaskCompletedEventId: '4' }),
      wft(), // 9-11
      ev('MarkerRecorded', { markerName: 'core_local_activity', workflowTaskCompletedEventId: '11' }),
    );
    expect(billableActions(h).byKind.localActivityTasks).toBe(2);
    expect(billableActions(h).total).toBe(3);
    expect(historyFigures(h).localActivityMarkers).toBe(4);
  });

  test('each timer started is 1; its firing or cancelling is not', () => {
    const h = history(started(), wft(), ev('TimerStarted', { timerId: '1' }), ev('TimerFired', { timerId: '1' }), ev('TimerStarted', { timerId: '2' }), ev('TimerCanceled', { timerId: '2' }));
    expect(billableActions(h).byKind.timers).toBe(2);
    expect(billableActions(h).total).toBe(3);
  });

  test('a signal is 1 where received and 1 where sent, but once when both workflows are measured', () => {
    const sender = history(started(), wft(), ev('SignalExternalWorkflowExecutionInitiated', { workflowExecution: { workflowId: 'receiver' }, signalName: 'go' }), ev('ExternalWorkflowExecutionSignaled', {}));
    const receiver = history(started(), ev('WorkflowExecutionSignaled', { signalName: 'go' }), wft());
    expect(billableActions(sender).byKind.signalsSent).toBe(1);
    expect(billableActions(receiver).byKind.signalsReceived).toBe(1);
    expect(billableActions(sender, { measuredWorkflowIds: ['receiver'] }).byKind.signalsSent).toBe(0);
    const both = billableActionsOfAll([{ workflowId: 'sender', history: sender }, { workflowId: 'receiver', history: receiver }]);
    expect(both.byKind).toEqual(expect.objectContaining({ workflowStarted: 2, signalsSent: 0, signalsReceived: 1 }));
    expect(both.total).toBe(3);
  });

  test('an accepted update is 1; its admission and completion are not', () => {
    const h = history(
      started(),
      ev('WorkflowExecutionUpdateAdmitted', { request: { meta: { updateId: 'u1' } } }),
      wft(),
      ev('WorkflowExecutionUpdateAccepted', { protocolInstanceId: 'u1' }),
      ev('WorkflowExecutionUpdateCompleted', { meta: { updateId: 'u1' } }),
      ev('WorkflowExecutionUpdateAccepted', { protocolInstanceId: 'u2' }),
    );
    expect(billableActions(h).byKind.updatesAccepted).toBe(2);
    expect(billableActions(h).total).toBe(3);
  });

  test('each search attribute upsert is 1 however many it sets; TemporalChangeVersion alone is free; memo changes are free', () => {
    const upsert = (...keys: string[]) => ev('UpsertWorkflowSearchAttributes', { searchAttributes: { indexedFields: Object.fromEntries(keys.map((k) => [k, { data: 'MQ==' }])) } });
    const h = history(started(), wft(), upsert('McpTurnsStatus', 'McpTurnsModel', 'McpTurnsCostUsd'), upsert('McpTurnsStatus'), upsert('TemporalChangeVersion'), ev('WorkflowPropertiesModified', { upsertedMemo: {} }));
    expect(billableActions(h).byKind.searchAttributeUpserts).toBe(2);
    expect(billableActions(h).total).toBe(3);
  });

  test('workflow tasks and other bookkeeping events are free', () => {
    const h = history(started(), wft(), wft(), ev('WorkflowTaskScheduled'), ev('WorkflowTaskStarted'), ev('WorkflowTaskFailed', {}), ev('WorkflowExecutionCompleted'));
    expect(billableActions(h).total).toBe(1);
  });

  test('events named by eventType alone (no attributes) are counted too, and a list of events is a history', () => {
    const events = [{ eventId: '1', eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' }, { eventId: '2', eventType: 'TimerStarted' }];
    expect(billableActions(events).byKind).toEqual(expect.objectContaining({ workflowStarted: 1, timers: 1 }));
  });

  test('a history as fetchHistory() returns it (protobuf: numeric enums, Long ids) counts as its JSON does', () => {
    const E = temporal.api.enums.v1.EventType;
    // protobufjs encodes a number as an int64 (its types ask for a Long).
    const L = (n: number) => n as unknown as NonNullable<temporal.api.history.v1.IHistoryEvent['eventId']>;
    // Encoded and decoded again, as a history read from the server is: Long ids, numeric enums.
    const { History } = temporal.api.history.v1;
    const proto = History.decode(History.encode({
      events: [
        { eventId: L(1), eventType: E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, workflowExecutionStartedEventAttributes: { workflowType: { name: 'chatTurn' } } },
        { eventId: L(2), eventType: E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, workflowTaskScheduledEventAttributes: {} },
        { eventId: L(3), eventType: E.EVENT_TYPE_WORKFLOW_TASK_STARTED, workflowTaskStartedEventAttributes: { scheduledEventId: L(2) } },
        { eventId: L(4), eventType: E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, workflowTaskCompletedEventAttributes: { scheduledEventId: L(2), startedEventId: L(3) } },
        { eventId: L(5), eventType: E.EVENT_TYPE_MARKER_RECORDED, markerRecordedEventAttributes: { markerName: 'core_local_activity', workflowTaskCompletedEventId: L(4) } },
        { eventId: L(6), eventType: E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, activityTaskScheduledEventAttributes: { activityType: { name: 'claude' } } },
        { eventId: L(7), eventType: E.EVENT_TYPE_ACTIVITY_TASK_STARTED, activityTaskStartedEventAttributes: { scheduledEventId: L(6), attempt: 2 } },
        { eventId: L(8), eventType: E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, activityTaskCompletedEventAttributes: { scheduledEventId: L(6), startedEventId: L(7) } },
        { eventId: L(9), eventType: E.EVENT_TYPE_TIMER_STARTED, timerStartedEventAttributes: { timerId: '1' } },
      ],
    }).finish());
    expect(typeof proto.events[0]!.eventId).toBe('object'); // a Long
    expect(proto.events[0]!.eventType).toBe(E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
    const json = JSON.parse(JSON.stringify(proto)) as { events: HistoryEventLike[] };
    expect(json.events[0]!.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
    const expected = { workflowStarted: 1, activityAttempts: 2, localActivityTasks: 1, timers: 1 };
    expect(billableActions(proto).byKind).toEqual(expect.objectContaining(expected));
    expect(billableActions(json)).toEqual(billableActions(proto));
    expect(billableActions(proto).total).toBe(5);
    const figures = historyFigures(proto);
    expect(figures).toEqual({ events: 9, workflowTasks: 1, activityAttempts: { claude: 2 }, localActivityMarkers: 1, bytes: Buffer.byteLength(JSON.stringify(proto)) });
  });
});

describe('historyFigures', () => {
  test('counts events, completed workflow tasks, attempts by type, local-activity markers and JSON bytes', () => {
    const h = history(
      started(),
      wft(),
      ev('MarkerRecorded', { markerName: 'core_local_activity', workflowTaskCompletedEventId: '4' }),
      ev('ActivityTaskScheduled', { activityType: { name: 'claude' } }), // 6
      ev('ActivityTaskStarted', { scheduledEventId: '6', attempt: 1 }),
      ev('ActivityTaskCompleted', { scheduledEventId: '6', startedEventId: '7' }),
      wft(),
      ev('WorkflowExecutionCompleted'),
    );
    expect(historyFigures(h)).toEqual({
      events: 12,
      workflowTasks: 2,
      activityAttempts: { claude: 1 },
      localActivityMarkers: 1,
      bytes: Buffer.byteLength(JSON.stringify(h)),
    });
  });
});
