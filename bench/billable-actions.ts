/**
 * Temporal Cloud billable Actions of a finished workflow run, read from its event history, and the
 * plain figures of that history (events, workflow tasks, activity attempts, local-activity markers,
 * bytes). Pure functions: no I/O, no SDK. Used by bench/turn-actions.bench.ts.
 *
 * A history is taken as `fetchHistory()` returns it (protobuf objects: numeric enums, Long ids) or
 * as its JSON (`eventType: "EVENT_TYPE_…"`, ids as strings), or as a list of such events. An event's
 * kind is read from the `*EventAttributes` field it carries, else from its `eventType` name.
 *
 * The rules, after Temporal Cloud's "Temporal Cloud Actions" page (docs.temporal.io/cloud/actions):
 *
 *  - Workflow started: 1 per run started by a client (start, signal-with-start, update-with-start),
 *    by continue-as-new, or by a workflow retry / cron (the new run's WorkflowExecutionStarted; the
 *    old run's WorkflowExecutionContinuedAsNew is 0, so a chain of runs counts each start once).
 *  - Child workflow started: 2, in the parent, on StartChildWorkflowExecutionInitiated ("one for
 *    durably storing the intent, one for the attempt"). The child's own first WorkflowExecutionStarted
 *    (it names a parent and continues no run) is then 0, so a parent and its children measured
 *    together count the child's start twice, not three times. A child measured without its parent
 *    therefore shows no start Action at all.
 *  - Activity: 1 per attempt. Only the last attempt's ActivityTaskStarted is written (when the
 *    activity closes), with `attempt` = the number of attempts so far: per scheduled activity, the
 *    highest `attempt` of the Started events that name it. An activity cancelled or timed out while
 *    waiting for a retry shows no Started event for the attempts before, so it is undercounted; one
 *    never started costs nothing.
 *  - Local activities: every local activity recorded in one workflow task is 1 Action together:
 *    MarkerRecorded events named `core_local_activity`, grouped by `workflowTaskCompletedEventId`.
 *    Other markers (e.g. `core_patch`) are free.
 *  - Timer started: 1 (TimerStarted), the SDK's implicit ones too (TypeScript `condition` with a
 *    timeout, a retry backoff longer than a local activity may wait in-task).
 *  - Signal: 1 per signal. Received (WorkflowExecutionSignaled, whoever sent it) is 1; sent to
 *    another workflow (SignalExternalWorkflowExecutionInitiated) is 1, unless its target is one of
 *    `measuredWorkflowIds`: a signal between two workflows both measured is counted on the receiving
 *    side only.
 *  - Update: 1 per accepted update (WorkflowExecutionUpdateAccepted; an admitted event is not a
 *    second one). Rejected updates are billable too but leave nothing in history: not counted here.
 *  - Search attributes upserted: 1 per UpsertWorkflowSearchAttributes command, however many
 *    attributes it sets; one that sets only TemporalChangeVersion (versioning) is free, as are the
 *    attributes given at start.
 *
 * Not in history, so not counted: queries (1 each when a worker answers it; describes and history
 * reads are free), rejected updates, activity heartbeats that reach the server (1 each; the SDK
 * throttles them), workflow resets, schedules, Nexus, export. Memo changes (WorkflowPropertiesModified)
 * are not in the list of Actions: 0.
 */

/** An event as fetchHistory() returns it or as its JSON: only the fields read here. */
export type HistoryEventLike = Record<string, unknown>;
/** A history (`{ events }`) or a list of its events. */
export type HistoryLike = { events?: readonly unknown[] | null } | readonly unknown[];

export interface BillableActions {
  total: number;
  /** Actions by rule: workflowStarted, childWorkflowStarted, activityAttempts, localActivityTasks, timers, signalsReceived, signalsSent, updatesAccepted, searchAttributeUpserts. */
  byKind: Record<string, number>;
}

export interface BillableActionsOptions {
  /** Workflow ids measured together with this history: signals sent to them are counted where they are received. */
  measuredWorkflowIds?: Iterable<string>;
}

