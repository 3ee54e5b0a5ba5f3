/**
 * The end of a turn: its answer. The forced response formatter writes it; with `format: false`,
 * after a refusal, it is Claude's last text of this turn; when the conversation no longer fits the
 * context window, it says so (the formatter would not fit either). An answer written without any
 * tools because every server was unavailable says that too.
 */
import { CONTEXT_WINDOW_ANSWER, toolsUnavailableNote } from '../src/core/prompts';
import { buildResponse, textOutput } from '../src/core/response';
import type { FormatterOutput } from '../src/schemas/response-formatter-tool';
import { lastAssistantText } from '../src/core/transcript';
import type { TurnStopReason } from '../src/core/turn-result';
import { claudeActivities } from './turn-activities';
import type { Turn, TurnAnswer } from './turn-state';

export async function answer(turn: Turn, stopReason: TurnStopReason): Promise<TurnAnswer> {
  const note = turn.unavailable.length && !turn.hadTools ? toolsUnavailableNote(turn.unavailable) : undefined;
  if (stopReason === 'context_window') return { response: buildResponse(withNote(textOutput(CONTEXT_WINDOW_ANSWER), note), turn.calls.artifacts) };
  if (!turn.input.format || stopReason === 'refusal') {
    const lastText = lastAssistantText(turn.transcript.ownMessages());
    const output = textOutput(lastText || `(no answer: the turn stopped with ${stopReason})`);
    return { response: buildResponse(withNote(output, note), turn.calls.artifacts) };
  }
  turn.enter('formatting');
  const formatted = await claudeActivities('format response').formatResponse(turn.formatRequest, ...turn.transcript.segments({ withTools: false }));
  turn.addUsage(formatted);
  return { response: buildResponse(withNote(formatted.output, note), turn.calls.artifacts), formatMode: formatted.mode };
}

/** The output with `note` as a last text part (it follows the answer's text, before tool artifacts). */
function withNote(output: FormatterOutput, note: string | undefined): FormatterOutput {
  return note ? { ...output, conversation: [...output.conversation, { type: 'text', content: note }] } : output;
}
