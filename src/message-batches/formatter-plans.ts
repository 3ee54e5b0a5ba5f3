/**
 * What the formatter was planned from, for each formatter request this worker submitted and has
 * not yet had the reply of: the worker that delivers the reply finishes the formatter there
 * (`planFormatterCall` over the replies so far and this one) and, when the reply makes its answer,
 * sends the turn that answer, so the turn needs no submission of its own to learn that it is done.
 * Memory only, bounded by bytes, oldest dropped first: a reply delivered by another worker, after a
 * restart or after its plan was dropped goes to its turn as the message, and the turn plans as before.
 */
import type { ClaudeCallOutput, FormatRequest, FormatResponseOutput } from '../core/contracts';
import { planFormatterCall, type FormatterReply } from './formatter-plan';

interface Plan {
  input: FormatRequest;
  replies: readonly FormatterReply[];
  bytes: number;
}

/** Bytes of plans kept by default (their request's JSON size). */
export const FORMATTER_PLAN_BYTES = 64 * 1024 * 1024;

export class FormatterPlans {
  private readonly plans = new Map<string, Plan>();
  private bytes = 0;

  constructor(private readonly maxBytes = FORMATTER_PLAN_BYTES) {}

  /** Keeps the plan of the formatter request `customId` (`bytes`: its request's size). */
  keep(customId: string, input: FormatRequest, replies: readonly FormatterReply[], bytes: number): void {
    this.drop(customId);
    this.plans.set(customId, { input, replies, bytes });
    this.bytes += bytes;
    for (const [oldest] of this.plans) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  /** Forgets the plan of `customId` (its request failed, or its turn no longer waits). */
  drop(customId: string): void {
    const plan = this.plans.get(customId);
    if (!plan) return;
    this.plans.delete(customId);
    this.bytes -= plan.bytes;
  }

  /** Plans kept now. */
  get size(): number {
    return this.plans.size;
  }

  /**
   * The formatter's answer when `reply` to the request `customId` makes it; undefined when no plan
   * is kept or the formatter needs another call (or fails: the turn then finds that out itself).
   */
  async finish(customId: string, reply: ClaudeCallOutput): Promise<FormatResponseOutput | undefined> {
    const plan = this.plans.get(customId);
    if (!plan) return undefined;
    this.drop(customId);
    try {
      // The reply as the turn would pass it on: through JSON.
      const planned = await planFormatterCall(plan.input, [...plan.replies, JSON.parse(JSON.stringify(reply)) as ClaudeCallOutput]);
      return 'done' in planned ? planned.done : undefined;
    } catch {
      return undefined;
    }
  }
}
