/**
 * The last user turn of an answer's call (the formatter's, the typed output's): the turn's transcript
 * made to end in a user message that asks for the answer.
 */
import type { ContentBlock, ContentBlockParam, MessageParam } from '../core/contracts';
import { toolUses } from '../core/transcript';

/**
 * The transcript ending in a user turn that carries `text`. A final user turn gets `text` as an
 * extra block after its own content (tool_results stay first); otherwise a new user message is
 * added, answering first any tool_use the final assistant turn left unanswered (pairing rule).
 */
export function withFinalRequest(messages: MessageParam[], text: string): MessageParam[] {
  const last = messages[messages.length - 1];
  if (last?.role === 'user') {
    const before: ContentBlockParam[] =
      typeof last.content === 'string'
        ? last.content
          ? [{ type: 'text', text: last.content }]
          : []
        : last.content;
    return [...messages.slice(0, -1), { ...last, content: [...before, { type: 'text', text }] }];
  }
  const pending =
    last?.role === 'assistant' && typeof last.content !== 'string'
      ? toolUses(last.content as ContentBlock[])
      : [];
  const results: ContentBlockParam[] = pending.map((u) => ({
    type: 'tool_result',
    tool_use_id: u.id,
    is_error: true,
    content: 'Not run: the turn ended before this tool call ran.',
  }));
  return [
    ...messages,
    { role: 'user', content: results.length ? [...results, { type: 'text', text }] : text },
  ];
}
