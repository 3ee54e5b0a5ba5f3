/**
 * The search attributes a turn keeps, so operators can filter turns in the UI and in visibility:
 * status (`running`, then `completed`, `failed` or `cancelled`), model, and at the end the stop
 * reason, tool calls, tokens and cost. The starter sets status and model; the turn upserts only
 * what differs from what it started with.
 */
import { isCancellation, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { ChatTurnResult } from '../src/core/turn-result';
import { inputTokensOf } from '../src/core/usage';
import {
  SA_COST_USD,
  SA_INPUT_TOKENS,
  SA_MODEL,
  SA_OUTPUT_TOKENS,
  SA_STATUS,
  SA_STOP_REASON,
  SA_TOOL_CALLS,
} from '../src/core/search-attributes';

/** The turn runs with `model` (the worker's default when the input names none). */
export function markRunning(model: string): void {
  const started = workflowInfo().typedSearchAttributes;
  const changed = [
    { key: SA_STATUS, value: 'running' },
    { key: SA_MODEL, value: model },
  ].filter(({ key, value }) => started.get(key) !== value);
  if (changed.length) upsertSearchAttributes(changed);
}

export function markCompleted(result: ChatTurnResult): void {
  upsertSearchAttributes([
    { key: SA_STATUS, value: 'completed' },
    { key: SA_STOP_REASON, value: result.stopReason },
    { key: SA_TOOL_CALLS, value: result.toolCalls.length },
    { key: SA_INPUT_TOKENS, value: inputTokensOf(result.usage) },
    { key: SA_OUTPUT_TOKENS, value: result.usage.outputTokens },
    { key: SA_COST_USD, value: result.costUsd },
  ]);
}

/** The turn ends with `err`: cancelled, or failed. */
export function markEnded(err: unknown): void {
  upsertSearchAttributes([{ key: SA_STATUS, value: isCancellation(err) ? 'cancelled' : 'failed' }]);
}
