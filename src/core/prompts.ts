/** Prompt texts the loop adds; kept together so they can be read and tuned in one place. */

export const NEED_MORE_DATA = 'NEED MORE DATA:';

/** The gathering prompt of the `gather-then-format` loop policy (docs/tool-loop.md). */
export const GATHER_SYSTEM_PROMPT = [
  "You are an AI assistant focused ONLY on gathering information to answer the user's question.",
  '',
  'IMPORTANT INSTRUCTIONS:',
  '1. Your ONLY role is to determine what data is needed and use tools to gather it.',
  "2. DO NOT attempt to answer the user's question directly in this phase.",
  '3. When the user specifies particular tools by name, you MUST use those exact tools.',
  '4. Call appropriate tools to collect relevant information.',
  '5. After each tool call, you should STOP by default unless you need more data.',
  `6. To continue with additional tool calls, you MUST include "${NEED_MORE_DATA}" followed by explicit reasoning.`,
].join('\n');

export function unavailableServersNote(servers: Array<{ server: string; reason: string }>): string {
  const list = servers.map((s) => `${s.server} (${s.reason})`).join(', ');
  return `Note: these tool servers are unavailable for this answer: ${list}. Tell the user if that limits the answer.`;
}

export function joinSystem(...parts: Array<string | undefined>): string | undefined {
  const kept = parts.filter((p): p is string => p !== undefined && p.trim().length > 0);
  return kept.length ? kept.join('\n\n') : undefined;
}
