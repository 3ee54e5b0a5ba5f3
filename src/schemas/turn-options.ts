/**
 * A turn's options: its input without the question and the history. What a conversation's message
 * carries, what the CLI's flags set and what `serve`'s bodies take (so `/openapi.json` documents
 * every option), checked by one schema.
 */
import { ChatTurnInputError, ChatTurnInputSchema, turnInputProblems } from './turn-input';
import type { TurnOptions } from '../core/conversation';

export const TurnOptionsSchema = ChatTurnInputSchema.omit({ question: true, history: true });

/** `options` checked: as given, or {@link ChatTurnInputError} naming every bad field. */
export function parseTurnOptions(options: unknown): TurnOptions {
  const parsed = TurnOptionsSchema.safeParse(options);
  if (!parsed.success) throw new ChatTurnInputError(turnInputProblems(parsed.error));
  return parsed.data;
}
