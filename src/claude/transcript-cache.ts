/**
 * The conversations of the turns this worker is serving, kept from one Claude call of a turn to the
 * next. A turn's Claude activities name the transcript by reference (so history stays linear); with
 * the conversation in memory, plus the few messages the workflow added since (`TranscriptRef.tail`),
 * the next call needs no transcript query: one round trip through the server and one workflow
 * activation fewer per call. The copy is used only when its digest equals the workflow's; any other
 * case (another worker ran the last call, a restart, a trimmed history) reads the query.
 */
import type { ContentBlock, MessageParam, Tool, TranscriptRef, TranscriptSnapshot } from '../core/contracts';
import { TranscriptDigests } from '../core/transcript-digest';

export interface TranscriptCacheOptions {
  /** Turns held at once; the least recently used go first. @default 1000 */
  maxTurns?: number;
  /** Characters of canonical JSON held at once, over all turns. @default 64 Mi */
  maxChars?: number;
}

export interface TranscriptCacheStats {
  /** Conversations answered from memory. */
  hits: number;
  /** Conversations that needed the query. */
  misses: number;
  turns: number;
  chars: number;
}

/** One turn's conversation as this worker last sent it (plus the reply it got). */
class Entry {
  readonly messages: MessageParam[];
  readonly digests: TranscriptDigests;
  /** What the last lookup answered: remember() extends the entry only after that answer. */
  answered?: TranscriptSnapshot;
  chars = 0;

  constructor(
    readonly tools: Tool[],
    messages: MessageParam[],
  ) {
    this.messages = [...messages];
    this.digests = new TranscriptDigests(() => this.tools, () => this.messages);
  }
}

function keyOf(ref: TranscriptRef): string {
  return `${ref.workflowId}/${ref.runId}`;
}

export class TranscriptCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxTurns: number;
  private readonly maxChars: number;
  private chars = 0;
  private hits = 0;
  private misses = 0;

  constructor(opts: TranscriptCacheOptions = {}) {
    this.maxTurns = opts.maxTurns ?? 1000;
    this.maxChars = opts.maxChars ?? 64 * 1024 * 1024;
  }

  /**
   * The conversation `ref` names, if held here and identical to the workflow's; else undefined.
   * The entry is moved to that conversation first (its prefix plus the tail); if the digests then
   * differ it is of no further use and is dropped (the query's answer replaces it).
   */
  lookup(ref: TranscriptRef): TranscriptSnapshot | undefined {
    const key = keyOf(ref);
    const entry = ref.digest ? this.entries.get(key) : undefined;
    const tail = ref.tail ?? [];
    const from = ref.count - tail.length;
    if (!entry || from < 0 || entry.messages.length < from) {
      this.misses++;
      return undefined;
    }
    entry.messages.splice(from, Infinity, ...tail);
    entry.digests.invalidateFrom(from);
    if (entry.digests.upTo(ref.count) !== ref.digest) {
      this.drop(key);
      this.misses++;
      return undefined;
    }
    this.resize(entry);
    this.hits++;
    entry.answered = { messages: [...entry.messages], tools: entry.tools };
    return entry.answered;
  }

  /** Holds the conversation a call was made with, plus the reply it got (the workflow's next message). */
  remember(ref: TranscriptRef, snapshot: TranscriptSnapshot, reply?: ContentBlock[]): void {
    const key = keyOf(ref);
    const held = this.entries.get(key);
    const entry = held && held.answered === snapshot ? held : new Entry(snapshot.tools, snapshot.messages);
    entry.answered = undefined;
    if (reply) entry.messages.push({ role: 'assistant', content: reply });
    this.drop(key); // re-inserted below: the most recently used come last
    this.entries.set(key, entry);
    this.resize(entry);
    this.evict();
  }

  /** The turn is done with Claude (its formatter ran): nothing more to hold. */
  forget(ref: TranscriptRef): void {
    this.drop(keyOf(ref));
  }

  stats(): TranscriptCacheStats {
    return { hits: this.hits, misses: this.misses, turns: this.entries.size, chars: this.chars };
  }

  private resize(entry: Entry): void {
    const chars = entry.digests.size(entry.messages.length);
    this.chars += chars - entry.chars;
    entry.chars = chars;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.chars -= entry.chars;
    entry.chars = 0;
    this.entries.delete(key);
  }

  private evict(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxTurns && this.chars <= this.maxChars) return;
      this.drop(key);
    }
  }
}
