/**
 * The ids a caller chooses: turns, conversations and messages. Each is 1 to {@link MAX_ID_LENGTH}
 * printable characters (no control characters, no unpaired surrogates: ids reach logs, headers and
 * Temporal, which takes UTF-8 only). A conversation's turns are `<conversation>-turn-<n>`, so no id
 * a caller chooses may end that way: nobody can take a turn id a conversation will use, and a
 * conversation's id leaves room for that suffix.
 */
import { z } from 'zod';
import { BATCH_NAME_PATTERN } from '../core/batch';
import { isConversationTurnIdForm } from '../core/conversation';
import { MAX_ID_LENGTH, TURN_SUFFIX_ROOM } from '../core/input-limits';

const PRINTABLE = /^[^\p{Cc}\p{Cs}\p{Zl}\p{Zp}]*$/u;

/** 1 to `max` printable characters. */
const idOf = (max: number) =>
  z
    .string()
    .min(1, 'must not be empty')
    .max(max, `at most ${max} characters`)
    .regex(PRINTABLE, 'printable characters only (no control characters)');

/** Any id the server may be asked for: what exists is never longer. */
export const IdSchema = idOf(MAX_ID_LENGTH);

const notATurnOfAConversation = (id: string): boolean => !isConversationTurnIdForm(id);
const RESERVED = "ends like a conversation's turn id (-turn-<n>), which only the conversation may use: choose another";

/** A turn id a caller chooses. */
export const TurnIdSchema = IdSchema.refine(notATurnOfAConversation, RESERVED);

/** A conversation id a caller chooses: short enough for its turns' ids too. */
export const ConversationIdSchema = idOf(MAX_ID_LENGTH - TURN_SUFFIX_ROOM).refine(notATurnOfAConversation, RESERVED);

/** A message id (unique in its conversation). */
export const MessageIdSchema = IdSchema;

/** A batch's name, as every batch is named (src/core/batch.ts): no batch has any other. */
export const BatchNameSchema = z.string().regex(BATCH_NAME_PATTERN, 'a batch name: 1-100 characters of A-Z a-z 0-9 . _ -');

/** An id a caller chose that cannot be used: `field` names where it was given. */
export class InvalidIdError extends Error {
  override name = 'InvalidIdError';
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/** `id` checked by `schema`; throws {@link InvalidIdError} naming `field`. */
export function checkId(schema: z.ZodType<string>, id: string, field: string): string {
  const parsed = schema.safeParse(id);
  if (!parsed.success) throw new InvalidIdError(field, parsed.error.issues.map((i) => i.message).join('; '));
  return parsed.data;
}
