/**
 * `mcp-turns/workflows`: for workflow code of your own (safe in Temporal's workflow sandbox). Run a
 * turn as a child workflow with `executeChild(chatTurn, { args: [input] })`; query or update a turn
 * with the handler definitions. The worker must register these workflows (`McpTurnsPlugin` does).
 */
export { chatTurn, chatBatch, conversation, scheduledBatch } from '../../workflows/index';
export {
  turnProgressQuery,
  batchProgressQuery,
  pendingApprovalsQuery,
  decideUpdate,
  sendMessageUpdate,
  conversationStatusQuery,
  conversationTranscriptQuery,
  cancelCurrentTurnSignal,
  closeConversationSignal,
} from '../core/workflow-handlers';
export type { ChatTurnInput } from '../schemas/turn-input';
export type { ChatTurnResult, TurnProgress, TurnStopReason } from '../core/turn-result';
export type { BatchInput, BatchProgress } from '../core/batch';
export type { ScheduledBatchInput, ScheduledBatchResult } from '../core/batch-schedule';
export type { ApprovalDecision, ApprovalRecord } from '../core/approvals';
export type { ConversationInput, ConversationMessage, MessageAnswered, MessageOutcome, ConversationStatus, TurnOptions } from '../core/conversation';
