/**
 * mcp-turns' public API for code: start and read durable chat turns and batches. Everything takes a
 * Temporal `Client` (see `connectClient`), so it works against the dev server and real clusters.
 * Client code only: nothing here loads the Temporal worker or its bundler (workers use
 * `mcp-turns/worker`, workflow code `mcp-turns/workflows`).
 */
export {
  startChatTurn,
  executeChatTurn,
  getTurnProgress,
  cancelTurn,
  type ChatTurnHandle,
  type StartChatTurnOptions,
  type ExecuteChatTurnOptions,
  type StreamOption,
  type ChatTurnRequest,
} from './client/chat-turn-client';
export type { OutputSchema, OutputRequest, OutputOf, TypedChatTurnResult } from './client/output-schema';
export type { OutputSpec, OutputReport, OutputPath } from './core/output-spec';
export type { Effort, CacheControls, ToolChoiceInput } from './core/request-controls';
export { follow, followConversation, followTurn, subscribe, subscribeTurn, subscribeConversation, type FailingCallEvent, type FollowedEvent, type SubscribeOptions } from './client/subscribe';
export {
  ANSWER_TEXT_ID,
  stepTextId,
  reasoningId,
  type TurnStreamEvent,
  type TurnStreamEventType,
  type StreamEndStatus,
} from './core/stream-events';
export { runBatch, startBatch, batchShardWorkflowIds, sumBatchProgress, type RunBatchOptions, type BatchItemOutcome, type BatchItemRequest, type BatchShard } from './client/batch-client';
export { findBatchShards, type BatchShards, type FindBatchOptions } from './client/batch-shards';
export { getBatchStatus, batchStatusOf, type BatchStatus, type BatchShardStatus } from './client/batch-status';
export { getBatchResults, BatchResultsShortfallError, type BatchResults, type BatchResultsOptions } from './client/batch-results';
export { resultLine, type ResultLine } from './client/result-line';
export { NotFoundError } from './client/not-found';
export type { Owner, Viewer } from './client/owner';
export { messageBatchWaits, messageBatchLine, type MessageBatchWait } from './client/message-batch-status';
export {
  createBatchSchedule,
  describeBatchSchedule,
  listBatchSchedules,
  triggerBatchSchedule,
  pauseBatchSchedule,
  resumeBatchSchedule,
  deleteBatchSchedule,
  DEFAULT_CATCHUP_WINDOW_MS,
  type CreateBatchScheduleOptions,
  type BatchScheduleScope,
  type BatchScheduleSpec,
  type BatchScheduleAction,
  type ListedBatchSchedule,
  type BatchScheduleView,
} from './client/batch-schedules';
export { listBatchScheduleRuns, type BatchScheduleRun, type BatchScheduleRunCounts, type BatchScheduleRunsOptions } from './client/batch-schedule-runs';
export { InvalidBatchScheduleError, BatchScheduleNotFoundError, BatchScheduleExistsError, type BatchScheduleField } from './client/batch-schedule-errors';
export {
  SCHEDULED_BATCH_WORKFLOW,
  BATCH_SCHEDULE_OVERLAPS,
  batchScheduleId,
  scheduledBatchName,
  type BatchScheduleOverlap,
  type ScheduledBatchInput,
  type ScheduledBatchResult,
} from './core/batch-schedule';
export { getTurnView, type TurnView } from './client/turn-view';
export { listWorkflows, type ListedWorkflow, type WorkflowListFilter } from './client/workflow-list';
export { cancelByName, NothingToCancelError, type CancelOutcome } from './client/cancel';
export {
  startConversation,
  sendMessage,
  submitMessage,
  messageTurnId,
  getConversation,
  cancelCurrentTurn,
  closeConversation,
  newConversationId,
  type ConversationHandle,
  type ConversationOptions,
  type SendMessageOptions,
  type SentMessage,
  type ConversationView,
} from './client/conversation-client';
export type { ConversationInput, ConversationMessage, MessageAnswered, MessageOutcome, ConversationStatus, TurnOptions } from './core/conversation';
export type { CompactionPolicy, CompactionReport } from './core/compaction';
export {
  listPendingApprovals,
  approveToolCall,
  denyToolCall,
  answerToolCall,
  ApprovalDecisionError,
  InvalidAnswerError,
  type PendingApproval,
  type ListPendingApprovalsOptions,
  type DecisionOptions,
} from './client/approvals';
export type { ApprovalRecord, ApprovalOutcome, ApprovalDecision, TurnApprovalInput, PendingApprovalMemo } from './core/approvals';
export type { InputRequest, InputResponse } from './core/input-requests';
export { WAITING_APPROVAL_STATUS, RUN_STATUSES, END_STATUSES, type RunStatus, type EndStatus } from './core/run-status';
export type { ToolApproval } from './core/contracts';
export { workflowUrl } from './client/ui-link';
export { connectClient, loadConnectConfig } from './client/connect-client';
export type { ConnectOverrides } from './temporal/connection';
export { loadSettings, type Settings, type SettingsSources } from './config/settings';
export { clientStorageOptions } from './data-converter/client-storage-options';
export {
  ChatTurnInputSchema,
  ChatTurnInputError,
  parseChatTurnInput,
  type ChatTurnInput,
} from './schemas/turn-input';
export { resolveTurn, DEFAULT_MODEL, type ResolvedTurnInput } from './core/resolve-turn';
export type { WorkerTurnDefaults } from './core/contracts';
export type { ChatTurnResult, ToolCallRecord, TurnProgress, TurnStopReason } from './core/turn-result';
export type { TurnResponse, Artifact } from './core/response';
export type { TokenUsage } from './core/usage';
export { parseBatchLines } from './schemas/batch-lines';
export type { BatchItem, BatchProgress } from './core/batch';
export { SEARCH_ATTRIBUTES } from './core/search-attributes';
export {
  INVALID_TURN_INPUT,
  CLAUDE_CALL_FAILED,
  INVALID_BATCH_INPUT,
  ClaudeFailureType,
  McpFailureType,
  type ClaudeFailureTypeName,
  type McpFailureTypeName,
} from './core/failure-types';
export { DEFAULT_TASK_QUEUE } from './core/task-queues';