export interface HistoryFigures {
  events: number;
  /** WorkflowTaskCompleted events. */
  workflowTasks: number;
  /** Attempts by activity type (the highest `attempt` of each scheduled activity's Started events). */
  activityAttempts: Record<string, number>;
  /** MarkerRecorded events of local activities (`core_local_activity`). */
  localActivityMarkers: number;
  /** Buffer.byteLength(JSON.stringify(history)). */
  bytes: number;
}

export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
const CHANGE_VERSION_ATTRIBUTE = 'TemporalChangeVersion';
const ATTRIBUTES_SUFFIX = 'EventAttributes';

/** Every rule's key, so a breakdown always lists all of them (zeros included). */
export const ACTION_KINDS = [
  'workflowStarted',
  'childWorkflowStarted',
  'activityAttempts',
  'localActivityTasks',
  'timers',
  'signalsReceived',
  'signalsSent',
  'updatesAccepted',
  'searchAttributeUpserts',
] as const;

/** The history's events as plain JSON objects (protobuf objects go through their toJSON). */
function plainEvents(history: HistoryLike): HistoryEventLike[] {
  const events = Array.isArray(history) ? history : ((history as { events?: readonly unknown[] | null }).events ?? []);
  return events.map((e) => {
    if (!e || typeof e !== 'object') return {};
    const json = typeof (e as { toJSON?: unknown }).toJSON === 'function' ? (JSON.parse(JSON.stringify(e)) as unknown) : e;
    return (json ?? {}) as HistoryEventLike;
  });
}

