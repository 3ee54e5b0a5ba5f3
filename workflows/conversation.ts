/**
 * A conversation as a workflow, one per conversation id. Callers send only the new message (the
 * `sendMessage` update, with update-with-start so a create and a send cannot be torn apart); each
 * message runs as a child `chatTurn`, one at a time in order of arrival, with the history so far
 * passed as transcript segments (stored once each, referenced by every later turn). The update
 * answers once the turn has ended, naming it (the client reads the turn's result from the turn). The conversation continues as new between turns, carrying its
 * history and queue, and closes itself when idle.
 */
import { inheritedFairness, inheritedOwnerMemo, SA_OWNER, turnStartSearchAttributes } from '../src/core/search-attributes';
import { USAGE_SLOT_MEMO } from '../src/core/usage-ledger';
import {
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  DEFAULT_CONVERSATION_IDLE_TIMEOUT_MS,
  CONTINUING_AS_NEW,
  NOT_THE_OWNER,
  DUPLICATE_MESSAGE,
  REMEMBERED_MESSAGE_IDS,
  DEFAULT_TURNS_PER_CONVERSATION_RUN,
  conversationTurnId,
  messageTurnOptions,
  type ConversationInput,
  type MessageAnswered,
  type QueuedMessage,
} from '../src/core/conversation';
import { replayCompaction, type CompactionPolicy } from '../src/core/compaction';
import { failureMessage } from '../src/core/failure-message';
import { appendTurn } from '../src/core/segment-groups';
import { oneLine } from '../src/core/text';
import type { TranscriptSegment } from '../src/core/transcript-segment';
import type { ChatTurnResult } from '../src/core/turn-result';
import {
  cancelCurrentTurnSignal,
  closeConversationSignal,
  conversationStatusQuery,
  conversationTranscriptQuery,
  sendMessageUpdate,
  turnOfMessageQuery,
} from '../src/core/workflow-handlers';
import type { chatTurn } from './chat-turn';

