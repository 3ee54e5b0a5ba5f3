/**
 * A conversation: one long-running workflow per conversation id that runs each message as a child
 * `chatTurn`, in the order messages arrive, and carries the history forward. Shapes shared by the
 * conversation workflow, its client and the CLI (sandbox-safe).
 */
import type { ChatTurnInput } from '../schemas/turn-input';
import type { ChatTurnResult } from './turn-result';

/** Turn options a conversation or one message sets: everything of a turn's input but its question and history. */
export type TurnOptions = Omit<ChatTurnInput, 'question' | 'history'>;

/** The conversation workflow's input; the carried-over fields are set by continue-as-new. */
export interface ConversationInput {
  /** Turn options for every message (a message's own options win field by field, `context` key by key). */
  options?: TurnOptions;
  /** An idle conversation (no message for this long) closes itself. @default 24 h */
  idleTimeoutMs?: number;
  /** Turns per run before the conversation continues as new (sooner when Temporal suggests it). @default 20 */
  turnsPerRun?: number;
  /** Carried over: messages accepted but not answered yet, in order. */
  queue?: QueuedMessage[];
  /** Carried over: turns answered so far (they number the child turns). */
  turns?: number;
  /** Carried over: messages accepted so far. */
  accepted?: number;
  /** Carried over: the ids of the most recent messages and their index (at most {@link REMEMBERED_MESSAGE_IDS}). */
  messageIds?: Array<[string, number]>;
}

/** Message ids a conversation remembers for refusing resends. */
export const REMEMBERED_MESSAGE_IDS = 1000;

/**
 * The one line that refuses a message while a run that has answered enough turns answers the rest
 * of its queue before continuing as new; the client sends the message again, to the next run.
 */
export const CONTINUING_AS_NEW = 'the conversation is continuing as new: send the message again';

/** The one line that refuses a message from someone other than the conversation's owner: as if there were no conversation. */
export const NOT_THE_OWNER = 'no such conversation';

/** The start of the one line that refuses a message id sent again; the turn id follows. */
export const DUPLICATE_MESSAGE = 'message already sent, answered by turn';

export interface ConversationMessage {
  text: string;
  /**
   * Unique in the conversation: a message sent again with the same id (a retry after a crash) is
   * refused with the turn that answers it, never asked twice.
   */
  id?: string;
  /** This message's turn options, over the conversation's. */
  options?: TurnOptions;
  /**
   * The sender's owner key (src/client/owner.ts), when the sender may post only into their own
   * conversations: a conversation owned by another key refuses the message ({@link NOT_THE_OWNER}).
   */
  owner?: string;
  /** The slot of the owner's usage ledger the message's turn holds (src/core/usage-ledger.ts): the turn releases it at its end. */
  usageSlot?: string;
}

/**
 * The options of a message's turn: the conversation's, with the message's own over them field by
 * field, except `context`, merged key by key (the message's value of a key wins), so a message that
 * adds a value (serve's `user`) keeps the conversation's others (its tenant).
 */
export function messageTurnOptions(conversation: TurnOptions | undefined, message: TurnOptions | undefined): TurnOptions {
  const merged = { ...conversation, ...message };
  if (conversation?.context && message?.context) merged.context = { ...conversation.context, ...message.context };
  return merged;
}

export interface QueuedMessage extends ConversationMessage {
  /** 0-based, in order of arrival. */
  index: number;
}

/**
 * What the `sendMessage` update answers with once the message's turn has ended: which turn, and
 * its failure if it failed. The turn's result stays in the turn (the client reads it from there),
 * so the conversation's history does not hold each turn's messages a second time.
 */
export interface MessageAnswered {
  index: number;
  /** The child turn's workflow id. */
  turnId: string;
  /** Set when the turn failed or was cancelled: one line. */
  error?: string;
}

/** A message's outcome as the client returns it: the answer, with the turn's result when it has one. */
export interface MessageOutcome extends MessageAnswered {
  result?: ChatTurnResult;
}

export interface ConversationStatus {
  state: 'idle' | 'running' | 'closing';
  turns: number;
  queued: number;
  /** The running turn's workflow id. */
  currentTurnId?: string;
}

/** The child turn of a conversation's n-th message. */
export function conversationTurnId(conversationId: string, index: number): string {
  return `${conversationId}-turn-${index + 1}`;
}

/** Whether `id` has the form of a {@link conversationTurnId}: ids of that form are the conversations' own. */
export function isConversationTurnIdForm(id: string): boolean {
  return /-turn-\d+$/.test(id);
}

/** The message index a {@link conversationTurnId} names. */
export function conversationTurnIndex(turnId: string): number {
  return Number(/-turn-(\d+)$/.exec(turnId)?.[1] ?? 0) - 1;
}

export const DEFAULT_CONVERSATION_IDLE_TIMEOUT_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_TURNS_PER_CONVERSATION_RUN = 20;
