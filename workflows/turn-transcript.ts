/**
 * A turn's transcript: the prior history, the question, then each step's reply and tool results.
 * Claude activities read it by reference (the `transcript` query), so history records each message
 * once instead of the whole conversation once per call. The workflow and the Claude worker digest
 * it the same way, so that worker can answer from the copy it kept from the previous call.
 */
import { log, workflowInfo } from '@temporalio/workflow';
import type { ContentBlock, MessageParam, Tool, TranscriptRef, TranscriptSnapshot } from '../src/core/contracts';
import { TranscriptDigests } from '../src/core/transcript-digest';
import { trimHistory } from '../src/core/transcript';

/**
 * Messages added since the previous Claude call travel with the reference when they are at most
 * this many characters of canonical JSON: the worker that made that call then needs no query.
 * Larger ones (big tool results) are read by the query rather than recorded in history twice.
 */
const TAIL_MAX_CHARS = 16_000;

export class TurnTranscript {
  private readonly messages: MessageParam[];
  /** Index of the question; everything before it is prior history. */
  private historyLength: number;
  private tools: Tool[] = [];
  private readonly digests = new TranscriptDigests(() => this.tools, () => this.messages);
  /** Messages the previous Claude call was given; undefined before the first call and after a trim. */
  private sentCount: number | undefined;

  constructor(history: MessageParam[], question: string) {
    this.messages = [...history, { role: 'user', content: question }];
    this.historyLength = history.length;
  }

  /** The tool definitions Claude is offered, read by the activities with the messages. */
  offerTools(tools: Tool[]): void {
    this.tools = tools;
    this.digests.invalidateFrom(0);
  }

  add(message: MessageParam): void {
    this.messages.push(message);
  }

  addReply(content: ContentBlock[]): void {
    this.add({ role: 'assistant', content });
  }

  /** The transcript's first `count` messages and the tools: what the `transcript` query answers. */
  snapshot(count: number): TranscriptSnapshot {
    return { messages: this.messages.slice(0, count), tools: this.tools };
  }

  /** The whole transcript as it stands, for the turn's result. */
  all(): MessageParam[] {
    return [...this.messages];
  }

  /** This turn's own messages: from the question on. */
  ownMessages(): MessageParam[] {
    return this.messages.slice(this.historyLength);
  }

  /** A reference to the transcript as it stands, for the next Claude activity. */
  reference(): TranscriptRef {
    const { workflowId, runId } = workflowInfo();
    const count = this.messages.length;
    const ref: TranscriptRef = { workflowId, runId, count, digest: this.digests.upTo(count) };
    if (this.sentCount !== undefined) {
      // The previous call's reply is not sent: that worker holds it already.
      const from = Math.min(this.sentCount + 1, count);
      if (this.digests.chars(from, count) <= TAIL_MAX_CHARS) ref.tail = this.messages.slice(from);
    }
    this.sentCount = count;
    return ref;
  }

  /**
   * Drops the oldest half of the prior history (never splitting a tool_use from its tool_result)
   * to fit the context window; false when there is no prior history left to drop.
   */
  trimHistory(): boolean {
    const trimmed = trimHistory(this.messages, this.historyLength);
    if (!trimmed) return false;
    const dropped = this.messages.length - trimmed.length;
    this.messages.splice(0, this.messages.length, ...trimmed);
    this.historyLength -= dropped;
    this.digests.invalidateFrom(0); // rewritten, not appended: no worker's copy matches any more
    this.sentCount = undefined;
    log.warn('context window exceeded; trimmed prior history', { dropped });
    return true;
  }
}
