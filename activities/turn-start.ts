/**
 * The local activities that start a chat turn (see TurnLocalActivities): the input check, and the
 * input check plus the tool listing. The workflow gets a clear, non-retryable failure naming every
 * bad field without loading zod into its sandbox.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ChatTurnInputError, parseChatTurnInput, type ChatTurnParams } from '../src/core/turn-input';
import { INVALID_TURN_INPUT, type ListToolsInput, type ListToolsOutput, type TurnLocalActivities } from '../src/core/contracts';
import type { McpPool } from '../src/mcp/pool';

function checked(input: unknown): ChatTurnParams {
  try {
    return parseChatTurnInput(input);
  } catch (err) {
    if (!(err instanceof ChatTurnInputError)) throw err;
    throw ApplicationFailure.create({ type: INVALID_TURN_INPUT, message: err.message, nonRetryable: true, details: err.problems });
  }
}

export interface TurnStartDeps {
  pool: Pick<McpPool, 'listTools'>;
  /** Recorded with the tool list, so a turn's defaults never change under replay. */
  turnDefaults: NonNullable<ListToolsOutput['turnDefaults']>;
}

export function makeTurnStartActivities({ pool, turnDefaults }: TurnStartDeps): TurnLocalActivities {
  return {
    async checkTurnInput(input: unknown): Promise<void> {
      checked(input);
    },

    // No heartbeats: a local activity has none; each server's listing is bounded by its listTimeoutMs,
    // and the SDK keeps the workflow task alive while a local activity runs.
    async prepareTurn(input: unknown): Promise<ListToolsOutput> {
      const { servers } = checked(input);
      const request: ListToolsInput = servers ? { servers } : {};
      const listed = await pool.listTools(request, { signal: Context.current().cancellationSignal });
      return { ...listed, turnDefaults };
    },
  };
}
