/**
 * The search attributes a turn keeps, so operators can filter turns in the UI and in visibility:
 * status (`running`, then `completed`, `failed` or `cancelled`), model, and at the end the stop
 * reason, tool calls, tokens and cost. The starter sets status and model (when the input names one);
 * the turn upserts once, at its end, with the model if it was not set at the start (the worker's
 * default). Each upsert is a visibility write and a billable action on Temporal Cloud, so nothing
 * is upserted per step (a call waiting for approval aside: approval-status.ts).
 */
import { isCancellation, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { ChatTurnResult } from '../src/core/turn-result';
import { inputTokensOf } from '../src/core/usage';
import {
  modelFitsSearchAttribute,
  SA_COST_USD,
  SA_INPUT_TOKENS,
  SA_MODEL,
  SA_OUTPUT_TOKENS,
  SA_STATUS,
  SA_STOP_REASON,
  SA_TOOL_CALLS,
} from '../src/core/search-attributes';

/** The model, when the start did not set it as `model` (the turn ran with the worker's default). */
function modelIfUnset(model: string | undefined): Array<{ key: typeof SA_MODEL; value: string }> {
  return modelFitsSearchAttribute(model) && workflowInfo().typedSearchAttributes.get(SA_MODEL) !== model ? [{ key: SA_MODEL, value: model }] : [];
}

/** The turn ran with `model` and answered `result`. */
export function markCompleted(result: ChatTurnResult, model: string): void {
  upsertSearchAttributes([
    ...modelIfUnset(model),
    { key: SA_STATUS, value: 'completed' },
    { key: SA_STOP_REASON, value: result.stopReason },
    { key: SA_TOOL_CALLS, value: result.toolCalls.length },
    { key: SA_INPUT_TOKENS, value: inputTokensOf(result.usage) },
    { key: SA_OUTPUT_TOKENS, value: result.usage.outputTokens },
    { key: SA_COST_USD, value: result.costUsd },
  ]);
}

/** The turn ends with `err`: cancelled, or failed; `model` once the turn knew it. */
export function markEnded(err: unknown, model: string | undefined): void {
  upsertSearchAttributes([...modelIfUnset(model), { key: SA_STATUS, value: isCancellation(err) ? 'cancelled' : 'failed' }]);
}
