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

/**
 * Digests of every prefix of a growing transcript, and the size of each message in canonical JSON
 * (both come from the one serialisation), extended lazily: asking about the first n messages costs
 * only the messages added since the last question. Messages are read through `messages()`, so the
 * owner keeps appending to its own array; `invalidateFrom(i)` when messages from i on were replaced.
 */
export class TranscriptDigests {
  /** chain[i]: digest of the tools and the first i messages. */
  private readonly chain: string[] = [];
  private readonly sizes: number[] = [];
  private toolsChars = 0;

  constructor(
    private readonly tools: () => Tool[],
    private readonly messages: () => readonly MessageParam[],
  ) {}

  /** The digest of the tools and the first `count` messages. */
  upTo(count: number): string {
    this.extend(count);
    return this.chain[count]!;
  }

  /** Characters of canonical JSON in messages `from` (inclusive) to `to` (exclusive). */
  chars(from: number, to: number): number {
    this.extend(to);
    let chars = 0;
    for (let i = from; i < to; i++) chars += this.sizes[i]!;
    return chars;
  }

  /** Characters of canonical JSON in the tools and the first `count` messages. */
  size(count: number): number {
    return this.chars(0, count) + this.toolsChars;
  }

  invalidateFrom(index: number): void {
    this.chain.length = Math.min(this.chain.length, index + 1);
    this.sizes.length = Math.min(this.sizes.length, index);
  }

  private extend(count: number): void {
    if (this.chain.length === 0) {
      const tools = canonicalJson(this.tools());
      this.toolsChars = tools.length;
      this.chain.push(digestOf(`tools:${tools}`));
    }
    const messages = this.messages();
    while (this.chain.length <= count) {
      const i = this.chain.length - 1;
      const json = canonicalJson(messages[i]);
      this.chain.push(digestOf(`${this.chain[i]!}:${json}`));
      this.sizes.push(json.length);
    }
  }
}

/** The digest of the tools and all of `messages`, at once. */
export function transcriptDigest(tools: Tool[], messages: readonly MessageParam[]): string {
  return new TranscriptDigests(() => tools, () => messages).upTo(messages.length);
}
