/**
 * The end of a turn: its answer. The forced response formatter writes it, or, for a turn with a
 * typed `output`, the call that writes that JSON (src/claude/output-writer.ts); with `format: false`,
 * after a refusal, it is Claude's last text of this turn; when the conversation no longer fits the
 * context window, it says so (the formatter would not fit either). An answer written without any
 * tools because every server was unavailable says that too. The sources Claude cited in the turn
 * (web search results, fetched pages) follow the tools' artifacts as one bibliography.
 */
import { CONTEXT_WINDOW_ANSWER, toolsUnavailableNote } from '../src/core/prompts';
import { bibliographyArtifact } from '../src/core/bibliography';
import { buildResponse, textOutput } from '../src/core/response';
import type { FormatterOutput } from '../src/schemas/response-formatter-tool';
import { lastAssistantText } from '../src/core/transcript';
import type { TurnStopReason } from '../src/core/turn-result';
import type { Turn, TurnAnswer } from './turn-state';

export async function answer(turn: Turn, stopReason: TurnStopReason): Promise<TurnAnswer> {
  const { output, formatMode, typed } = await answerOutput(turn, stopReason);
  const note = turn.unavailable.length && !turn.hadTools ? toolsUnavailableNote(turn.unavailable) : undefined;
  // The note follows the answer's text, before the tools' artifacts.
  const withNote = note ? { ...output, conversation: [...output.conversation, { type: 'text' as const, content: note }] } : output;
  const sources = bibliographyArtifact(turn.transcript.ownMessages());
  const artifacts = sources ? [...turn.calls.artifacts, sources] : turn.calls.artifacts;
  return { response: buildResponse(withNote, artifacts), ...(formatMode ? { formatMode } : {}), ...(typed ? { typed } : {}) };
}

/** The answer's text and artifacts as the formatter's output, and how it was written. */
async function answerOutput(turn: Turn, stopReason: TurnStopReason): Promise<Omit<TurnAnswer, 'response'> & { output: FormatterOutput }> {
  if (stopReason === 'context_window') return { output: textOutput(CONTEXT_WINDOW_ANSWER) };
  // A typed `output` is written whatever `format` says; a refusal has nothing to write it from.
  if ((!turn.input.format && !turn.input.output) || stopReason === 'refusal') {
    const lastText = lastAssistantText(turn.transcript.ownMessages());
    return { output: textOutput(lastText || `(no answer: the turn stopped with ${stopReason})`) };
  }
  turn.enter('formatting');
  const segments = turn.transcript.segments({ withTools: false });
  const formatted = await turn.claudeCalls.formatResponse(turn.formatterRequest(), segments);
  turn.addUsage(formatted);
  return { output: formatted.output, formatMode: formatted.mode, ...(formatted.typed ? { typed: formatted.typed } : {}) };
}
