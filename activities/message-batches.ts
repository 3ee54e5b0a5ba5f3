/**
 * The Message Batches activities, thin over src/message-batches: a turn submits a request to its
 * collector (signal-with-start), on the turn's queue; the collector creates a Message Batch, polls
 * it, cancels it, and hands its results to their turns, on the Claude queue.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import type { ClaudeConfig } from '../src/claude/config';
import { claudeErrorPolicy } from '../src/claude/config';
import { toClaudeFailure } from '../src/claude/errors';
import { makePriceTable } from '../src/claude/pricing';
import type { FormatResponseOutput } from '../src/core/contracts';
import {
  DEFAULT_MESSAGE_BATCH_SETTINGS,
  type BatchedCallFailure,
  type BatchRequestEntry,
  type DeliveryReport,
  type MessageBatchPoll,
  type MessageBatchSettings,
  type TurnRef,
} from '../src/core/message-batches';
import type { TranscriptSegment } from '../src/core/transcript-segment';
import { collectorTarget, CollectorSubmissions, submissionLingerMs } from '../src/message-batches/collector-submissions';
import { batchRequestOf, type BatchSubmitInput } from '../src/message-batches/batch-request';
import { createOrAdoptBatch, type CreatedBatch } from '../src/message-batches/create-batch';
import { answerAllWith, deliverResults, type DeliveryInput } from '../src/message-batches/deliver-results';
import type { FormatterPlans } from '../src/message-batches/formatter-plans';
import { heartbeatingWhile } from './heartbeat';

export interface MessageBatchSubmitDeps {
  config: ClaudeConfig;
  /** The worker stores large payloads (External Storage). */
  storesPayloads: boolean;
  /** Where this worker keeps its formatter requests' plans, shared with its delivery. */
  formatterPlans?: FormatterPlans;
}

export interface MessageBatchActivityDeps {
  client: Anthropic;
  config: ClaudeConfig;
  /** The formatter plans of this worker's submissions: a reply that finishes one goes to its turn as the answer. */
  formatterPlans?: FormatterPlans;
}

/** Where a submitted request went: its custom_id and its collector's workflow id. */
export interface BatchSubmitted {
  customId: string;
  collector: string;
}

/**
 * The turn's side, on the turn's own queue (it calls no API, so it never waits behind Claude calls,
 * nor the collector's calls behind it).
 */
export function makeMessageBatchSubmitActivities(deps: MessageBatchSubmitDeps) {
  const settings: MessageBatchSettings = { ...DEFAULT_MESSAGE_BATCH_SETTINGS, ...deps.config.messageBatches, storesPayloads: deps.storesPayloads };
  const submissions = new CollectorSubmissions({ storesPayloads: deps.storesPayloads, lingerMs: submissionLingerMs(settings.maxWaitMs) });
  return {
    /** Hands one Claude request of a turn to its collector; a formatter whose replies make its answer is done instead. */
    async submitToMessageBatch(input: BatchSubmitInput, ...segments: TranscriptSegment[]): Promise<BatchSubmitted | { done: FormatResponseOutput }> {
      const ctx = Context.current();
      const execution = ctx.info.workflowExecution;
      if (!execution) throw new Error('submitToMessageBatch runs only as a turn workflow\'s activity');
      const turn: TurnRef = { workflowId: execution.workflowId, runId: execution.runId };
      const planned = await batchRequestOf(input, segments, turn, { cache: deps.config.promptCaching });
      if ('done' in planned) return planned;
      const target = collectorTarget(input.taskQueue, input.request.model, settings);
      if (planned.formatter) deps.formatterPlans?.keep(planned.entry.batchRequest, planned.formatter.input, planned.formatter.replies, planned.entry.bytes);
      await submissions.send(ctx.client, target, { entry: planned.entry, turn, ...(input.parent ? { parent: input.parent } : {}) }, { tellParent: input.tellParent === true });
      return { customId: planned.entry.batchRequest, collector: target.workflowId };
    },
  };
}

