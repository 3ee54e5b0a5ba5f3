/**
 * Claude calls through Anthropic's Message Batches API (half price, answered within 24 h): the
 * shapes shared by the turn, the collector workflow that gathers requests into Message Batches, and
 * the activities at the API's edge. One collector runs per namespace, task queue and model.
 * zod-free: the workflow bundle imports this.
 */
import type { MessageBatchRequestCounts } from '@anthropic-ai/sdk/resources/messages/batches';
import type { ClaudeCallOutput, FormatResponseOutput } from './contracts';

/** How a collector gathers and waits; from the worker's `claude.messageBatches` config. */
export interface MessageBatchSettings {
  /** A Message Batch is sent once it has this many requests… */
  maxRequests: number;
  /** …or when its first request has waited this long. */
  maxWaitMs: number;
  /** Request bytes in one Message Batch (the API takes 256 MB). */
  maxBytes: number;
  /** The first poll of a submitted batch, then each wait 1.5× the last… */
  pollInitialMs: number;
  /** …up to this. */
  pollMaxMs: number;
  /** A collector with nothing to do ends after this long (the next request starts it again). */
  idleMs: number;
  /**
   * The worker stores large payloads (External Storage): a batch's requests reach its create
   * activity as claims. Without it they are inline, and a Message Batch is cut at
   * {@link INLINE_CREATE_BYTES} so the activity's input fits Temporal's limits.
   */
  storesPayloads: boolean;
}

/** The API's limits on one Message Batch. */
export const API_MAX_REQUESTS = 100_000;
export const API_MAX_BYTES = 256 * 1024 * 1024;

/** Request bytes in one create activity's input when payloads are not stored. */
export const INLINE_CREATE_BYTES = 1536 * 1024;

export const DEFAULT_MESSAGE_BATCH_SETTINGS: Omit<MessageBatchSettings, 'storesPayloads'> = {
  maxRequests: 5000,
  maxWaitMs: 30_000,
  maxBytes: API_MAX_BYTES,
  pollInitialMs: 10_000,
  pollMaxMs: 60_000,
  idleMs: 10 * 60_000,
};

/** Default per-request deadline: the API's own (a request not answered in 24 h expires). */
export const DEFAULT_MESSAGE_BATCH_DEADLINE_MS = 24 * 60 * 60_000;

/**
 * The collector's workflow task timeout: a task that replays a whole run (the collector out of the
 * worker's cache) has time to finish instead of timing out and starting over.
 */
export const COLLECTOR_TASK_TIMEOUT = '1 minute';

/** The collector workflow's id: one per namespace (implied), task queue and model. */
export function collectorWorkflowId(taskQueue: string, model: string): string {
  return `mcp-turns-message-batches-${taskQueue}-${model}`;
}

/** A turn's run, where a result goes back to. */
export interface TurnRef {
  workflowId: string;
  runId: string;
}

/**
 * The first key of a batch request's JSON encoding: storage keeps such payloads from the segment
 * threshold on (src/storage/payload-selector.ts), so a create activity's input holds claims.
 */
export const BATCH_REQUEST_JSON_PREFIX = '{"batchRequest":';

/** The first keys of a collector request's JSON encoding (signal payloads): stored as readily. */
export const COLLECTOR_REQUEST_JSON_PREFIX = '{"entry":{"batchRequest":';

/** One request as the collector keeps it until its Message Batch is created. */
export interface BatchRequestEntry {
  /** `custom_id`: a hash of the turn's run, its call and the attempt; never a raw workflow id. */
  batchRequest: string;
  /** The Messages API `params` (no `stream`). */
  params: Record<string, unknown>;
  /** JSON bytes of `params`. */
  bytes: number;
}

/** What a turn signals its collector: a request, and where its result goes. */
export interface CollectorRequest {
  entry: BatchRequestEntry;
  turn: TurnRef;
  /** The turn's parent (a batch workflow), for progress by batch. */
  parent?: string;
}

/**
 * A request's result, as its turn is signalled: the message, the final failure, or, for a formatter
 * request whose reply finished the formatter, its answer (planned by the worker that delivers it:
 * src/message-batches/formatter-plans.ts).
 */
export type BatchedCallOutcome =
  | { customId: string; batchId: string; output: ClaudeCallOutput }
  | { customId: string; batchId: string; failure: BatchedCallFailure }
  | { customId: string; batchId: string; done: FormatResponseOutput };

