/**
 * The start of a chat turn, a local activity: checks the input against its schema (zod stays out
 * of the workflow sandbox), lists the tools of the turn's servers, decides the turn's toolset from
 * them and records it with the worker's turn defaults. A bad input fails non-retryably with type `InvalidTurnInput`, naming every bad field.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { PreparedTurn, WorkerTurnDefaults } from '../src/core/contracts';
import { INVALID_TURN_INPUT } from '../src/core/failure-types';
import { ChatTurnInputError, parseChatTurnInput, type ChatTurnInput } from '../src/schemas/turn-input';
import type { McpPool } from '../src/mcp/pool';
import { prepareTurnOf } from '../src/core/turn-toolset';

function checked(input: unknown): ChatTurnInput {
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
  workerDefaults: WorkerTurnDefaults;
}

export function makeTurnStartActivities({ pool, workerDefaults }: TurnStartDeps) {
  return {
    // A local activity has no heartbeats: each server's listing is bounded by its listTimeoutMs,
    // and the SDK keeps the workflow task alive while a local activity runs.
    async prepareTurn(input: unknown): Promise<PreparedTurn> {
      const turn = checked(input);
      const listed = await pool.listTools(turn.servers ? { servers: turn.servers } : {}, { signal: Context.current().cancellationSignal });
      return prepareTurnOf(turn, listed, workerDefaults);
    },
  };
}

/** The turn-start local activities' type: what the workflow schedules and the worker registers. */
export type TurnStartActivities = ReturnType<typeof makeTurnStartActivities>;
