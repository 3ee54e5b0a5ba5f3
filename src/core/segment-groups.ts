/**
 * Transcript segments grouped so that what a call is sent stays small however long the
 * conversation or the turn grows. Each segment is a payload of its own, stored once and referred to
 * by a claim of ~200 bytes, so one segment per turn (or per step) would add a claim per earlier turn
 * (or step) to every Claude call and child start. Instead units are grouped like the digits of a
 * counter in base {@link UNITS_PER_GROUP}: whenever the last `UNITS_PER_GROUP` segments hold the
 * same number of units, they become one segment. N units are at most (UNITS_PER_GROUP - 1)
 * segments per power of UNITS_PER_GROUP (14 for 100, 21 for 1,000), and each unit's messages are
 * stored again only once per level. Grouping extends a prefix's grouping, so a group, once formed,
 * is the same segment in every later call (compaction aside, which keeps segment boundaries).
 */
import { turnStarts } from './compaction';
import type { MessageParam } from './contracts';
import { segment, type TranscriptSegment } from './transcript-segment';

/** A conversation's turns group in eights: each turn's messages are stored again at most once per level. */
export const UNITS_PER_GROUP = 8;

/**
 * A turn's steps group in pairs, and a call is sent {@link MAX_STEP_SEGMENTS} of them once it has
 * that many steps: the largest groups as they form, then one segment of the steps after them, and
 * when the groups are fewer (a group just formed), the newest group split back into the groups it was
 * made of, segments an earlier call sent and stored. So every call from the third on adds the same
 * claims to history (history grows exactly linearly with the steps), for the last segment stored
 * anew at every step: it holds fewer steps than the group before it (7 % of the steps taken on
 * average over a 100-step turn).
 */
export const STEPS_PER_GROUP = 2;
export const MAX_STEP_SEGMENTS = 3;

interface Counted {
  messages: MessageParam[];
  units: number;
  /** The groups it was merged from. */
  parts?: Counted[];
}

/** Appends a unit of `units` (1 for a new one) and merges the tail while it is a full digit. */
function push(groups: Counted[], next: Counted, perGroup: number): void {
  groups.push(next);
  for (;;) {
    const last = groups.slice(-perGroup);
    if (last.length < perGroup || !last.every((g) => g.units === last[0]!.units)) return;
    groups.splice(-perGroup, perGroup, { messages: last.flatMap((g) => g.messages), units: last[0]!.units * perGroup, parts: last });
  }
}

/**
 * A conversation's history with a turn's messages appended. The units are turns, counted from the
 * segments themselves (a turn starts at a user message without a tool_result), since the history
 * is carried across continue-as-new as plain segments.
 */
export function appendTurn(history: readonly TranscriptSegment[], messages: MessageParam[], perGroup = UNITS_PER_GROUP): TranscriptSegment[] {
  const groups = history.map((s) => ({ messages: s.transcriptSegment, units: turnStarts(s.transcriptSegment).length }));
  push(groups, { messages, units: 1 }, perGroup);
  return groups.map((g, i) => (i < history.length && g.messages === history[i]!.transcriptSegment ? history[i]! : segment(g.messages)));
}

/** A turn's own messages as segments: each step's messages (the question first) a unit. */
export function stepSegments(steps: readonly MessageParam[][], perGroup = STEPS_PER_GROUP, maxSegments = MAX_STEP_SEGMENTS): TranscriptSegment[] {
  const groups: Counted[] = [];
  for (const messages of steps) push(groups, { messages, units: 1 }, perGroup);
  // Fewer groups than a call is sent: the newest merged group splits back into its parts.
  while (Number.isFinite(maxSegments) && groups.length + perGroup - 1 <= maxSegments) {
    const newest = groups.map((g) => g.parts !== undefined).lastIndexOf(true);
    if (newest < 0) break;
    groups.splice(newest, 1, ...groups[newest]!.parts!);
  }
  const kept = groups.slice(0, maxSegments - 1);
  const rest = groups.slice(maxSegments - 1);
  return [...kept.map((g) => segment(g.messages)), ...(rest.length ? [segment(rest.flatMap((g) => g.messages))] : [])];
}
