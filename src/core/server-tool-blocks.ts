/**
 * The blocks of Claude's server tools in a reply: `server_tool_use` (a call the API runs) and its
 * result blocks (`web_search_tool_result`, `web_fetch_tool_result`, `code_execution_tool_result`,
 * `bash_code_execution_tool_result`, …), each naming its call by `tool_use_id`. They go back to the
 * API exactly as they came (the transcript keeps the reply whole); here they are read for the turn's
 * stream: what was called, and its result as one line of text.
 */
import type { ContentBlock } from './contracts';

/** A server tool call of a reply. */
export interface ServerToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** A server tool's result of a reply. */
export interface ServerToolResult {
  toolUseId: string;
  /** The block's type, e.g. `web_search_tool_result`. */
  type: string;
  isError: boolean;
  /** What it found, as text: result titles and URLs, a fetched page's URL, the code's output. */
  text: string;
  /** The block's size as JSON, in bytes. */
  bytes: number;
}

type Loose = { type: string; [k: string]: unknown };

export function serverToolCalls(content: readonly ContentBlock[]): ServerToolCall[] {
  return (content as unknown as Loose[])
    .filter((b) => b.type === 'server_tool_use')
    .map((b) => ({ id: String(b.id), name: String(b.name), input: b.input }));
}

const isResultBlock = (b: Loose): boolean => b.type !== 'tool_result' && b.type.endsWith('_tool_result') && typeof b.tool_use_id === 'string';

/** The text of a result block's content (see {@link ServerToolResult.text}). */
function resultText(content: unknown): { text: string; isError: boolean } {
  if (Array.isArray(content)) {
    const lines = (content as Loose[]).map((r) => [r.title, r.url].filter((v) => typeof v === 'string' && v).join(' · ') || r.type);
    return { text: lines.join('\n'), isError: false };
  }
  const c = (content ?? {}) as Loose;
  if (typeof c.error_code === 'string') return { text: `error: ${c.error_code}`, isError: true };
  if (typeof c.url === 'string') return { text: c.url, isError: false };
  const out = [c.stdout, c.stderr].filter((v) => typeof v === 'string' && v).join('\n');
  if (out || typeof c.return_code === 'number') return { text: out || `exit ${String(c.return_code)}`, isError: typeof c.return_code === 'number' && c.return_code !== 0 };
  const refs = (c.tool_references ?? []) as Loose[];
  if (refs.length) return { text: refs.map((r) => String(r.tool_name)).join(', '), isError: false };
  return { text: typeof c.type === 'string' ? c.type : '', isError: false };
}

export function serverToolResults(content: readonly ContentBlock[]): ServerToolResult[] {
  return (content as unknown as Loose[]).filter(isResultBlock).map((b) => {
    const { text, isError } = resultText(b.content);
    return { toolUseId: String(b.tool_use_id), type: b.type, isError, text, bytes: new TextEncoder().encode(JSON.stringify(b)).length };
  });
}
