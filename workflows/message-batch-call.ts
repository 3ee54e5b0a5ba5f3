/**
 * A turn's Claude calls through Message Batches: each request is handed to the collector of its
 * task queue and model (workflows/message-batch-collector.ts), and the turn waits for its result
 * signal: no worker slot is held, and the turn may leave the worker's cache. A retryable outcome is
 * submitted again into a later batch (the interactive call's backoff and attempts); an expired one
 * once more, then it fails the turn; a final failure fails it as the interactive call would. A
 * cancelled turn withdraws its request (its result is discarded when it arrives).
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyLocalActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { BatchSubmitted, MessageBatchSubmitActivities } from '../activities/message-batches';
import type { ClaudeCallInput, ClaudeCallOutput, FormatResponseInput, FormatResponseOutput } from '../src/core/contracts';
import { BatchedOutcomeType, type BatchedCallFailure, type BatchedCallOutcome } from '../src/core/message-batches';
import type { TranscriptSegment } from '../src/core/transcript-segment';
import { messageBatchResultSignal, messageBatchWithdrawSignal } from '../src/core/workflow-handlers';
import { SA_BATCH } from '../src/core/search-attributes';
import type { FormatterReply } from '../src/message-batches/formatter-plan';
import { CLAUDE_CALL_RETRY } from '../src/core/retry-policies';
import type { ClaudeCalls } from './claude-calls';
import { workflowNow } from './workflow-clock';

/** Submissions of one request before its turn fails, as the interactive call's attempts. */
const MAX_SUBMISSIONS = 10;

type Answer = ClaudeCallOutput | { failure: BatchedCallFailure };

export class MessageBatchCalls implements ClaudeCalls {
  private readonly outcomes = new Map<string, BatchedCallOutcome>();
  private calls = 0;
  waitingMessageBatch?: { since: number; collector: string };
  /**
   * The turn's batch parent is yet to be told the turn waits for Message Batches (it then leaves
   * the batch's window for good): its first submission tells it.
   */
  private tellParent = workflowInfo().parent !== undefined && workflowInfo().typedSearchAttributes.get(SA_BATCH) !== undefined;

  /**
   * Registers the result signal's handler (a result that came before is delivered then: Temporal
   * keeps a signal until its handler is set).
   */
  constructor(
    private readonly opts: {
      /** A request not answered in this time is withdrawn and counts as expired. */
      deadlineMs?: number;
      /** Called when the call starts or stops waiting for a Message Batch. */
      onWaiting(): void;
    },
  ) {
    setHandler(messageBatchResultSignal, (outcome) => {
      if (!this.outcomes.has(outcome.customId)) this.outcomes.set(outcome.customId, outcome);
    });
  }

  /** One Claude call of the loop. */
  async step(request: ClaudeCallInput, segments: TranscriptSegment[], summary: string): Promise<ClaudeCallOutput> {
    const call = ++this.calls;
    const { stream: _stream, ...unstreamed } = request;
    const answer = await this.answer((attempt) =>
      submitActivity(summary).submitToMessageBatch({ kind: 'step', key: `${call}.${attempt}`, request: unstreamed, ...this.where() }, ...segments),
    );
    if ('done' in answer) throw failed('a step cannot be done without Claude');
    if ('failure' in answer) throw ApplicationFailure.create({ type: answer.failure.type, message: answer.failure.message, nonRetryable: true });
    return answer;
  }

  /**
   * The response formatter: each of its calls (forced, repair, auto) goes through a Message Batch.
   * Each reply is planned over by the next submission, which may find the formatter done; or by the
   * worker that delivers it, which then sends the answer instead (src/message-batches/formatter-plans.ts).
   */
  async formatResponse(request: FormatResponseInput, segments: TranscriptSegment[]): Promise<FormatResponseOutput> {
    const call = ++this.calls;
    const { stream: _stream, ...unstreamed } = request;
    const replies: FormatterReply[] = [];
    for (;;) {
      const answer = await this.answer((attempt) =>
        submitActivity('format response').submitToMessageBatch(
          { kind: 'formatter', key: `${call}.${replies.length}.${attempt}`, request: unstreamed, replies, ...this.where() },
          ...segments,
        ),
      );
      if ('done' in answer) return answer.done;
      replies.push(answer);
    }
  }

