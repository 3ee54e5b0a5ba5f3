/**
 * Transcript rules of the Messages API that the loop must keep (docs/claude-api-rules.md): assistant content goes
 * back unchanged; after an assistant message with tool_use blocks comes ONE user message holding a
 * tool_result for every tool_use, in order, before any text.
 */
import type { ContentBlock, MessageParam, ToolResultContent } from './contracts';

export type ToolUseBlock = Extract<ContentBlock, { type: 'tool_use' }>;

export function toolUses(content: ContentBlock[]): ToolUseBlock[] {
  return content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}

/** The text of a reply (text blocks joined), ignoring thinking and tool blocks. */
export function textOf(content: ContentBlock[] | MessageParam['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((b) => (b.type === 'text' ? (b as { text: string }).text : ''))
    .filter((t) => t.length > 0)
    .join('\n\n');
}

/** The last non-empty assistant text in a transcript ('' when none). */
export function lastAssistantText(messages: MessageParam[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'assistant') continue;
    const text = textOf(m.content);
    if (text.trim()) return text;
  }
  return '';
}

export interface ToolResultEntry {
  toolUseId: string;
  content: ToolResultContent[];
  isError: boolean;
}

/** The user message that answers a step's tool_use blocks, in their order. */
export function toolResultsMessage(results: ToolResultEntry[]): MessageParam {
  return {
    role: 'user',
    content: results.map((r) => ({
      type: 'tool_result' as const,
      tool_use_id: r.toolUseId,
      content: r.content,
      ...(r.isError ? { is_error: true } : {}),
    })),
  };
}

export function errorText(text: string): ToolResultContent[] {
  return [{ type: 'text', text }];
}
