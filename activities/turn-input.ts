/**
 * The turn-input check, run as a local activity at the start of every chat turn (see
 * TurnLocalActivities): the workflow gets a clear, non-retryable failure naming every bad field
 * without loading zod into its sandbox.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { ChatTurnInputError, parseChatTurnInput } from '../src/core/turn-input';
import { INVALID_TURN_INPUT, type TurnLocalActivities } from '../src/core/contracts';

export function makeTurnInputActivities(): TurnLocalActivities {
  return {
    async checkTurnInput(input: unknown): Promise<void> {
      try {
        parseChatTurnInput(input);
      } catch (err) {
        if (!(err instanceof ChatTurnInputError)) throw err;
        throw ApplicationFailure.create({ type: INVALID_TURN_INPUT, message: err.message, nonRetryable: true, details: err.problems });
      }
    },
  };
}
