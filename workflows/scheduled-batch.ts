/**
 * One run of a batch schedule (src/core/batch-schedule.ts): the batch `<schedule>-<UTC scheduled
 * time>`, its shards started as children with the ids and inputs `startBatch` gives them
 * (src/core/batch-shards.ts), awaited, their counts summed. The run stays open while its batch runs,
 * so the schedule's overlap policy sees the batch as running. Its owner (set on it by the schedule)
 * passes to its shards, and from them to every turn.
 */
import { ApplicationFailure, CancellationScope, executeChild, isCancellation, ParentClosePolicy, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { inheritedFairness, inheritedOwnerMemo, SA_BATCH, SA_OWNER } from '../src/core/search-attributes';
import { SA_SCHEDULED_START_TIME, scheduledBatchName, type ScheduledBatchInput, type ScheduledBatchResult } from '../src/core/batch-schedule';
import { planBatchShards } from '../src/core/batch-shards';
import { BATCH_NAME_PATTERN, BATCH_TASK_TIMEOUT, sumBatchProgress, type BatchProgress } from '../src/core/batch';
import { INVALID_BATCH_INPUT } from '../src/core/failure-types';
import type { chatBatch } from './batch';

/** The time this run was scheduled for, as the schedule set it on the run; else when the run started. */
function scheduledTime(): Date {
  const info = workflowInfo();
  const at = info.typedSearchAttributes.get(SA_SCHEDULED_START_TIME);
  return at instanceof Date && !Number.isNaN(at.getTime()) ? at : info.startTime;
}

export async function scheduledBatch(input: ScheduledBatchInput): Promise<ScheduledBatchResult> {
  const batch = scheduledBatchName(input.schedule, scheduledTime());
  if (!BATCH_NAME_PATTERN.test(batch)) {
    throw ApplicationFailure.nonRetryable(`batch name must match [A-Za-z0-9._-]{1,100}, got "${batch}": the schedule's name is too long or not a batch name`, INVALID_BATCH_INPUT);
  }
  if (!input.items.length) throw ApplicationFailure.nonRetryable(`schedule ${input.schedule} has no queries`, INVALID_BATCH_INPUT);
  upsertSearchAttributes([{ key: SA_BATCH, value: batch }]);
  const info = workflowInfo();
  const owner = info.typedSearchAttributes.get(SA_OWNER);
  const shards = planBatchShards({
    name: batch,
    items: input.items,
    concurrency: input.concurrency,
    taskQueue: input.taskQueue,
    ...(input.messageBatches ? { messageBatches: input.messageBatches } : {}),
  });
  const settled = await Promise.allSettled(
    shards.map((shard) =>
      executeChild<typeof chatBatch>('chatBatch', {
        workflowId: shard.workflowId,
        taskQueue: input.taskQueue,
        workflowTaskTimeout: BATCH_TASK_TIMEOUT,
        args: [shard.input],
        // A run cancelled or terminated (an overlap policy, `cancel`) asks its batch to cancel.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        staticSummary: shard.staticSummary,
        typedSearchAttributes: [{ key: SA_BATCH, value: batch }, ...(owner ? [{ key: SA_OWNER, value: owner }] : [])],
        ...inheritedOwnerMemo(info.memo),
        ...inheritedFairness(info.priority),
      }),
    ),
  );
  const rejected = settled.flatMap((s, i) => (s.status === 'rejected' ? [{ shard: shards[i]!.workflowId, reason: s.reason as Error }] : []));
  // The run itself cancelled (an overlap policy, a person): it ends cancelled, as its shards did.
  const cancelled = rejected.find((r) => isCancellation(r.reason));
  if (cancelled && CancellationScope.current().consideredCancelled) throw cancelled.reason;
  // A shard that failed or was ended on its own: the run fails naming it, once every shard has ended.
  if (rejected.length) throw ApplicationFailure.nonRetryable(`batch ${batch}: ${rejected.map((r) => `${r.shard}: ${r.reason.message}`).join('; ')}`);
  const { total, completed, failed, skipped } = sumBatchProgress(batch, settled.map((s) => (s as PromiseFulfilledResult<BatchProgress>).value));
  return { batch, total, completed, failed, skipped };
}
