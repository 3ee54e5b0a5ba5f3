/**
 * The end of a turn: its answer, from the forced response formatter or, with `format: false` and
 * after a refusal, from Claude's last text of this turn.
 */
import type { FormatMode } from '../src/core/contracts';
import { joinSystem, unavailableServersNote } from '../src/core/prompts';
import { buildResponse, textOutput, type TurnResponse } from '../src/core/response';
import { lastAssistantText } from '../src/core/transcript';
import type { ChatTurnResult, TurnStopReason } from '../src/core/turn-result';
import { claudeActivities } from './turn-activities';
import type { Turn } from './turn-state';

export async function answer(turn: Turn, stopReason: TurnStopReason): Promise<{ response: TurnResponse; formatMode?: FormatMode }> {
  let response: TurnResponse;
  let formatMode: FormatMode | undefined;
  if (turn.input.format && stopReason !== 'refusal') {
    turn.enter('formatting');
    // The caller's system prompt, without the loop's gathering instructions.
    const system = joinSystem(turn.input.system, turn.unavailable.length ? unavailableServersNote(turn.unavailable) : undefined);
    const formatted = await claudeActivities('format response').formatResponse(
      {
        model: turn.request.model,
        ...(system !== undefined ? { system } : {}),
        maxTokens: turn.request.maxTokens,
        ...(turn.request.thinking ? { thinking: turn.request.thinking } : {}),
      },
      ...turn.transcript.segments({ withTools: false }),
    );
    turn.count(formatted);
    formatMode = formatted.mode;
    response = buildResponse(formatted.output, turn.calls.artifacts);
  } else {
    const lastText = lastAssistantText(turn.transcript.ownMessages());
    response = buildResponse(textOutput(lastText || `(no answer: the turn stopped with ${stopReason})`), turn.calls.artifacts);
  }
  if (turn.unavailable.length && !turn.hadTools) {
    response.conversation += `\n\n_Tools unavailable for this answer: ${turn.unavailable.map((u) => `${u.server} (${u.reason})`).join(', ')}._`;
  }
  return { response, ...(formatMode ? { formatMode } : {}) };
}

/**
 * The transcript for the result: the `history` the caller passed (compacted, if it was) and this
 * turn's messages, never ending on an unanswered user message, so it can be the next turn's
 * history as it is. History passed as segments (by a conversation) is not echoed back.
 */
export function finalTranscript(turn: Turn, response: TurnResponse): ChatTurnResult['messages'] {
  const messages = [...(turn.input.history ? turn.transcript.priorMessages() : []), ...turn.transcript.ownMessages()];
  if (messages[messages.length - 1]?.role === 'user') messages.push({ role: 'assistant', content: response.conversation || '(no answer)' });
  return messages;
}