/** `EVENT_TYPE_ACTIVITY_TASK_STARTED` or `ActivityTaskStarted` → `ActivityTaskStarted`. */
function typeName(eventType: unknown): string | undefined {
  if (typeof eventType !== 'string') return undefined;
  if (!eventType.startsWith('EVENT_TYPE_')) return eventType;
  return eventType
    .slice('EVENT_TYPE_'.length)
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

/** The event's kind (`ActivityTaskStarted`) and its attributes. */
export function eventKind(event: HistoryEventLike): { kind: string; attributes: Record<string, unknown> } {
  for (const [key, value] of Object.entries(event)) {
    if (key.endsWith(ATTRIBUTES_SUFFIX) && value && typeof value === 'object') {
      const name = key.slice(0, -ATTRIBUTES_SUFFIX.length);
      return { kind: name.charAt(0).toUpperCase() + name.slice(1), attributes: value as Record<string, unknown> };
    }
  }
  return { kind: typeName(event.eventType) ?? 'Unspecified', attributes: {} };
}

/** A number from a number, a numeric string, or a Long-like object. */
function num(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  if (value && typeof value === 'object' && 'toNumber' in value && typeof (value as { toNumber: unknown }).toNumber === 'function') {
    return (value as { toNumber(): number }).toNumber();
  }
  return 0;
}

const present = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

/** Per scheduled activity: its type and its number of attempts (0: never started). */
function activityAttemptsOf(events: HistoryEventLike[]): Array<{ type: string; attempts: number }> {
  const scheduled = new Map<number, { type: string; attempts: number }>();
  for (const event of events) {
    const { kind, attributes } = eventKind(event);
    if (kind === 'ActivityTaskScheduled') {
      const type = (attributes.activityType as { name?: string } | undefined)?.name ?? '?';
      scheduled.set(num(event.eventId), { type, attempts: 0 });
    }
  }
  for (const event of events) {
    const { kind, attributes } = eventKind(event);
    if (kind !== 'ActivityTaskStarted') continue;
    const id = num(attributes.scheduledEventId);
    const activity = scheduled.get(id) ?? { type: '?', attempts: 0 };
    activity.attempts = Math.max(activity.attempts, Math.max(1, num(attributes.attempt)));
    scheduled.set(id, activity);
  }
  return [...scheduled.values()];
}

function isLocalActivityMarker(kind: string, attributes: Record<string, unknown>): boolean {
  return kind === 'MarkerRecorded' && attributes.markerName === LOCAL_ACTIVITY_MARKER;
}

/** The search attribute names an UpsertWorkflowSearchAttributes event sets. */
function upsertedNames(attributes: Record<string, unknown>): string[] {
  const fields = (attributes.searchAttributes as { indexedFields?: Record<string, unknown> } | undefined)?.indexedFields;
  return fields ? Object.keys(fields) : [];
}

/** The Temporal Cloud Actions the history shows, by the rules above. */
export function billableActions(history: HistoryLike, options: BillableActionsOptions = {}): BillableActions {
  const measured = new Set(options.measuredWorkflowIds ?? []);
  const events = plainEvents(history);
  const byKind: Record<string, number> = Object.fromEntries(ACTION_KINDS.map((k) => [k, 0]));
  const localActivityTasks = new Set<string>();
  for (const event of events) {
    const { kind, attributes } = eventKind(event);
    switch (kind) {
      case 'WorkflowExecutionStarted': {
        // A child's first run was paid for by its parent's StartChildWorkflowExecutionInitiated (2).
        const firstRunOfChild = present((attributes.parentWorkflowExecution as { workflowId?: string } | undefined)?.workflowId) && !present(attributes.continuedExecutionRunId);
        if (!firstRunOfChild) byKind.workflowStarted! += 1;
        break;
      }
      case 'StartChildWorkflowExecutionInitiated':
        byKind.childWorkflowStarted! += 2;
        break;
      case 'MarkerRecorded':
        if (isLocalActivityMarker(kind, attributes)) localActivityTasks.add(String(num(attributes.workflowTaskCompletedEventId)));
        break;
      case 'TimerStarted':
        byKind.timers! += 1;
        break;
      case 'WorkflowExecutionSignaled':
        byKind.signalsReceived! += 1;
        break;
      case 'SignalExternalWorkflowExecutionInitiated': {
        const target = (attributes.workflowExecution as { workflowId?: string } | undefined)?.workflowId;
        if (!(target !== undefined && measured.has(target))) byKind.signalsSent! += 1;
        break;
      }
      case 'WorkflowExecutionUpdateAccepted':
        byKind.updatesAccepted! += 1;
        break;
      case 'UpsertWorkflowSearchAttributes': {
        const names = upsertedNames(attributes);
        if (!(names.length > 0 && names.every((n) => n === CHANGE_VERSION_ATTRIBUTE))) byKind.searchAttributeUpserts! += 1;
        break;
      }
      default:
        break;
    }
  }
  byKind.activityAttempts = activityAttemptsOf(events).reduce((n, a) => n + a.attempts, 0);
  byKind.localActivityTasks = localActivityTasks.size;
  const total = Object.values(byKind).reduce((n, v) => n + v, 0);
  return { total, byKind };
}

/** The Actions of several histories measured together (e.g. a conversation and its turns): signals between them counted once. */
export function billableActionsOfAll(histories: ReadonlyArray<{ workflowId: string; history: HistoryLike }>): BillableActions {
  const measuredWorkflowIds = histories.map((h) => h.workflowId);
  const byKind: Record<string, number> = Object.fromEntries(ACTION_KINDS.map((k) => [k, 0]));
  for (const { history } of histories) {
    for (const [k, v] of Object.entries(billableActions(history, { measuredWorkflowIds }).byKind)) byKind[k] = (byKind[k] ?? 0) + v;
  }
  return { total: Object.values(byKind).reduce((n, v) => n + v, 0), byKind };
}

/** Events, workflow tasks, activity attempts by type, local-activity markers and bytes of a history. */
export function historyFigures(history: HistoryLike): HistoryFigures {
  const events = plainEvents(history);
  const activityAttempts: Record<string, number> = {};
  for (const { type, attempts } of activityAttemptsOf(events)) activityAttempts[type] = (activityAttempts[type] ?? 0) + attempts;
  let workflowTasks = 0;
  let localActivityMarkers = 0;
  for (const event of events) {
    const { kind, attributes } = eventKind(event);
    if (kind === 'WorkflowTaskCompleted') workflowTasks++;
    if (isLocalActivityMarker(kind, attributes)) localActivityMarkers++;
  }
  return { events: events.length, workflowTasks, activityAttempts, localActivityMarkers, bytes: Buffer.byteLength(JSON.stringify(history)) };
}
