/**
 * A Message Batch result as its turn gets it: a succeeded request is the same output an interactive
 * call gives (cost at batch prices); an errored one is the failure the same error would be
 * interactively (src/claude/errors.ts: type, retryable or not, retry delay); an expired one may be
 * sent once more; a cancelled one ends its turn's call.
 */
import { APIError } from '@anthropic-ai/sdk';
import { msToNumber } from '@temporalio/common/lib/time';
import type { MessageBatchResult } from '@anthropic-ai/sdk/resources/messages/batches';
import type { ClaudeCallOutput, ContentBlock } from '../core/contracts';
import { BatchedOutcomeType, type BatchedCallFailure } from '../core/message-batches';
import { fromApiUsage } from '../core/usage';
import { STATUS_OF_ERROR_TYPE, toClaudeFailure, type ClaudeErrorPolicy } from '../claude/errors';
import type { PriceTable } from '../claude/pricing';

export type BatchedResult = { output: ClaudeCallOutput } | { failure: BatchedCallFailure };

export function outcomeOfResult(
  result: MessageBatchResult,
  batchId: string,
  { prices, errorPolicy }: { prices: PriceTable; errorPolicy?: Partial<ClaudeErrorPolicy> },
): BatchedResult {
  switch (result.type) {
    case 'succeeded': {
      const message = result.message;
      const usage = fromApiUsage(message.usage, message.content);
      return {
        output: {
          content: JSON.parse(JSON.stringify(message.content)) as ContentBlock[],
          stopReason: message.stop_reason,
          usage,
          model: message.model,
          requestId: message.id,
          costUsd: prices.costOf(usage, message.model, { batch: true }).usd,
          ...(message.container?.id ? { container: message.container.id } : {}),
        },
      };
    }
    case 'errored': {
      const body = result.error;
      const type = body?.error?.type;
      const status = (type && STATUS_OF_ERROR_TYPE[type]) || 500;
      const failure = toClaudeFailure(APIError.generate(status, body, undefined, new Headers()), errorPolicy);
      return {
        failure: {
          type: failure.type ?? 'ClaudeServerError',
          message: `${failure.message} (in Message Batch ${batchId})`,
          retryable: !failure.nonRetryable,
          ...(failure.nextRetryDelay != null ? { nextRetryDelayMs: msToNumber(failure.nextRetryDelay) } : {}),
        },
      };
    }
    case 'expired':
      return { failure: { type: BatchedOutcomeType.Expired, message: `the request expired in Message Batch ${batchId} (not answered within 24 h)`, retryable: true } };
    case 'canceled':
      return { failure: { type: BatchedOutcomeType.Canceled, message: `Message Batch ${batchId} was cancelled before the request was answered`, retryable: false } };
  }
}