/** A request that ended without a message: mapped to the same failure types as an interactive call. */
export interface BatchedCallFailure {
  /** A ClaudeFailureType, or one of {@link BatchedOutcomeType}. */
  type: string;
  message: string;
  /** The same request may succeed in a later Message Batch. */
  retryable: boolean;
  /** Wait before submitting again (a rate limit's retry-after). */
  nextRetryDelayMs?: number;
}

/** Failure types of batched requests that have no interactive counterpart. */
export const BatchedOutcomeType = {
  /** The request was not answered before its Message Batch's or the turn's deadline. */
  Expired: 'ClaudeBatchExpired',
  /** Its Message Batch was cancelled before the request was answered. */
  Canceled: 'ClaudeBatchCanceled',
  /** The batch adopted after a lost create response held other requests: submitted again. */
  NotSubmitted: 'ClaudeBatchNotSubmitted',
} as const;

/** A Message Batch's requests by state, as the API reports them (`request_counts`) at a poll. */
export type { MessageBatchRequestCounts };

/** What a poll of a Message Batch tells; `counts` is absent in results recorded before it was asked for. */
export interface MessageBatchPoll {
  ended: boolean;
  counts?: MessageBatchRequestCounts;
}

/** A Message Batch the collector created and waits for. */
export interface SubmittedBatch {
  id: string;
  /** Workflow time of its creation (ms). */
  submittedAt: number;
  requests: number;
  /** Where each request's result goes, by custom_id. */
  turns: Record<string, TurnRef>;
  /** Requests per parent (a batch workflow id), for progress. */
  byParent: Record<string, number>;
  /** custom_ids whose turns no longer wait (cancelled, past their deadline). */
  withdrawn: string[];
  /** The next poll waits this long. */
  pollDelayMs: number;
  /** Its request counts at the last poll; absent before the first. */
  counts?: MessageBatchRequestCounts;
  /** Asked to cancel (every request withdrawn). */
  cancelRequested?: boolean;
  /**
   * Created by an earlier attempt of the create call and seen in the list beside the one adopted:
   * its results are read only to tell whether it held these requests twice.
   */
  suspectedDuplicateOf?: string;
}

/** What the collector answers its query with. */
export interface CollectorStatus {
  model: string;
  taskQueue: string;
  /** Requests not yet in a Message Batch, and since when the oldest waits. */
  pending: { requests: number; byParent: Record<string, number>; since?: number };
  batches: Array<{
    id: string;
    requests: number;
    submittedAt: number;
    byParent: Record<string, number>;
    withdrawn: number;
    /** The API's request counts at the last poll; absent before the first. */
    counts?: MessageBatchRequestCounts;
  }>;
  totals: CollectorTotals;
}

export interface CollectorTotals {
  batches: number;
  requests: number;
  succeeded: number;
  errored: number;
  expired: number;
  canceled: number;
  /** Results whose turn no longer waited: discarded, still paid. */
  discarded: number;
  discardedCostUsd: number;
  /** Batches adopted after a create response was lost. */
  adopted: number;
}

export const ZERO_COLLECTOR_TOTALS: CollectorTotals = {
  batches: 0,
  requests: 0,
  succeeded: 0,
  errored: 0,
  expired: 0,
  canceled: 0,
  discarded: 0,
  discardedCostUsd: 0,
  adopted: 0,
};

/** The collector's input: its settings, and what a previous run handed on. */
export interface CollectorInput {
  taskQueue: string;
  model: string;
  settings: MessageBatchSettings;
  batches: SubmittedBatch[];
  pending: CollectorRequest[];
  /** When the oldest of `pending` began to wait (carried across continue-as-new); default: the run's start. */
  pendingSince?: number;
  totals: CollectorTotals;
  /** custom_ids already answered (the latest), so a repeated submission is not paid again. */
  answered: string[];
}

/** What a delivery of one Message Batch's results counted: the collector's per-result totals, and more. */
export type DeliveryReport = Omit<CollectorTotals, 'batches' | 'requests' | 'adopted'> & {
  /** Results whose custom_id this batch did not hold: the batch was not ours. */
  foreign: number;
  /** custom_ids answered. */
  answered: string[];
};
