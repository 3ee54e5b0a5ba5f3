/**
 * The conversations of the turns this worker is serving, kept from one Claude call of a turn to the
 * next. A turn's Claude activities name the transcript by reference (so history stays linear); with
 * the conversation in memory, plus the few messages the workflow added since (`TranscriptRef.tail`),
 * the next call needs no transcript query: one round trip through the server and one workflow
 * activation fewer per call. The copy is used only when its digest equals the workflow's; any other
 * case (another worker ran the last call, a restart, a trimmed history) reads the query as before.
 */
import { canonicalJson } from '../core/canonical-json';
import type { ContentBlock, MessageParam, TranscriptRef, TranscriptSnapshot } from '../core/contracts';
import { extendDigestWith, toolsDigest } from '../core/transcript-digest';

export interface TranscriptCacheOptions {
  /** Turns held at once; the least recently used go first. @default 1000 */
  maxTurns?: number;
  /** Characters of canonical JSON held at once, over all turns. @default 64 Mi */
  maxChars?: number;
}

interface Entry {
  snapshot: TranscriptSnapshot;
  /** chain[i] = digest of the tools and the first i messages. */
  chain: string[];
  /** Canonical JSON length of the tools, then of each message (the memory the entry stands for). */
  toolsChars: number;
  sizes: number[];
  chars: number;
}

export interface TranscriptCacheStats {
  /** Conversations answered from memory. */
  hits: number;
  /** Conversations that needed the query. */
  misses: number;
  turns: number;
  chars: number;
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

  /** The conversation `ref` names, if held here and identical to the workflow's; else undefined. */
  lookup(ref: TranscriptRef): TranscriptSnapshot | undefined {
    const entry = ref.digest ? this.entries.get(keyOf(ref)) : undefined;
    const tail = ref.tail ?? [];
    const from = ref.count - tail.length;
    if (!entry || from < 0 || entry.snapshot.messages.length < from) {
      this.misses++;
      return undefined;
    }
    let digest = entry.chain[from]!;
    for (const m of tail) digest = extendDigestWith(digest, canonicalJson(m));
    if (digest !== ref.digest) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    return { messages: [...entry.snapshot.messages.slice(0, from), ...tail], tools: entry.snapshot.tools };
  }

  /** Holds the conversation a call was made with, plus the reply it got (the workflow's next message). */
  remember(ref: TranscriptRef, snapshot: TranscriptSnapshot, reply?: ContentBlock[]): void {
    const key = keyOf(ref);
    const previous = this.entries.get(key);
    const messages: MessageParam[] = reply ? [...snapshot.messages, { role: 'assistant', content: reply }] : [...snapshot.messages];
    // The prefix shared with the previous entry (same objects: lookup hands them out) keeps its digests.
    const shared = previous && previous.snapshot.tools === snapshot.tools ? sharedPrefix(previous.snapshot.messages, messages) : 0;
    const toolsChars = previous && shared ? previous.toolsChars : canonicalJson(snapshot.tools).length;
    const chain = previous && shared ? previous.chain.slice(0, shared + 1) : [toolsDigest(snapshot.tools)];
    const sizes = previous && shared ? previous.sizes.slice(0, shared) : [];
    for (let i = sizes.length; i < messages.length; i++) {
      const json = canonicalJson(messages[i]);
      chain.push(extendDigestWith(chain[i]!, json));
      sizes.push(json.length);
    }
    const chars = toolsChars + sizes.reduce((a, b) => a + b, 0);
    this.drop(key);
    this.entries.set(key, { snapshot: { messages, tools: snapshot.tools }, chain, toolsChars, sizes, chars });
    this.chars += chars;
    this.evict();
  }

  /** The turn is done with Claude (its formatter ran): nothing more to hold. */
  forget(ref: TranscriptRef): void {
    this.drop(keyOf(ref));
  }

  stats(): TranscriptCacheStats {
    return { hits: this.hits, misses: this.misses, turns: this.entries.size, chars: this.chars };
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.chars -= entry.chars;
    this.entries.delete(key);
  }

  private evict(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxTurns && this.chars <= this.maxChars) return;
      this.drop(key);
    }
  }
}

/** How many leading messages two transcripts share, by identity. */
function sharedPrefix(held: MessageParam[], messages: MessageParam[]): number {
  let n = 0;
  while (n < held.length && n < messages.length && held[n] === messages[n]) n++;
  return n;
}
