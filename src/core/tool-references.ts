/**
 * The tools a tool search found: its result blocks (`tool_search_tool_result`, in Claude's reply)
 * hold `tool_reference`s naming deferred tools, which the API then loads. A request whose
 * transcript holds such a reference must define the tool it names (the formatter's, say). A
 * request whose transcript holds `tool_use` blocks must define tools too.
 */
import type { MessageParam } from './contracts';

type Loose = { type?: string; tool_name?: string; content?: unknown; tool_references?: unknown };

function referencesIn(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) referencesIn(v, found);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const b = value as Loose;
  if (b.type === 'tool_reference' && typeof b.tool_name === 'string') found.add(b.tool_name);
  referencesIn(b.tool_references, found);
  referencesIn(b.content, found);
}

/** The names of the tools `messages` reference (search results), each once, in order. */
export function referencedToolNames(messages: readonly MessageParam[]): string[] {
  const found = new Set<string>();
  for (const m of messages) if (typeof m.content !== 'string') referencesIn(m.content, found);
  return [...found];
}

/** The names of the tools `messages` call (`tool_use` blocks), each once, in order. */
export function calledToolNames(messages: readonly MessageParam[]): string[] {
  const found = new Set<string>();
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_use') found.add(b.name);
  }
  return [...found];
}
