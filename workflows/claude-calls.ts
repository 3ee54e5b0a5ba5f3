/**
 * How a turn calls Claude, chosen once per turn (turn-state.ts): each call an activity of its own
 * ({@link InteractiveCalls}), or every call through Message Batches (message-batch-call.ts). The
 * loop (claude-step.ts) and the answer (turn-answer.ts) call through this one interface.
 */
import type { ClaudeCallInput, ClaudeCallOutput, FormatResponseInput, FormatResponseOutput } from '../src/core/contracts';
import type { TranscriptSegment } from '../src/core/transcript-segment';
import { claudeActivities } from './turn-activities';

export interface ClaudeCalls {
  /** One step's Claude call of the loop; `summary` names it in the Temporal UI. */
  step(request: ClaudeCallInput, segments: TranscriptSegment[], summary: string): Promise<ClaudeCallOutput>;
  /** The response formatter's call(s). */
  formatResponse(request: FormatResponseInput, segments: TranscriptSegment[]): Promise<FormatResponseOutput>;
  /** The Message Batch a call waits for now, if any (the turn's progress shows it). */
  readonly waitingMessageBatch?: { since: number; collector: string };
}

/** Each call an activity of its own, on the queue the turn's streaming and the worker choose. */
export class InteractiveCalls implements ClaudeCalls {
  constructor(private readonly how: { streamed: boolean; claudeOnTurnQueue: boolean }) {}

  step(request: ClaudeCallInput, segments: TranscriptSegment[], summary: string): Promise<ClaudeCallOutput> {
    return claudeActivities(summary, this.how).claude(request, ...segments);
  }

  formatResponse(request: FormatResponseInput, segments: TranscriptSegment[]): Promise<FormatResponseOutput> {
    return claudeActivities('format response', this.how).formatResponse(request, ...segments);
  }
}
