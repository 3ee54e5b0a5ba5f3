/**
 * Fitting a conversation into the model's context window. When a prompt is too long, the prior
 * history (never the turn's own messages) is compacted one stage at a time, cheapest first:
 *  1. the tool results of older turns (all but the most recent `keepRecentTurns`) become a marker;
 *  2. the older turns are dropped;
 *  3. the tool results of the recent turns become a marker;
 *  4. the oldest remaining turn is dropped, one per stage, until no prior history is left.
 * A turn starts at a user message that carries no tool_result, so a cut never separates a tool_use
 * from its tool_result. The stages are a pure function of the history and the policy: a
 * conversation applies to its own history the number of stages its turn reports, and gets the
 * history the turn compacted to.
 */
import type { ContentBlockParam, MessageParam } from './contracts';
import { segment, type TranscriptSegment } from './transcript-segment';

export interface CompactionPolicy {
  /** Turns at the end of the prior history that keep their tool results and are dropped last. @default 2 */
  keepRecentTurns?: number;
  /** Replace older tool results with a marker before dropping turns. @default true */
  replaceToolResults?: boolean;
}

/** What compaction did to a turn's prior history, summed over its stages. */
export interface CompactionReport {
  /** Tool results replaced by a marker. */
  toolResultsReplaced: number;
  /** Messages dropped from the start of the prior history. */
  messagesDropped: number;
  /** Stages applied (see {@link compactHistory}). */
  stages: number;
}

export const DEFAULT_KEEP_RECENT_TURNS = 2;

/** The text a replaced tool result becomes. */
export function toolResultMarker(chars: number): string {
  return `[tool result removed to fit the context window (${chars} characters)]`;
}

/** Indexes of the messages that start a turn (a user message without a tool_result). */
export function turnStarts(messages: readonly MessageParam[]): number[] {
  const starts: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'user' && (typeof m.content === 'string' || !m.content.some((b) => b.type === 'tool_result'))) starts.push(i);
  });
  return starts;
}

/**
 * The next stage of compaction for `history`, or undefined when nothing is left to compact. The
 * history is not changed; the result is the compacted copy and what this stage did.
 */
export function compactHistory(
  history: readonly MessageParam[],
  policy: CompactionPolicy = {},
): { history: MessageParam[]; report: CompactionReport } | undefined {
  if (history.length === 0) return undefined;
  const keep = Math.max(0, policy.keepRecentTurns ?? DEFAULT_KEEP_RECENT_TURNS);
  const starts = turnStarts(history);
  // The first message of the most recent `keep` turns: everything before it is older.
  const recentFrom = keep === 0 ? history.length : starts.length > keep ? starts[starts.length - keep]! : 0;
  const replace = policy.replaceToolResults !== false;
  const stages = [
    () => (replace ? replaceToolResults(history, recentFrom) : undefined),
    () => dropBefore(history, recentFrom),
    () => (replace ? replaceToolResults(history, history.length) : undefined),
    () => dropBefore(history, starts[1] ?? history.length),
  ];
  for (const stage of stages) {
    const done = stage();
    if (done) return done;
  }
  return undefined;
}

type Compacted = { history: MessageParam[]; report: CompactionReport };

/** Replaces every tool result before `end` with a marker; undefined when there is none left. */
function replaceToolResults(history: readonly MessageParam[], end: number): Compacted | undefined {
  let replaced = 0;
  const compacted = history.map((m, i) => {
    if (i >= end || m.role !== 'user' || typeof m.content === 'string') return m;
    let changed = false;
    const content = m.content.map((b): ContentBlockParam => {
      if (b.type !== 'tool_result' || isMarker(b.content)) return b;
      changed = true;
      replaced++;
      return { ...b, content: [{ type: 'text', text: toolResultMarker(charsOf(b.content)) }] };
    });
    return changed ? { ...m, content } : m;
  });
  return replaced > 0 ? { history: compacted, report: { toolResultsReplaced: replaced, messagesDropped: 0, stages: 1 } } : undefined;
}

/** Drops the messages before `cut` (a turn start, or the end); undefined when there are none. */
function dropBefore(history: readonly MessageParam[], cut: number): Compacted | undefined {
  return cut > 0 ? { history: history.slice(cut), report: { toolResultsReplaced: 0, messagesDropped: cut, stages: 1 } } : undefined;
}

export function addReports(a: CompactionReport, b: CompactionReport): CompactionReport {
  return {
    toolResultsReplaced: a.toolResultsReplaced + b.toolResultsReplaced,
    messagesDropped: a.messagesDropped + b.messagesDropped,
    stages: a.stages + b.stages,
  };
}

/**
 * The next stage of compaction for a history given as segments, or undefined when nothing is left
 * to compact. The segments keep their boundaries (a stage drops whole turns from the start, or
 * rewrites messages in place), so a segment compaction left alone is the same segment as before
 * (stored once, content-addressed), and one it changed is the same in every later compaction.
 */
export function compactSegments(
  segments: readonly TranscriptSegment[],
  policy: CompactionPolicy = {},
): { segments: TranscriptSegment[]; report: CompactionReport } | undefined {
  const messages = segments.flatMap((s) => s.transcriptSegment);
  const done = compactHistory(messages, policy);
  if (!done) return undefined;
  const dropped = messages.length - done.history.length;
  const compacted: TranscriptSegment[] = [];
  let from = 0;
  for (const s of segments) {
    const to = from + s.transcriptSegment.length;
    const kept = done.history.slice(Math.max(0, from - dropped), Math.max(0, to - dropped));
    if (kept.length) compacted.push(kept.length === s.transcriptSegment.length && kept.every((m, i) => m === s.transcriptSegment[i]) ? s : segment(kept));
    from = to;
  }
  return { segments: compacted, report: done.report };
}

/** `history` compacted by `stages` stages, as {@link compactSegments} does them one at a time. */
export function replayCompaction(history: readonly TranscriptSegment[], policy: CompactionPolicy, stages: number): TranscriptSegment[] {
  let segments = [...history];
  for (let i = 0; i < stages; i++) {
    const done = compactSegments(segments, policy);
    if (!done) break;
    segments = done.segments;
  }
  return segments;
}

type ToolResultContent = Extract<ContentBlockParam, { type: 'tool_result' }>['content'];

function charsOf(content: ToolResultContent): number {
  if (content === undefined) return 0;
  if (typeof content === 'string') return content.length;
  return content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : JSON.stringify(b).length), 0);
}

function isMarker(content: ToolResultContent): boolean {
  if (!Array.isArray(content) || content.length !== 1) return false;
  const [b] = content;
  return b?.type === 'text' && b.text.startsWith('[tool result removed to fit the context window');
}
