/**
 * The queries, updates and signals of mcp-turns' workflows, defined once: workflows register
 * handlers for them and clients call them by these definitions, so a renamed one fails to compile
 * instead of at run time. Queries leave no trace in history; updates and signals do.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ApprovalDecision, ApprovalRecord } from './approvals';
import type { LiveInputAsked } from './input-requests';
import type { ConversationMessage, ConversationStatus, MessageAnswered } from './conversation';
import type { MessageParam } from './contracts';
import type { BatchProgress } from './batch';
import type { BatchedCallOutcome, CollectorRequest, CollectorStatus } from './message-batches';
import type { TurnProgress } from './turn-result';
import type { Admission, AdmitRequest, SlotRelease, UsageSummary } from './usage-ledger';

/** A turn's live progress: phase, step, tool calls so far, usage. */
export const turnProgressQuery = defineQuery<TurnProgress>('progress');
/** A batch's counts and per-item states. */
export const batchProgressQuery = defineQuery<BatchProgress>('batchProgress');

/** The turn's tool calls waiting for a person's approval now. */
export const pendingApprovalsQuery = defineQuery<ApprovalRecord[]>('pendingApprovals');
/**
 * Approves or denies a waiting tool call (or every waiting call of the turn); refused when the call
 * is unknown or already decided. Answers the records it decided.
 */
export const decideUpdate = defineUpdate<ApprovalRecord[], [ApprovalDecision]>('decide');
/**
 * A server asks the person during a live tool call (the legacy era's `elicitation/create`, which
 * cannot outlive the call): the call's activity tells its turn, which keeps a waiting record of
 * kind `input` (answered with `decide`), and polls {@link approvalRecordQuery} for the answer.
 */
export const liveInputSignal = defineSignal<[LiveInputAsked]>('liveInput');
/** The latest record of a tool call (by its tool_use id), decided or waiting. */
export const approvalRecordQuery = defineQuery<ApprovalRecord | undefined, [string]>('approvalRecord');
/** A batch's child waits (or no longer does): for a person's approval, or for a Message Batch (from `collector`). */
export interface TurnWaiting {
  workflowId: string;
  waiting: boolean;
  for?: 'approval' | 'message-batch';
  /** The collector's workflow id, when the turn waits for a Message Batch. */
  collector?: string;
}

/**
 * Batch children tell their batch that they wait (or no longer do): a turn tells of its approvals
 * itself, one per signal; its first Message Batch request's submission tells of it, grouped with
 * the other turns' submitted at the same time.
 */
export const turnWaitingSignal = defineSignal<TurnWaiting[]>('turnWaiting');

/** Turns hand Claude requests to their Message Batch collector (one or more per signal). */
export const messageBatchRequestSignal = defineSignal<CollectorRequest[]>('messageBatchRequest');
/** A turn no longer waits for these requests (cancelled, or past their deadline): their results are discarded. */
export const messageBatchWithdrawSignal = defineSignal<[{ customIds: string[] }]>('messageBatchWithdraw');
/** The collector's requests waiting to be sent and the Message Batches it waits for. */
export const messageBatchesQuery = defineQuery<CollectorStatus>('messageBatches');
/** A request's result from its Message Batch, to its turn. */
export const messageBatchResultSignal = defineSignal<[BatchedCallOutcome]>('messageBatchResult');

/**
 * Sends a message to a conversation (with update-with-start: create-or-send in one call). The
 * message is queued in order of arrival; the update answers once its turn has ended.
 */
export const sendMessageUpdate = defineUpdate<MessageAnswered, [ConversationMessage]>('sendMessage');
export const conversationStatusQuery = defineQuery<ConversationStatus>('conversationStatus');
/** The conversation so far: every answered turn's messages, in order. */
/** The turn that answers (or will answer) the message with this id, while the conversation remembers it. */
export const turnOfMessageQuery = defineQuery<string | undefined, [string]>('turnOfMessage');
export const conversationTranscriptQuery = defineQuery<MessageParam[]>('conversationTranscript');
/** Cancels the running turn (it ends cancelled; the conversation goes on with the next message). */
export const cancelCurrentTurnSignal = defineSignal('cancelCurrentTurn');
/** Closes the conversation once the queued messages are answered. */
export const closeConversationSignal = defineSignal('closeConversation');

/** Asks an owner's usage ledger to admit one turn (src/core/usage-ledger.ts). */
export const admitUpdate = defineUpdate<Admission, [AdmitRequest]>('admit');
/** A turn's end, with the tokens it used, to its owner's usage ledger. */
export const releaseSlotSignal = defineSignal<[SlotRelease]>('releaseSlot');
/** An owner's usage today and turns in flight. */
export const usageQuery = defineQuery<UsageSummary>('usage');
