/**
 * The sources a turn's answer rests on: the citations on Claude's text blocks (web search results,
 * fetched pages, documents), collected from the turn's transcript into one
 * `application/vnd.bibliography` artifact of the answer (docs/response-format.md). Its content is
 * JSON: `[{ "url"?, "title", "citedText": [...] }]`, one entry per source in order of first citation,
 * each quote once.
 */
import type { MessageParam } from './contracts';
import type { Artifact } from './response';

/** One source of the answer. */
export interface Source {
  /** The page's URL (web search results and fetched pages). */
  url?: string;
  title: string;
  /** The passages Claude quoted from it, each once. */
  citedText: string[];
}

export const BIBLIOGRAPHY_TYPE = 'application/vnd.bibliography';

type Citation = { type?: string; url?: string | null; title?: string | null; document_title?: string | null; document_index?: number; cited_text?: string };

/** The sources cited in `messages` (assistant text blocks' citations), in order of first citation. */
export function sourcesOf(messages: readonly MessageParam[]): Source[] {
  const byKey = new Map<string, Source>();
  for (const m of messages) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    for (const block of m.content) {
      if (block.type !== 'text') continue;
      for (const c of ((block as { citations?: Citation[] | null }).citations ?? []) as Citation[]) {
        const url = c.url ?? undefined;
        const title = c.title ?? c.document_title ?? url ?? (c.document_index !== undefined ? `document ${c.document_index + 1}` : 'source');
        const key = url ?? `${c.type ?? ''}:${c.document_index ?? ''}:${title}`;
        const source = byKey.get(key) ?? { ...(url ? { url } : {}), title, citedText: [] };
        byKey.set(key, source);
        if (c.cited_text && !source.citedText.includes(c.cited_text)) source.citedText.push(c.cited_text);
      }
    }
  }
  return [...byKey.values()];
}

/** The answer's bibliography artifact, or undefined when nothing was cited. */
export function bibliographyArtifact(messages: readonly MessageParam[]): Artifact | undefined {
  const sources = sourcesOf(messages);
  if (!sources.length) return undefined;
  return { id: 'sources', type: BIBLIOGRAPHY_TYPE, title: 'Sources', content: JSON.stringify(sources), position: 0 };
}
