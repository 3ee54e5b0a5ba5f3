/**
 * Subscribing to a turn's or a conversation's stream: an async iterable of its events from an
 * offset, live while it runs, whole after it has closed (for as long as the server keeps its
 * history). A turn's stream ends with its `finish`; a conversation's is its turns' streams in
 * order, numbered on, and ends when the conversation has closed and its last turn finished.
 *
 * The subscribers of a turn on one client share one reader (./turn-feed.ts): one long poll on the
 * history and, while a Claude call of the turn runs, a `describe` every `pollMs` for the call's
 * heartbeat details. Subscribing writes nothing anywhere.
 *
 * Following a turn (`followTurn`) is subscribing to it with its failed attempts as they are retried
 * (`failing-call`, unnumbered): what `run` and `chat` show while a turn runs, approvals included
 * (`data-approval` events), with no query and no polling of their own.
 */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { conversationTurnId } from '../core/conversation';
import { STREAM_PUBLISH_INTERVAL_MS } from '../core/stream-record';
import type { TurnStreamEvent } from '../core/stream-events';
import { TurnFeed } from '../stream/turn-feed';
import { expectKind } from './workflow-kind';

const DEFAULT_POLL_MS = STREAM_PUBLISH_INTERVAL_MS;

export interface SubscribeOptions {
  /** The first offset wanted. @default 0 */
  fromOffset?: number;
  /** How often a running Claude call's deltas are looked for, once it has published. @default its publishing pace (300 ms) */
  pollMs?: number;
  /** Ends the iteration (a `return()` on the iterator does too). */
  signal?: AbortSignal;
  /** A turn that does not exist yet is waited for (a queued message's turn); else not found throws. */
  waitForStart?: boolean;
}

/**
 * A failed attempt of one of the turn's running activities, retried: not a stream event (no
 * offset; a later subscriber does not see it), e.g. `Claude unreachable: connection refused
 * (http://…), attempt 4, next in 8 s`.
 */
export interface FailingCallEvent {
  type: 'failing-call';
  turnId: string;
  line: string;
}

/** What following a turn hands on: its stream's events and its failed attempts. */
export type FollowedEvent = TurnStreamEvent | FailingCallEvent;

/** The events of turn `workflowId` from `fromOffset`, until its `finish`; an id of another kind of workflow throws `WorkflowKindError`. */
export function subscribeTurn(
  client: Client,
  workflowId: string,
  options: SubscribeOptions = {},
): AsyncIterable<TurnStreamEvent> {
  return turnOf(client, workflowId, options, false) as AsyncIterable<TurnStreamEvent>;
}

/** `subscribeTurn`, with the turn's failed attempts handed on as they are read (see the module comment). */
export function followTurn(client: Client, workflowId: string, options: SubscribeOptions = {}): AsyncIterable<FollowedEvent> {
  return turnOf(client, workflowId, options, true);
}

function turnOf(client: Client, workflowId: string, options: SubscribeOptions, failingCalls: boolean): AsyncIterable<FollowedEvent> {
  return {
    [Symbol.asyncIterator]: async function* () {
      const described = options.waitForStart
        ? await startedRun(client, workflowId, options)
        : await client.workflow.getHandle(workflowId).describe();
      if (described) expectKind(workflowId, described.type, 'turn');
      const runId = described?.runId;
      if (runId !== undefined) yield* turnEvents(client, workflowId, runId, options.fromOffset ?? 0, options, 0, failingCalls);
    },
  };
}

/**
 * The events of conversation `conversationId`: its turns' streams in order (`conversationId-turn-N`,
 * across continue-as-new), one offset sequence, until the conversation has closed. A conversation
 * not started yet is waited for (its first message starts it).
 */
export function subscribeConversation(
  client: Client,
  conversationId: string,
  options: SubscribeOptions = {},
): AsyncIterable<TurnStreamEvent> {
  return { [Symbol.asyncIterator]: () => conversationEvents(client, conversationId, options, false) as AsyncGenerator<TurnStreamEvent> };
}

/** `subscribeConversation`, with each turn's failed attempts handed on as they are read. */
export function followConversation(client: Client, conversationId: string, options: SubscribeOptions = {}): AsyncIterable<FollowedEvent> {
  return { [Symbol.asyncIterator]: () => conversationEvents(client, conversationId, options, true) };
}

/**
 * `subscribeTurn` or `subscribeConversation`, by what `id` names (a conversation runs the
 * `conversation` workflow); an id of another kind of workflow (a batch) throws `WorkflowKindError`.
 */
export async function subscribe(
  client: Client,
  id: string,
  options: SubscribeOptions = {},
): Promise<AsyncIterable<TurnStreamEvent>> {
  return (await streamOf(client, id, options, false)) as AsyncIterable<TurnStreamEvent>;
}

