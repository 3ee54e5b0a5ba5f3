/**
 * The Claude calls of a turn's answer (the response formatter's, or the typed output's, with their
 * repairs): each made through the Messages API or, when a Message Batch plans them, through `call`;
 * their usage, cost and number summed for the answer's result.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { CallControls, ClaudeCallOutput, ClaudeRequest, FormatResponseOutput } from '../core/contracts';
import { ZERO_USAGE, addUsage, type TokenUsage } from '../core/usage';
import { callClaude, type CallClaudeOptions } from './call-claude';

/** Options of an answer's calls. */
export interface AnswerCallOptions extends CallClaudeOptions {
  /**
   * Makes each of the answer's Claude calls instead of the Messages API (a Message Batch plans its
   * calls this way, src/message-batches/formatter-plan.ts).
   */
  call?: (request: ClaudeRequest) => Promise<ClaudeCallOutput>;
}

/** The turn's request controls every call of its answer is sent (no stop sequences: the answer must finish). */
export function answerControls(input: CallControls): CallControls {
  return { ...(input.effort ? { effort: input.effort } : {}), ...(input.cache ? { cache: input.cache } : {}), ...(input.userId ? { userId: input.userId } : {}) };
}

export class AnswerCalls {
  private usage: TokenUsage = ZERO_USAGE;
  private costUsd = 0;
  private costKnown = false;
  /** Calls made so far. */
  count = 0;

  constructor(
    private readonly client: Anthropic,
    private readonly opts: AnswerCallOptions,
  ) {}

  async make(request: ClaudeRequest): Promise<ClaudeCallOutput> {
    this.count++;
    const reply = await (this.opts.call ? this.opts.call(request) : callClaude(this.client, request, this.opts));
    this.usage = addUsage(this.usage, reply.usage);
    if (reply.costUsd !== undefined) {
      this.costUsd += reply.costUsd;
      this.costKnown = true;
    }
    return reply;
  }

  /** The sums for the answer's result. */
  totals(): Pick<FormatResponseOutput, 'usage' | 'calls' | 'costUsd'> {
    return { usage: this.usage, calls: this.count, ...(this.costKnown ? { costUsd: this.costUsd } : {}) };
  }
}
