/**
 * Subscribing to a turn's or a conversation's stream: an async iterable of its events from an
 * offset, live while it runs, whole after it has closed (for as long as the server keeps its
 * history). A turn's stream ends with its `finish`; a conversation's is its turns' streams in
 * order, numbered on, and ends when the conversation has closed and its last turn finished.
 *
 * Each subscriber reads the history with one long poll, and while a Claude call of the turn runs,
 * describes the turn every `pollMs` for the call's heartbeat details: it writes nothing anywhere.
 */
import type { Client } from '@temporalio/client';
import { conversationTurnId } from '../core/conversation';
import type { TurnStreamEvent } from '../core/stream-events';
import type { StreamRecord } from '../core/stream-record';
import { projectTurn } from './turn-projection';
import type { TurnFact } from './turn-facts';
import { TurnHistory } from './turn-history';

export interface SubscribeOptions {
  /** The first offset wanted. @default 0 */
  fromOffset?: number;
  /** How often a running Claude call's deltas are looked for. @default 100 */
  pollMs?: number;
  /** Ends the iteration (a `return()` on the iterator does too). */
  signal?: AbortSignal;
  /** A turn that does not exist yet is waited for (a queued message's turn); else not found throws. */
  waitForStart?: boolean;
}

/** The events of turn `workflowId` from `fromOffset`, until its `finish`. */
export function subscribeTurn(
  client: Client,
  workflowId: string,
  options: SubscribeOptions = {},
): AsyncIterable<TurnStreamEvent> {
  return { [Symbol.asyncIterator]: () => turnEvents(client, workflowId, options.fromOffset ?? 0, options) };
}

/**
 * The events of conversation `conversationId`: its turns' streams in order (`conversationId-turn-N`,
 * across continue-as-new), one offset sequence, until the conversation has closed.
 */
export function subscribeConversation(
  client: Client,
  conversationId: string,
  options: SubscribeOptions = {},
): AsyncIterable<TurnStreamEvent> {
  return { [Symbol.asyncIterator]: () => conversationEvents(client, conversationId, options) };
}

/** `subscribeTurn` or `subscribeConversation`, by what `id` names (a conversation runs the `conversation` workflow). */
export async function subscribe(
  client: Client,
  id: string,
  options: SubscribeOptions = {},
): Promise<AsyncIterable<TurnStreamEvent>> {
  const described = await client.workflow.getHandle(id).describe();
  return described.type === 'conversation'
    ? subscribeConversation(client, id, options)
    : subscribeTurn(client, id, options);
}

async function* turnEvents(
  client: Client,
  workflowId: string,
  fromOffset: number,
  options: SubscribeOptions,
  base = 0,
): AsyncGenerator<TurnStreamEvent, number> {
  const history = new TurnHistory(client, workflowId);
  const facts: TurnFact[] = [];
  let live = new Map<string, StreamRecord>();
  let emitted = 0;
  let pendingFacts: Promise<TurnFact[]> | undefined;
  const pollMs = options.pollMs ?? 100;
  if (options.waitForStart) await waitUntilStarted(client, workflowId, options);
  for (;;) {
    if (options.signal?.aborted) return base + emitted;
    const events = projectTurn({ facts, live });
    for (let i = emitted; i < events.length; i++) {
      const offset = base + i;
      if (offset >= fromOffset) yield { ...events[i]!, offset, turnId: workflowId } as TurnStreamEvent;
    }
    emitted = Math.max(emitted, events.length);
    const last = events[events.length - 1];
    if (
      last?.type === 'finish' ||
      (history.closed && !pendingFacts && facts.some((f) => f.kind === 'closed'))
    )
      return base + emitted;
    pendingFacts ??= history.next(options.signal);
    const running = claudeCallRunning(facts);
    const arrived = await (running
      ? Promise.race([pendingFacts, sleep(pollMs).then(() => undefined)])
      : pendingFacts);
    if (arrived) {
      facts.push(...arrived);
      pendingFacts = undefined;
      if (!claudeCallRunning(facts)) live = new Map();
    } else {
      live = await history.liveRecords();
    }
  }
}

async function* conversationEvents(
  client: Client,
  conversationId: string,
  options: SubscribeOptions,
): AsyncGenerator<TurnStreamEvent> {
  const fromOffset = options.fromOffset ?? 0;
  let base = 0;
  for (let index = 0; ; index++) {
    const turnId = conversationTurnId(conversationId, index);
    if (!(await waitForTurn(client, conversationId, turnId, options))) return;
    const turn = turnEvents(client, turnId, fromOffset, options, base);
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

/** Waits until turn `turnId` exists: true, or false once the conversation has closed without it. */
async function waitForTurn(
  client: Client,
  conversationId: string,
  turnId: string,
  options: SubscribeOptions,
): Promise<boolean> {
  for (;;) {
    if (options.signal?.aborted) return false;
    try {
      await client.workflow.getHandle(turnId).describe();
      return true;
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    }
    const conversation = await client.workflow.getHandle(conversationId).describe();
    if (conversation.status.name !== 'RUNNING' && conversation.status.name !== 'CONTINUED_AS_NEW') {
      // Closed: the turn may still have been started just before; look once more.
      try {
        await client.workflow.getHandle(turnId).describe();
        return true;
      } catch {
        return false;
      }
    }
    await sleep(Math.max(250, options.pollMs ?? 100));
  }
}

async function waitUntilStarted(client: Client, workflowId: string, options: SubscribeOptions): Promise<void> {
  while (!options.signal?.aborted) {
    try {
      await client.workflow.getHandle(workflowId).describe();
      return;
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    }
    await sleep(Math.max(250, options.pollMs ?? 100));
  }
}

/** Whether a Claude call of the turn is scheduled and has not ended. */
function claudeCallRunning(facts: readonly TurnFact[]): boolean {
  const open = new Set<string>();
  for (const f of facts) {
    if (f.kind === 'scheduled' && (f.activityType === 'claude' || f.activityType === 'formatResponse'))
      open.add(f.activityId);
    else if (f.kind === 'activity-completed' || f.kind === 'activity-ended') open.delete(f.activityId);
  }
  return open.size > 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