/** `followTurn` or `followConversation`, by what `id` names; an id of another kind of workflow throws `WorkflowKindError`. */
export function follow(client: Client, id: string, options: SubscribeOptions = {}): Promise<AsyncIterable<FollowedEvent>> {
  return streamOf(client, id, options, true);
}

async function streamOf(client: Client, id: string, options: SubscribeOptions, failingCalls: boolean): Promise<AsyncIterable<FollowedEvent>> {
  const described = await client.workflow.getHandle(id).describe();
  if (described.type === 'conversation') return { [Symbol.asyncIterator]: () => conversationEvents(client, id, options, failingCalls) };
  expectKind(id, described.type, 'turn');
  // The run just described is the one followed: no second describe.
  return { [Symbol.asyncIterator]: () => turnEvents(client, id, described.runId, options.fromOffset ?? 0, options, 0, failingCalls) };
}

/**
 * Run `runId` of turn `workflowId`'s events from `fromOffset`, numbered from `base` (and with
 * `failingCalls`, its failed attempts); answers the next number.
 */
async function* turnEvents(
  client: Client,
  workflowId: string,
  runId: string,
  fromOffset: number,
  options: SubscribeOptions,
  base = 0,
  failingCalls = false,
): AsyncGenerator<FollowedEvent, number> {
  const feed = feedOf(client, workflowId, runId, options.pollMs ?? DEFAULT_POLL_MS);
  const leave = feed.join({ failingCalls });
  const aborted = new Promise<void>((resolve) => options.signal?.addEventListener('abort', () => resolve(), { once: true }));
  try {
    for (let i = 0, failing = feed.failing.length; ; ) {
      for (; failingCalls && failing < feed.failing.length; failing++) yield { type: 'failing-call', turnId: workflowId, line: feed.failing[failing]! };
      for (; i < feed.events.length; i++) {
        const offset = base + i;
        if (offset >= fromOffset) yield { ...feed.events[i]!, offset, turnId: workflowId } as TurnStreamEvent;
      }
      if (feed.ended) {
        if (feed.failure) throw feed.failure;
        return base + i;
      }
      if (options.signal?.aborted) return base + i;
      await Promise.race([feed.changed(), aborted]);
    }
  } finally {
    leave();
  }
}

/** Feeds followed by this process, per client: one per turn run, while anyone subscribes. */
const feeds = new WeakMap<Client, Map<string, TurnFeed>>();

function feedOf(client: Client, workflowId: string, runId: string, pollMs: number): TurnFeed {
  let byRun = feeds.get(client);
  if (!byRun) feeds.set(client, (byRun = new Map()));
  const found = byRun.get(runId);
  if (found && !found.failure) return found;
  const runs = byRun;
  const feed: TurnFeed = new TurnFeed(client, workflowId, runId, pollMs, () => {
    if (runs.get(runId) === feed) runs.delete(runId);
  });
  runs.set(runId, feed);
  return feed;
}

async function* conversationEvents(
  client: Client,
  conversationId: string,
  options: SubscribeOptions,
  failingCalls: boolean,
): AsyncGenerator<FollowedEvent> {
  const fromOffset = options.fromOffset ?? 0;
  let base = 0;
  for (let index = 0; ; index++) {
    const turnId = conversationTurnId(conversationId, index);
    const described = await startedRun(client, turnId, options, () => closed(client, conversationId));
    if (described === undefined) return;
    expectKind(turnId, described.type, 'turn');
    const runId = described.runId;
    const turn = turnEvents(client, turnId, runId, fromOffset, options, base, failingCalls);
    for (;;) {
      const next = await turn.next();
      if (next.done) {
        base = next.value;
        break;
      }
      yield next.value;
    }
    if (options.signal?.aborted) return;
  }
}

/**
 * `workflowId` described once it exists; undefined when `signal` aborts first, or when
 * `stopWaiting` answers true and it still does not exist.
 */
async function startedRun(
  client: Client,
  workflowId: string,
  options: SubscribeOptions,
  stopWaiting?: () => Promise<boolean>,
): Promise<WorkflowExecutionDescription | undefined> {
  while (!options.signal?.aborted) {
    const described = await describeIfStarted(client, workflowId);
    if (described !== undefined) return described;
    // A turn started just before its conversation closed is looked for once more.
    if (stopWaiting && (await stopWaiting())) return describeIfStarted(client, workflowId);
    await sleep(Math.max(250, options.pollMs ?? DEFAULT_POLL_MS));
  }
  return undefined;
}

/** Whether the conversation has closed (a run continued as new goes on; one not started yet has not closed). */
async function closed(client: Client, conversationId: string): Promise<boolean> {
  const status = (await describeIfStarted(client, conversationId))?.status.name;
  return status !== undefined && status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW';
}

/** `workflowId` described, or undefined when it does not exist (yet). */
async function describeIfStarted(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
  try {
    return await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') return undefined;
    throw err;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
