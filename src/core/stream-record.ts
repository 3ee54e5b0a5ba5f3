/**
 * What a streamed Claude activity publishes: its stream record, the deltas in the order Claude
 * wrote them, across attempts. While the activity runs, the record is its heartbeat details (read
 * with `describe`, which writes no history); when it ends, its result (or its cancellation's
 * details) holds the same record, the last attempt's texts as lengths, since the reply holds them.
 * A subscriber therefore sees the same parts, at the same offsets, live and after the turn has
 * closed (src/stream/turn-projection.ts).
 *
 * The record only grows: a later attempt starts from the earlier attempt's record as the server
 * kept it, adds a retry part, then its own deltas. Everything before the last retry part is
 * superseded.
 */
import type { ContentBlock } from '@anthropic-ai/sdk/resources/messages';

/**
 * One part of a record: `t` step text, `r` reasoning (thinking), `a` the answer (the formatter's
 * conversation text), each with its delta (or, compacted, its length); `x` a new attempt begins:
 * whatever came before is discarded, with the attempt number and why.
 */
export type StreamPart =
  [kind: 't' | 'r' | 'a', delta: string | number] | [kind: 'x', attempt: number, reason: string];

export interface StreamRecord {
  /** The activity attempt that wrote the record last. */
  attempt: number;
  /** The attempt that wrote the parts before the first retry part. */
  first: number;
  parts: StreamPart[];
}

/** What a streamed turn asks its Claude activities for. */
export interface StreamRequest {
  /** Stream thinking as `reasoning-delta` parts too. */
  reasoning: boolean;
}

/**
 * How often a streamed call publishes its record at most (its heartbeat pace; the first delta goes
 * at once). Each publication is a write on the server, and each look at it a read: about 3 a
 * second keep the text flowing at a fraction of the cost of 10.
 */
export const STREAM_PUBLISH_INTERVAL_MS = 300;

/** What a turn's `stream` option asks its Claude calls for; undefined: the turn does not stream. */
export function streamRequest(option: boolean | { reasoning?: boolean } | undefined): StreamRequest | undefined {
  if (!option) return undefined;
  return { reasoning: typeof option === 'object' && option.reasoning === true };
}

/** Separates two text (or two thinking) blocks of one reply in its streamed text. */
export const BLOCK_SEPARATOR = '\n\n';

/** A reply's text as streamed: its text blocks, in order, separated by {@link BLOCK_SEPARATOR}. */
export function stepText(content: readonly ContentBlock[]): string {
  return content
    .filter((b): b is Extract<ContentBlock, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join(BLOCK_SEPARATOR);
}

/** A reply's thinking as streamed: its thinking blocks, in order, separated by {@link BLOCK_SEPARATOR}. */
export function reasoningText(content: readonly ContentBlock[]): string {
  return content
    .filter((b): b is Extract<ContentBlock, { type: 'thinking' }> => b.type === 'thinking')
    .map((b) => b.thinking)
    .join(BLOCK_SEPARATOR);
}

/** Whether `value` is a stream record (heartbeat details and failure details are untyped). */
export function isStreamRecord(value: unknown): value is StreamRecord {
  const r = value as StreamRecord | undefined;
  return typeof r?.attempt === 'number' && typeof r.first === 'number' && Array.isArray(r.parts);
}

/** Index just after the last retry part: where the last attempt's parts begin. */
function lastAttemptStart(parts: readonly StreamPart[]): number {
  for (let i = parts.length - 1; i >= 0; i--) if (parts[i]![0] === 'x') return i + 1;
  return 0;
}

/** The full texts of the last attempt, by kind, that a compacted record's lengths index into. */
export type FinalTexts = Partial<Record<'t' | 'r' | 'a', string>>;

/** The record for a result: the last attempt's deltas as lengths (the result holds their texts). */
export function compactRecord(record: StreamRecord): StreamRecord {
  const start = lastAttemptStart(record.parts);
  return {
    attempt: record.attempt,
    first: record.first,
    parts: record.parts.map((p, i) =>
      i >= start && p[0] !== 'x' ? [p[0], typeof p[1] === 'string' ? p[1].length : p[1]] : p,
    ),
  };
}

/**
 * A record with every delta as text again: lengths are cut from `texts` in order, per kind. Text a
 * compacted record does not cover (a result written without its last deltas) follows as one more
 * delta, so the last attempt's deltas always join to exactly the final texts.
 */
export function expandRecord(record: StreamRecord, texts: FinalTexts): StreamPart[] {
  const start = lastAttemptStart(record.parts);
  const used: Record<'t' | 'r' | 'a', number> = { t: 0, r: 0, a: 0 };
  const parts: StreamPart[] = record.parts.map((p, i) => {
    if (p[0] === 'x' || i < start) return p;
    const text = texts[p[0]] ?? '';
    const length = typeof p[1] === 'number' ? p[1] : p[1].length;
    const delta = typeof p[1] === 'string' ? p[1] : text.slice(used[p[0]], used[p[0]] + length);
    used[p[0]] += length;
    return [p[0], delta];
  });
  for (const kind of ['r', 't', 'a'] as const) {
    const rest = (texts[kind] ?? '').slice(used[kind]);
    if (rest) parts.push([kind, rest]);
  }
  return parts;
}