export async function conversation(input: ConversationInput, ...carried: TranscriptSegment[]): Promise<{ turns: number }> {
  let history = carried;
  const queue: QueuedMessage[] = [...(input.queue ?? [])];
  const outcomes = new Map<number, MessageAnswered>();
  let accepted = input.accepted ?? queue.length;
  let turns = input.turns ?? 0;
  let turnsThisRun = 0;
  let closing = false;
  /** Set once this run has answered enough turns: new messages are refused (the client sends them to the next run). */
  let draining = false;
  let current: { turnId: string; scope: CancellationScope } | undefined;
  const messageIds = new Map<string, number>(input.messageIds ?? []);

  setHandler(
    sendMessageUpdate,
    async (message) => {
      const index = accepted++;
      if (message.id !== undefined) {
        messageIds.set(message.id, index);
        if (messageIds.size > REMEMBERED_MESSAGE_IDS) messageIds.delete(messageIds.keys().next().value!);
      }
      queue.push({ ...message, index });
      await condition(() => outcomes.has(index));
      const outcome = outcomes.get(index)!;
      outcomes.delete(index);
      return outcome;
    },
    {
      validator: (message) => {
        // First: someone else learns nothing of the conversation, not even its message ids.
        if (message?.owner !== undefined && message.owner !== workflowInfo().typedSearchAttributes.get(SA_OWNER)) throw new Error(NOT_THE_OWNER);
        if (closing) throw new Error('the conversation is closing: start a new one (another id) to go on');
        if (typeof message?.text !== 'string' || !message.text.trim()) throw new Error('message.text must be a non-empty string');
        const earlier = message.id !== undefined ? messageIds.get(message.id) : undefined;
        if (earlier !== undefined) throw new Error(`${DUPLICATE_MESSAGE} ${conversationTurnId(workflowInfo().workflowId, earlier)}`);
        if (draining) throw new Error(CONTINUING_AS_NEW);
      },
    },
  );
  setHandler(conversationStatusQuery, () => ({
    state: closing ? 'closing' : current ? 'running' : 'idle',
    turns,
    queued: queue.length,
    ...(current ? { currentTurnId: current.turnId } : {}),
  }));
  setHandler(conversationTranscriptQuery, () => history.flatMap((s) => s.transcriptSegment));
  setHandler(turnOfMessageQuery, (messageId) => {
    const index = messageIds.get(messageId);
    return index === undefined ? undefined : conversationTurnId(workflowInfo().workflowId, index);
  });
  setHandler(cancelCurrentTurnSignal, () => current?.scope.cancel());
  setHandler(closeConversationSignal, () => {
    closing = true;
  });

  const idleTimeout = input.idleTimeoutMs ?? DEFAULT_CONVERSATION_IDLE_TIMEOUT_MS;
  for (;;) {
    if (!(await condition(() => queue.length > 0 || closing, idleTimeout))) closing = true; // idle: close
    const message = queue.shift();
    if (!message) break; // closing, nothing left to answer
    const turnId = conversationTurnId(workflowInfo().workflowId, message.index);
    const outcome: MessageAnswered = { index: message.index, turnId };
    const turnInput = { ...messageTurnOptions(input.options, message.options), question: message.text };
    const scope = new CancellationScope();
    current = { turnId, scope };
    try {
      const result = await scope.run(() =>
        executeChild<typeof chatTurn>('chatTurn', {
          workflowId: turnId,
          args: [turnInput, ...history],
          staticSummary: oneLine(message.text, 120),
          staticDetails: `conversation **${workflowInfo().workflowId}**, message ${message.index + 1}`,
          // Set at the start, so the turn upserts once, at its end (workflows/turn-search-attributes.ts).
          typedSearchAttributes: turnStartSearchAttributes({ model: turnInput.model, owner: workflowInfo().typedSearchAttributes.get(SA_OWNER) }),
          ...childMemo(workflowInfo().memo, message.usageSlot),
          ...inheritedFairness(workflowInfo().priority),
        }),
      );
      history = carryForward(history, result, turnInput.compaction ?? {});
    } catch (err) {
      outcome.error = isCancellation(err) ? 'the turn was cancelled' : oneLine(failureMessage(err), 500);
    } finally {
      current = undefined;
    }
    turns++;
    turnsThisRun++;
    outcomes.set(message.index, outcome);

    // Continue as new between turns once the run is long, when nothing waits on it: new messages
    // are refused from then on (the client sends them again, to the next run), the queue is
    // answered, and every update delivers its outcome. A close meanwhile ends the run instead.
    const long = turnsThisRun >= (input.turnsPerRun ?? DEFAULT_TURNS_PER_CONVERSATION_RUN) || workflowInfo().continueAsNewSuggested;
    if (long && !closing) {
      draining = true;
      if (queue.length > 0) continue;
      await condition(() => allHandlersFinished() || closing);
      if (!closing) {
        await continueAsNew<typeof conversation>({ ...input, queue: [], turns, accepted, messageIds: [...messageIds] }, ...history);
      }
    }
  }
  await condition(allHandlersFinished);
  return { turns };
}

/**
 * The history after a turn: compacted by the stages the turn had to apply (with the turn's own
 * policy), then the turn's messages, grouped (src/core/segment-groups.ts).
 */
function carryForward(history: TranscriptSegment[], result: ChatTurnResult, policy: CompactionPolicy): TranscriptSegment[] {
  const base = result.compaction ? replayCompaction(history, policy, result.compaction.stages) : history;
  return appendTurn(base, result.messages);
}

/** A message's turn's memo: its conversation's owner, and the usage slot the message holds. */
function childMemo(memo: Record<string, unknown> | undefined, usageSlot: string | undefined): { memo?: Record<string, unknown> } {
  const owner = inheritedOwnerMemo(memo).memo;
  return owner || usageSlot ? { memo: { ...owner, ...(usageSlot ? { [USAGE_SLOT_MEMO]: usageSlot } : {}) } } : {};
}
