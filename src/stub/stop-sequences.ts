/**
 * The request's `stop_sequences` applied to an answer, as the model stops on them: the text blocks
 * are read in order, and the earliest occurrence of any stop sequence (the first one the request
 * lists, where two start at the same place) ends the answer just before it. The blocks after it are
 * dropped, and so is the cut block when nothing of it is left. Only text is matched: a thinking
 * block or a tool_use input never stops the answer.
 */
import { textBlock } from './server-blocks';

type Block = { type: string; [k: string]: unknown };

export interface StoppedContent {
  content: Block[];
  /** The stop sequence matched (the response's `stop_sequence`), or null when none was. */
  stopSequence: string | null;
}

/** The request's stop sequences (validate-request-controls.ts checked them): none when it sends none. */
export const stopSequencesOf = (body: Record<string, unknown>): string[] =>
  Array.isArray(body.stop_sequences) ? (body.stop_sequences as string[]) : [];

/** `content` cut at the first stop sequence in its text; a cut text block keeps its citations, signed again for its new text. */
export function stopAtSequences(content: Block[], sequences: readonly string[]): StoppedContent {
  if (!sequences.length) return { content, stopSequence: null };
  for (const [i, b] of content.entries()) {
    if (b.type !== 'text') continue;
    const text = String(b.text);
    let at = -1;
    let matched: string | null = null;
    for (const s of sequences) {
      const found = text.indexOf(s);
      if (found !== -1 && (at === -1 || found < at)) {
        at = found;
        matched = s;
      }
    }
    if (matched === null) continue;
    const kept = text.slice(0, at);
    const citations = Array.isArray(b.citations) ? (b.citations as Array<Record<string, unknown>>) : undefined;
    return { content: [...content.slice(0, i), ...(kept ? [textBlock(kept, citations)] : [])], stopSequence: matched };
  }
  return { content, stopSequence: null };
}
