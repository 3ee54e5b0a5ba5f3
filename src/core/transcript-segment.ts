/**
 * A transcript segment: an immutable run of a conversation's messages (or the turn's tool
 * definitions), passed to Claude activities and child turns as an argument of its own. Each
 * argument is its own payload, so External Storage stores a segment once (content-addressed) and
 * every later call refers to it by a small claim: history grows with what each step adds, not with
 * the whole conversation once per call. Segments are stored above a small size (see src/storage/);
 * their JSON encoding starts with {@link TRANSCRIPT_SEGMENT_JSON_PREFIX}, which is how the storage
 * selector recognises them.
 */
import type { MessageParam, OfferedTool } from './contracts';

export interface TranscriptSegment {
  transcriptSegment: MessageParam[];
  /** The tool definitions offered to Claude (a segment of its own, with no messages). */
  tools?: OfferedTool[];
}

/** How a segment's JSON encoding begins (the key comes first). */
export const TRANSCRIPT_SEGMENT_JSON_PREFIX = '{"transcriptSegment":';

export function segment(messages: MessageParam[]): TranscriptSegment {
  return { transcriptSegment: messages };
}

export function toolsSegment(tools: OfferedTool[]): TranscriptSegment {
  return { transcriptSegment: [], tools };
}

/** The messages and tools of a request's segments, in order. */
export function joinSegments(segments: readonly TranscriptSegment[]): { messages: MessageParam[]; tools: OfferedTool[] } {
  return {
    messages: segments.flatMap((s) => s.transcriptSegment),
    tools: segments.flatMap((s) => s.tools ?? []),
  };
}
