/**
 * The response formatter through a Message Batch: each batch round trip answers one formatter call,
 * so the formatter is run again over the replies it has had so far, and either finishes (its
 * answer) or names the call it needs next. Forced tool use, the repair call, the auto path after a
 * refusal and the fallback are the interactive formatter's own (src/claude/response-formatter.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ClaudeCallOutput, ClaudeRequest, FormatResponseOutput } from '../core/contracts';
import type { BatchedCallFailure } from '../core/message-batches';
import { formatResponse } from '../claude/response-formatter';
import type { FormatRequest } from '../core/contracts';

/** A formatter call's reply from its Message Batch: the message, or the final failure of the request. */
export type FormatterReply = ClaudeCallOutput | { failure: BatchedCallFailure };

/** Thrown by the planning call when the replies so far are used up. */
class NextCall {
  constructor(readonly request: ClaudeRequest) {}
}

/** The formatter's answer from `replies`, or the request it sends next. */
export async function planFormatterCall(
  input: FormatRequest,
  replies: readonly FormatterReply[],
): Promise<{ done: FormatResponseOutput } | { request: ClaudeRequest }> {
  let next = 0;
  const call = async (request: ClaudeRequest): Promise<ClaudeCallOutput> => {
    const reply = replies[next++];
    if (!reply) throw new NextCall(request);
    if ('failure' in reply) {
      throw ApplicationFailure.create({ type: reply.failure.type, message: reply.failure.message, nonRetryable: true });
    }
    return reply;
  };
  try {
    // No client: every call goes through `call`.
    return { done: await formatResponse(undefined as never, input, { call }) };
  } catch (err) {
    if (err instanceof NextCall) return { request: err.request };
    throw err;
  }
}
