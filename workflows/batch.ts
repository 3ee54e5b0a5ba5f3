/**
 * A batch of chat turns: child `chatTurn` workflows in a sliding window of bounded concurrency.
 * Child ids are `<batch>-<item id>`, so a batch run again never runs a finished query twice: Temporal
 * refuses a second start of a completed id (failed ones may run again). Large batches
 * continue-as-new, after draining the window, so no run's history grows without bound.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  makeContinueAsNewFunc,
  log,
  setCurrentDetails,
  setHandler,
  startChild,
  isCancellation,
  workflowInfo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { ChatTurnInput } from '../src/schemas/turn-input';
import { inheritedFairness, inheritedOwnerMemo, SA_BATCH, SA_OWNER, SA_STATUS, turnStartSearchAttributes } from '../src/core/search-attributes';
import { BATCH_NAME_PATTERN, BATCH_TASK_TIMEOUT, batchChildId, type BatchInput, type BatchProgress } from '../src/core/batch';
import { INVALID_BATCH_INPUT } from '../src/core/failure-types';
import { batchProgressQuery, turnWaitingSignal } from '../src/core/workflow-handlers';
import { oneLine } from '../src/core/text';
import type { chatTurn } from './chat-turn';

/** Children started per run before continuing as new (each child's result lands in this history). */
const CHILDREN_PER_RUN = 250;
/**
 * The same through Message Batches, where a child waits hours and a run drains before it continues
 * as new: more children per run, so a Message Batch can hold thousands of requests. A child adds
 * about six events here (start, started, result, its one waiting signal), so a run stays near 12,000.
 */
const CHILDREN_PER_RUN_MESSAGE_BATCHES = 2000;

export async function chatBatch(input: BatchInput): Promise<BatchProgress> {
  if (!input.name || !BATCH_NAME_PATTERN.test(input.name)) {
    throw ApplicationFailure.nonRetryable(`batch name must match [A-Za-z0-9._-]{1,100}, got "${input.name}"`, INVALID_BATCH_INPUT);
  }
  if (!Number.isInteger(input.concurrency) || input.concurrency < 1) {
    throw ApplicationFailure.nonRetryable(`concurrency must be a positive integer, got ${input.concurrency}`, INVALID_BATCH_INPUT);
  }
  const taskQueue = input.taskQueue ?? workflowInfo().taskQueue;
  const progress: BatchProgress = {
    name: input.name,
    total: input.total,
    nextIndex: input.nextIndex,
    completed: input.completed,
    failed: input.failed,
    skipped: input.skipped,
    running: [],
    waitingApproval: [],
    ...(input.messageBatches ? { waitingMessageBatch: [], collectors: [] } : {}),
  };
  const itemOfChild = new Map<string, string>();
  // Turns that have waited for a Message Batch (they leave the window for good, workflows/message-batch-call.ts).
  const waitingBatch = new Set<string>();
  setHandler(turnWaitingSignal, (...reports) => {
    for (const { workflowId, waiting, for: reason, collector } of reports) {
      const item = itemOfChild.get(workflowId);
      if (item === undefined) continue;
      if (reason === 'message-batch') {
        if (waiting) waitingBatch.add(item);
        else waitingBatch.delete(item);
        if (collector && progress.collectors && !progress.collectors.includes(collector)) progress.collectors.push(collector);
        continue;
      }
      progress.waitingApproval = progress.waitingApproval.filter((id) => id !== item);
      if (waiting) progress.waitingApproval.push(item);
    }
    report();
  });
  setHandler(batchProgressQuery, () => (progress.waitingMessageBatch ? { ...progress, waitingMessageBatch: [...waitingBatch] } : progress));
  // Turns waiting for approval or for a Message Batch hold no place in the window.
  const active = (): number => progress.running.length - progress.waitingApproval.length - waitingBatch.size;
  upsertSearchAttributes([
    { key: SA_BATCH, value: input.name },
    { key: SA_STATUS, value: 'running' },
  ]);
  const report = (): void =>
    setCurrentDetails(
      `**batch ${input.name}** · ${progress.completed} done, ${progress.failed} failed, ${progress.skipped} skipped, ` +
        `${progress.running.length} running of ${progress.total}` +
        (progress.waitingApproval.length ? ` (${progress.waitingApproval.length} waiting for approval)` : '') +
        (waitingBatch.size ? ` (${waitingBatch.size} waiting for a Message Batch)` : ''),
    );

  let startedThisRun = 0;
  const runOne = async (index: number, item: { id: string; input: ChatTurnInput }): Promise<void> => {
    const workflowId = batchChildId(input.name, item.id);
    progress.running.push(item.id);
    itemOfChild.set(workflowId, item.id);
    try {
      const handle = await startChild<typeof chatTurn>('chatTurn', {
        workflowId,
        taskQueue,
        args: [input.messageBatches ? { ...item.input, messageBatches: input.messageBatches } : item.input],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        staticSummary: oneLine(item.input.question, 120),
        staticDetails: `batch **${input.name}**, item ${item.id} (#${index + 1})`,
        // Set at start, so the child need not upsert them (one command and visibility write fewer).
        typedSearchAttributes: turnStartSearchAttributes({ model: item.input.model, batch: input.name, owner: workflowInfo().typedSearchAttributes.get(SA_OWNER) }),
        ...inheritedOwnerMemo(workflowInfo().memo),
        ...inheritedFairness(workflowInfo().priority),
      });
      await handle.result();
      progress.completed++;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        // Finished (or still running) from an earlier run of this batch: not run again.
        progress.skipped++;
      } else if (isCancellation(err) && CancellationScope.current().consideredCancelled) {
        throw err; // the batch itself is being cancelled (its children are asked to cancel too)
      } else {
        // Failed, or cancelled on its own (e.g. cancelTurn on one child): the batch goes on.
        progress.failed++;
        log.warn('batch item failed', { item: item.id, workflowId, error: (err as Error).message });
      }
    } finally {
      progress.running.splice(progress.running.indexOf(item.id), 1);
      progress.waitingApproval = progress.waitingApproval.filter((id) => id !== item.id);
      waitingBatch.delete(item.id);
      itemOfChild.delete(workflowId);
      report();
    }
  };

  const pending: Array<Promise<void>> = [];
  while (progress.nextIndex < input.total) {
    if (input.messageBatches ? startedThisRun >= CHILDREN_PER_RUN_MESSAGE_BATCHES : startedThisRun >= CHILDREN_PER_RUN || workflowInfo().continueAsNewSuggested) break;
    await condition(() => active() < input.concurrency);
    const index = progress.nextIndex;
    const item = input.items[index - input.itemsOffset];
    if (!item) throw ApplicationFailure.nonRetryable(`batch item #${index} is missing`, INVALID_BATCH_INPUT);
    progress.nextIndex++;
    startedThisRun++;
    pending.push(runOne(index, item));
    report();
  }
  await Promise.all(pending);

  if (progress.nextIndex < input.total) {
    // Drained: carry only what is left and the counts.
    await makeContinueAsNewFunc<typeof chatBatch>({ workflowTaskTimeout: BATCH_TASK_TIMEOUT })({
      ...input,
      items: input.items.slice(progress.nextIndex - input.itemsOffset),
      itemsOffset: progress.nextIndex,
      nextIndex: progress.nextIndex,
      completed: progress.completed,
      failed: progress.failed,
      skipped: progress.skipped,
    });
  }
  upsertSearchAttributes([{ key: SA_STATUS, value: 'completed' }]);
  report();
  return progress;
}
