/**
 * A turn's transcript: the prior history, the question, then each step's reply and tool results.
 * Claude activities receive it as transcript segments, each an argument of its own: the prior
 * history as the caller gave it, the question, one segment per step, and the tool definitions.
 * External Storage stores each segment once (content-addressed) and later calls refer to it, so
 * history records what each step adds, not the whole conversation once per call.
 */
import { log } from '@temporalio/workflow';
import { addReports, compactSegments, type CompactionPolicy, type CompactionReport } from '../src/core/compaction';
import type { ContentBlock, MessageParam, OfferedTool } from '../src/core/contracts';
import { stepSegments } from '../src/core/segment-groups';
import { toolsSegment, type TranscriptSegment } from '../src/core/transcript-segment';

export class TurnTranscript {
  /** The prior conversation, as segments (compaction replaces them with one per turn). */
  private history: TranscriptSegment[];
  /** This turn's messages: the question, then one group per step (its reply, then its tool results). */
  private readonly own: MessageParam[][];
  private tools: TranscriptSegment = toolsSegment([]);
  /** What compaction did to the prior history; undefined while nothing was compacted. */
  compaction: CompactionReport | undefined;

  constructor(history: TranscriptSegment[], question: string) {
    this.history = history.filter((s) => s.transcriptSegment.length > 0);
    this.own = [[{ role: 'user', content: question }]];
  }

  /** The tool definitions Claude is offered, sent with the messages. */
  offerTools(tools: OfferedTool[]): void {
    this.tools = toolsSegment(tools);
  }

  /** A reply of Claude's: it starts the step's group. */
  addReply(content: ContentBlock[]): void {
    this.own.push([{ role: 'assistant', content }]);
  }

  /** The tool results of the step whose reply was added last. */
  addToolResults(message: MessageParam): void {
    this.own[this.own.length - 1]!.push(message);
  }

  /** The segments of a Claude request: the tools, the prior history, then this turn's steps, grouped (src/core/segment-groups.ts). */
  segments({ withTools }: { withTools: boolean }): TranscriptSegment[] {
    return [...(withTools ? [this.tools] : []), ...this.history, ...stepSegments(this.own)];
  }

  /** The prior history as it stands (compacted or not). */
  priorMessages(): MessageParam[] {
    return this.history.flatMap((s) => s.transcriptSegment);
  }

  /** This turn's own messages: from the question on. */
  ownMessages(): MessageParam[] {
    return this.own.flat();
  }

  /**
   * Compacts the prior history by one more stage to fit the context window (see
   * src/core/compaction.ts); false when there is nothing left to compact.
   */
  compact(policy: CompactionPolicy): boolean {
    const done = compactSegments(this.history, policy);
    if (!done) return false;
    this.history = done.segments;
    this.compaction = this.compaction ? addReports(this.compaction, done.report) : done.report;
    log.warn('context window exceeded; compacted prior history', { ...done.report });
    return true;
  }
}