export type MessageBatchSubmitActivities = ReturnType<typeof makeMessageBatchSubmitActivities>;

/** The collector's side, on the Claude queue beside the Anthropic client. */
export function makeMessageBatchActivities(deps: MessageBatchActivityDeps) {
  const prices = makePriceTable(deps.config.pricing);
  const errorPolicy = claudeErrorPolicy(deps.config);
  /** Runs an API call while heartbeating (with `details`, each beat carries them), its errors as Claude failures. */
  const apiCall = async <T>(fn: (signal: AbortSignal) => Promise<T>, details?: () => unknown): Promise<T> => {
    const ctx = Context.current();
    try {
      return await heartbeatingWhile(ctx, () => fn(ctx.cancellationSignal), details);
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? err;
      throw toClaudeFailure(err, errorPolicy, { url: `${deps.client.baseURL.replace(/\/+$/, '')}/v1/messages/batches` });
    }
  };

  return {
    /** Creates one Message Batch, or adopts the one an earlier attempt created (src/message-batches/create-batch.ts). */
    async createMessageBatch(meta: { requests: number }, ...entries: BatchRequestEntry[]): Promise<CreatedBatch> {
      const ctx = Context.current();
      if (entries.length !== meta.requests) throw new Error(`createMessageBatch: ${entries.length} requests arrived, ${meta.requests} were sent`);
      const recorded = (ctx.info.heartbeatDetails as { batchId?: string } | undefined)?.batchId;
      let batchId = recorded;
      const created = await apiCall((signal) =>
        createOrAdoptBatch(deps.client, entries, {
          attempt: ctx.info.attempt,
          firstScheduledAtMs: ctx.info.scheduledTimestampMs,
          ...(recorded ? { recordedBatchId: recorded } : {}),
          record: (id) => {
            batchId = id;
            ctx.heartbeat({ batchId: id });
          },
          signal,
        }),
        // The recorded id stays in the details every beat sends.
        () => (batchId ? { batchId } : undefined),
      );
      ctx.log.info('Message Batch', { batchId, requests: entries.length, adopted: created.adopted, duplicateSuspects: created.duplicateSuspects });
      return created;
    },

    /** Whether a Message Batch has ended, and its requests by state. */
    async retrieveMessageBatch(batchId: string): Promise<MessageBatchPoll> {
      const batch = await apiCall((signal) => deps.client.messages.batches.retrieve(batchId, {}, { signal }));
      const { processing, succeeded, errored, canceled, expired } = batch.request_counts;
      return { ended: batch.processing_status === 'ended', counts: { processing, succeeded, errored, canceled, expired } };
    },

    /** Asks the API to cancel a Message Batch (requests not yet answered end `canceled`). */
    async cancelMessageBatch(batchId: string): Promise<void> {
      const batch = await deps.client.messages.batches.retrieve(batchId).catch(() => undefined);
      if (batch?.processing_status === 'ended') return; // nothing left to cancel
      await apiCall((signal) => deps.client.messages.batches.cancel(batchId, {}, { signal }));
    },

    /** Hands an ended Message Batch's results to their turns (src/message-batches/deliver-results.ts). */
    async deliverMessageBatchResults(input: DeliveryInput): Promise<DeliveryReport> {
      const ctx = Context.current();
      return apiCall((signal) =>
        deliverResults(input, {
          anthropic: deps.client,
          temporal: ctx.client,
          prices,
          errorPolicy,
          progress: () => ctx.heartbeat(),
          signal,
          ...(deps.formatterPlans ? { formatterPlans: deps.formatterPlans } : {}),
        }),
      );
    },

    /** Tells each turn of a request set that it failed (a Message Batch the API refused, or lost). */
    async answerWithFailure({ turns, failure }: { turns: Record<string, TurnRef>; failure: BatchedCallFailure }): Promise<void> {
      await answerAllWith(Context.current().client, turns, failure);
    },
  };
}

export type MessageBatchActivities = ReturnType<typeof makeMessageBatchActivities>;
