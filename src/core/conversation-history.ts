/**
 * A conversation's history as transcript segments, grouped so that what each turn is sent stays
 * small however long the conversation grows. Each segment is a payload of its own, stored once and
 * referred to by a claim of ~200 bytes, so a history of one segment per turn would add a claim per
 * earlier turn to every Claude call and child start. Instead turns are grouped like the digits of a
 * counter in base {@link TURNS_PER_GROUP}: whenever the last `TURNS_PER_GROUP` segments hold the
 * same number of turns, they become one segment. A history of N turns is at most
 * (TURNS_PER_GROUP - 1) segments per power of TURNS_PER_GROUP (14 for 100 turns, 21 for 1,000), and
 * each turn's messages are stored again only once per level. A group never changes once formed,
 * except by compaction, which keeps segment boundaries (src/core/compaction.ts).
 */
import { turnStarts } from './compaction';
import type { MessageParam } from './contracts';
import { segment, type TranscriptSegment } from './transcript-segment';

export const TURNS_PER_GROUP = 8;

/** The history with a turn's messages appended, grouped as above. */
export function appendTurn(history: readonly TranscriptSegment[], messages: MessageParam[], turnsPerGroup = TURNS_PER_GROUP): TranscriptSegment[] {
  const grouped = [...history, segment(messages)];
  for (;;) {
    const last = grouped.slice(-turnsPerGroup);
    if (last.length < turnsPerGroup) return grouped;
    const turns = last.map((s) => turnCount(s));
    if (!turns.every((n) => n === turns[0])) return grouped;
    grouped.splice(-turnsPerGroup, turnsPerGroup, segment(last.flatMap((s) => s.transcriptSegment)));
  }
}

function turnCount(s: TranscriptSegment): number {
  return turnStarts(s.transcriptSegment).length;
}
