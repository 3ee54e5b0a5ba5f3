/**
 * What a turn submits to a Message Batch: the same Messages request an interactive call makes
 * (prompt-caching breakpoints included: the API caches batch requests too, where it can), as one
 * entry with its custom_id. A formatter call is planned from the replies it has had so far, and may
 * instead be done.
 */
import type { ClaudeCallInput, FormatRequest, FormatResponseInput, FormatResponseOutput } from '../core/contracts';
import type { BatchRequestEntry } from '../core/message-batches';
import { joinSegments, type TranscriptSegment } from '../core/transcript-segment';
import { buildMessageParams } from '../claude/call-claude';
import { planFormatterCall, type FormatterReply } from './formatter-plan';
import { batchCustomId } from './custom-id';

/** A call of the turn: its number in the turn and its attempt make its custom_id. */
export interface BatchCallKey {
  /** Unique in the turn for this request: the call, the formatter round, the attempt. */
  key: string;
}

export type BatchSubmitInput = BatchCallKey & {
  /** The turn's task queue: the collector runs there. */
  taskQueue: string;
  /** The turn's parent (a batch workflow), for progress by batch. */
  parent?: string;
  /** The turn's first request in a batch: the submission tells `parent` the turn waits for Message Batches. */
  tellParent?: true;
} & ({ kind: 'step'; request: Omit<ClaudeCallInput, 'stream'> } | { kind: 'formatter'; request: Omit<FormatResponseInput, 'stream'>; replies: FormatterReply[] });

/** The entry to submit, or the formatter's answer when its replies already make one. */
export async function batchRequestOf(
  input: BatchSubmitInput,
  segments: readonly TranscriptSegment[],
  turn: { workflowId: string; runId: string },
  { cache }: { cache: boolean },
): Promise<{ entry: BatchRequestEntry; formatter?: FormatterPlanInput } | { done: FormatResponseOutput }> {
  const { messages, tools } = joinSegments(segments);
  let params;
  let formatter: FormatterPlanInput | undefined;
  if (input.kind === 'step') {
    const { step: _step, askedAgain: _askedAgain, ...request } = input.request;
    params = buildMessageParams({ ...request, messages, tools }, { cache });
  } else {
    formatter = { input: { ...input.request, messages }, replies: input.replies };
    const planned = await planFormatterCall(formatter.input, formatter.replies);
    if ('done' in planned) return planned;
    params = buildMessageParams(planned.request, { cache });
  }
  const customId = batchCustomId(turn.workflowId, turn.runId, input.key);
  const entry = { batchRequest: customId, params: params as unknown as Record<string, unknown>, bytes: Buffer.byteLength(JSON.stringify(params)) };
  return formatter ? { entry, formatter } : { entry };
}

/** What a formatter request was planned from: its reply is planned over the same (formatter-plans.ts). */
export interface FormatterPlanInput {
  input: FormatRequest;
  replies: readonly FormatterReply[];
}
