/**
 * Hands an ended Message Batch's results to their turns, one signal each (a turn ignores a result
 * it already has, so delivering again after a crash is harmless). A result whose turn no longer
 * waits (withdrawn, or the turn has closed) is discarded and its cost still counted. A batch whose
 * results name custom_ids it was not given was adopted by mistake: its turns are told their
 * requests were not sent, and submit them again. A batch watched as a possible duplicate delivers
 * nothing: when it did hold these requests, its cost is counted as discarded. A formatter's reply
 * that this worker can plan over and that makes the formatter's answer goes as that answer
 * (formatter-plans.ts).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { FormatResponseOutput } from '../core/contracts';
import type { BatchedCallFailure, BatchedCallOutcome, DeliveryReport, TurnRef } from '../core/message-batches';
import { BatchedOutcomeType } from '../core/message-batches';
import { messageBatchResultSignal } from '../core/workflow-handlers';
import type { ClaudeErrorPolicy } from '../claude/errors';
import type { PriceTable } from '../claude/pricing';
import { outcomeOfResult } from './batch-outcome';
import type { FormatterPlans } from './formatter-plans';

/** Signals sent at once. */
const SIGNAL_CONCURRENCY = 16;

export interface DeliveryInput {
  batchId: string;
  turns: Record<string, TurnRef>;
  withdrawn: string[];
  /** This batch may duplicate that one: nothing is delivered from it. */
  duplicateOf?: string;
}

export interface DeliveryDeps {
  anthropic: Anthropic;
  temporal: Client;
  prices: PriceTable;
  errorPolicy?: Partial<ClaudeErrorPolicy>;
  /** Called as results are handled (activity heartbeats). */
  progress?: () => void;
  signal?: AbortSignal;
  /** Formatter requests' plans: a reply that finishes its formatter goes to its turn as the answer. */
  formatterPlans?: FormatterPlans;
}

export async function deliverResults(input: DeliveryInput, deps: DeliveryDeps): Promise<DeliveryReport> {
  const report: DeliveryReport = { succeeded: 0, errored: 0, expired: 0, canceled: 0, discarded: 0, discardedCostUsd: 0, foreign: 0, answered: [] };
  const withdrawn = new Set(input.withdrawn);
  const seen = new Set<string>();
  const outcomes: Array<{ turn: TurnRef; outcome: BatchedCallOutcome }> = [];
  let duplicateCost = 0;
  const results = await deps.anthropic.messages.batches.results(input.batchId, {}, deps.signal ? { signal: deps.signal } : {});
  for await (const item of results) {
    deps.progress?.();
    const turn = input.turns[item.custom_id];
    if (!turn) {
      report.foreign++;
      continue;
    }
    seen.add(item.custom_id);
    const result = outcomeOfResult(item.result, input.batchId, deps);
    const cost = 'output' in result ? (result.output.costUsd ?? 0) : 0;
    if (input.duplicateOf) {
      duplicateCost += cost;
      continue;
    }
    report[item.result.type]++;
    if (withdrawn.has(item.custom_id)) {
      deps.formatterPlans?.drop(item.custom_id);
      report.discarded++;
      report.discardedCostUsd += cost;
      continue;
    }
    report.answered.push(item.custom_id);
    let done: FormatResponseOutput | undefined;
    if ('output' in result) done = await deps.formatterPlans?.finish(item.custom_id, result.output);
    else deps.formatterPlans?.drop(item.custom_id);
    outcomes.push({ turn, outcome: { customId: item.custom_id, batchId: input.batchId, ...(done ? { done } : result) } });
  }
  if (input.duplicateOf) {
    // Held these requests too: paid twice, answered once (by the batch it duplicates).
    if (!report.foreign && seen.size) {
      report.discarded += seen.size;
      report.discardedCostUsd += duplicateCost;
    }
    return report;
  }
  if (report.foreign) {
    // Not ours: every request it was thought to hold goes back to its turn, to be sent again.
    report.answered = [];
    outcomes.length = 0;
    for (const k of ['succeeded', 'errored', 'expired', 'canceled'] as const) report[k] = 0;
    seen.clear();
  }
  for (const [customId, turn] of Object.entries(input.turns)) {
    if (seen.has(customId) || withdrawn.has(customId)) continue;
    outcomes.push({
      turn,
      outcome: {
        customId,
        batchId: input.batchId,
        failure: { type: BatchedOutcomeType.NotSubmitted, message: `Message Batch ${input.batchId} did not hold this request: it is sent again`, retryable: true },
      },
    });
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < outcomes.length) {
      const { turn, outcome } = outcomes[next++]!;
      deps.progress?.();
      try {
        await deps.temporal.workflow.getHandle(turn.workflowId, turn.runId).signal(messageBatchResultSignal, outcome);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        // The turn has closed (cancelled, failed, timed out): nobody waits for this result.
        report.discarded++;
        report.discardedCostUsd += 'output' in outcome ? (outcome.output.costUsd ?? 0) : 0;
      }
    }
  };
  await Promise.all(Array.from({ length: SIGNAL_CONCURRENCY }, worker));
  return report;
}

/** Tells each turn of `turns` that its request failed (a closed turn waits for nothing). */
export async function answerAllWith(temporal: Client, turns: Record<string, TurnRef>, failure: BatchedCallFailure): Promise<void> {
  for (const [customId, turn] of Object.entries(turns)) {
    await temporal.workflow
      .getHandle(turn.workflowId, turn.runId)
      .signal(messageBatchResultSignal, { customId, batchId: '', failure })
      .catch(() => undefined);
  }
}
