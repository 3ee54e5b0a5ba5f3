/** Prompt texts the loop adds; kept together so they can be read and tuned in one place. */
import type { ServerUnavailable } from './contracts';

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

function unavailableServersNote(servers: readonly ServerUnavailable[]): string {
  const list = servers.map((s) => `${s.server} (${s.reason})`).join(', ');
  return `Note: these tool servers are unavailable for this answer: ${list}. Tell the user if that limits the answer.`;
}

/**
 * A turn's system prompt: the caller's, then a note naming unavailable servers. The loop's calls
 * (`for: 'loop'`) put the gathering instructions of `gather-then-format` first; the formatter
 * writes the answer, so it gets no gathering instructions.
 */
export function turnSystemPrompt(
  input: { system?: string; loopPolicy: 'native' | 'gather-then-format' },
  unavailable: readonly ServerUnavailable[],
  { for: purpose }: { for: 'loop' | 'formatter' },
): string | undefined {
  return joinSystem(
    purpose === 'loop' && input.loopPolicy === 'gather-then-format' ? GATHER_SYSTEM_PROMPT : undefined,
    input.system,
    unavailable.length ? unavailableServersNote(unavailable) : undefined,
  );
}

/** System prompt parts joined by blank lines, the empty ones left out; undefined when none is left. */
export function joinSystem(...parts: Array<string | undefined>): string | undefined {
  const kept = parts.filter((p): p is string => p !== undefined && p.trim().length > 0);
  return kept.length ? kept.join('\n\n') : undefined;
}

/** Added to an answer written without any tools because every server of the turn was unavailable. */
export function toolsUnavailableNote(servers: readonly ServerUnavailable[]): string {
  return `_Tools unavailable for this answer: ${servers.map((u) => `${u.server} (${u.reason})`).join(', ')}._`;
}

/**
 * The answer of a turn that stopped with `context_window`: one line saying the conversation no
 * longer fits and what to do.
 */
export const CONTEXT_WINDOW_ANSWER =
  "This conversation no longer fits the model's context window, even with all earlier history compacted: " +
  'start a new conversation (or send a shorter history), or use a model with a larger context window.';
