/**
 * A chained digest of a turn's transcript (its tools, then each message in order), computed the
 * same way by the workflow and by the Claude activities, so an activity can check that the
 * conversation it holds in memory is exactly the workflow's before using it instead of a query.
 * Sandbox-safe: FNV-1a over canonical JSON, two seeds for 64 bits. Not a security measure: both
 * sides are our own code; it guards against the copies drifting apart.
 */
import { canonicalJson } from './canonical-json';
import type { MessageParam, Tool } from './contracts';
import { fnv1a32 } from './hash';

const SEED_B = 0x01000193 ^ 0x5bd1e995;

function digestOf(text: string): string {
  return fnv1a32(text).toString(16).padStart(8, '0') + fnv1a32(text, SEED_B).toString(16).padStart(8, '0');
}

/** The digest of a transcript with no messages yet: its tools. */
export function toolsDigest(tools: Tool[]): string {
  return digestOf(`tools:${canonicalJson(tools)}`);
}

/** The digest after one more message. */
export function extendDigest(previous: string, message: MessageParam): string {
  return extendDigestWith(previous, canonicalJson(message));
}

/** extendDigest() for a message already in canonical JSON (callers that also need its size). */
export function extendDigestWith(previous: string, messageJson: string): string {
  return digestOf(`${previous}:${messageJson}`);
}

/**
 * Digests of every prefix of a growing transcript, extended lazily: `upTo(n)` costs only the
 * messages added since the last call. Call `reset()` when messages are rewritten, not appended.
 */
export class TranscriptDigests {
  private readonly chain: string[] = [];

  constructor(
    private readonly tools: () => Tool[],
    private readonly messages: () => readonly MessageParam[],
  ) {}

  upTo(count: number): string {
    if (this.chain.length === 0) this.chain.push(toolsDigest(this.tools()));
    const messages = this.messages();
    while (this.chain.length <= count) {
      this.chain.push(extendDigest(this.chain[this.chain.length - 1]!, messages[this.chain.length - 1]!));
    }
    return this.chain[count]!;
  }

  reset(): void {
    this.chain.length = 0;
  }
}

/** The digest of the tools and all of `messages`, at once. */
export function transcriptDigest(tools: Tool[], messages: readonly MessageParam[]): string {
  return new TranscriptDigests(() => tools, () => messages).upTo(messages.length);
}
