/**
 * Failure types that cross the workflow/activity boundary, defined once: activities throw them
 * and workflows decide by the type alone, never by a message's wording.
 */

/** A turn's input fails its schema: the turn fails at once, naming every bad field, never retried. */
export const INVALID_TURN_INPUT = 'InvalidTurnInput';

/** Claude refused the request because the prompt does not fit the model's context window. */
export const CLAUDE_PROMPT_TOO_LONG = 'ClaudePromptTooLong';