  /** Submits until the request is answered or finally fails. */
  private async answer(
    submit: (attempt: number) => Promise<BatchSubmitted | { done: FormatResponseOutput }>,
  ): Promise<Answer | { done: FormatResponseOutput }> {
    let expired = 0;
    for (let attempt = 1; ; attempt++) {
      const submitted = await submit(attempt);
      if ('done' in submitted) return submitted;
      this.tellParent = false;
      const outcome = await this.wait(submitted);
      if ('done' in outcome) return { done: outcome.done };
      if ('output' in outcome) return outcome.output;
      const failure = outcome.failure;
      if (failure.type === BatchedOutcomeType.Expired) {
        if (++expired < 2) {
          log.warn('a batched Claude request expired: sent once more', { customId: submitted.customId });
          continue;
        }
        return { failure: { ...failure, retryable: false, message: `${failure.message}; it expired twice, so the call fails` } };
      }
      if (failure.type === BatchedOutcomeType.NotSubmitted && attempt < MAX_SUBMISSIONS) continue;
      if (failure.retryable && attempt < MAX_SUBMISSIONS) {
        log.info('a batched Claude request failed: it goes into a later Message Batch', { customId: submitted.customId, type: failure.type });
        await sleep(failure.nextRetryDelayMs ?? Math.min(1000 * 2 ** (attempt - 1), 60_000));
        continue;
      }
      return { failure: { ...failure, retryable: false } };
    }
  }

  /** Waits for a submitted request's result, its deadline, or the turn's cancellation. */
  private async wait(submitted: BatchSubmitted): Promise<BatchedCallOutcome> {
    const { customId, collector } = submitted;
    const { deadlineMs } = this.opts;
    this.waitingFor(collector);
    try {
      // Without a deadline of its own, the API's applies: a request not answered in 24 h ends `expired`.
      if (deadlineMs === undefined) await condition(() => this.outcomes.has(customId));
      if (deadlineMs === undefined || (await condition(() => this.outcomes.has(customId), deadlineMs))) return this.outcomes.get(customId)!;
      await withdraw(collector, customId);
      return {
        customId,
        batchId: '',
        failure: { type: BatchedOutcomeType.Expired, message: `the request was not answered within its deadline (${Math.round(deadlineMs / 1000)} s)`, retryable: true },
      };
    } catch (err) {
      if (isCancellation(err)) await CancellationScope.nonCancellable(() => withdraw(collector, customId));
      throw err;
    } finally {
      this.waitingFor(undefined);
    }
  }

  /** A call waits for a Message Batch of `collector`, or no longer does. */
  private waitingFor(collector: string | undefined): void {
    this.waitingMessageBatch = collector ? { since: workflowNow(), collector } : undefined;
    this.opts.onWaiting();
  }

  /** The turn's task queue (its collector runs there), its parent, and whether the submission tells the parent. */
  private where(): { taskQueue: string; parent?: string; tellParent?: true } {
    const info = workflowInfo();
    return { taskQueue: info.taskQueue, ...(info.parent ? { parent: info.parent.workflowId } : {}), ...(this.tellParent ? { tellParent: true } : {}) };
  }
}

function failed(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, nonRetryable: true });
}

/** Tells the collector a request's result is no longer wanted. */
async function withdraw(collector: string, customId: string): Promise<void> {
  await getExternalWorkflowHandle(collector)
    .signal(messageBatchWithdrawSignal, { customIds: [customId] })
    .catch(() => undefined); // a collector that has ended holds nothing of it
}

/**
 * A local activity of the turn's worker: a submission calls no API (it signals the collector, with
 * the requests other turns submit at the same time), and as a local activity its result costs the
 * turn no workflow task of its own, so a round through a Message Batch takes one (its result's).
 */
function submitActivity(summary: string): MessageBatchSubmitActivities {
  return proxyLocalActivities<MessageBatchSubmitActivities>({
    summary: `${summary} · Message Batch`,
    startToCloseTimeout: '2 minutes',
    retry: CLAUDE_CALL_RETRY,
  });
}

