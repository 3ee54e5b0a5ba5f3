/**
 * The start of a chat turn, a local activity: checks the input against its schema (zod stays out
 * of the workflow sandbox) and the toolset it names against the worker's, lists the tools of the
 * turn's servers and tool modules, decides the turn's toolset from them and records it with the
 * worker's turn defaults. A bad input fails non-retryably with type `InvalidTurnInput`, naming every
 * bad field.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { PreparedTurn, WorkerTurnDefaults } from '../src/core/contracts';
import { INVALID_TURN_INPUT } from '../src/core/failure-types';
import { selectTools, unknownToolsetProblem, type Toolset } from '../src/core/toolsets';
import { ChatTurnInputError, parseChatTurnInput, type ChatTurnInput } from '../src/schemas/turn-input';
import type { Toolbox } from '../src/tools/toolbox';
import { prepareTurnOf } from '../src/core/turn-toolset';
import { resolveTurn } from '../src/core/resolve-turn';
import { namedTool, notOfferedProblem, requestControlProblems } from '../src/core/request-control-checks';

function invalid(problems: string[]): ApplicationFailure {
  return ApplicationFailure.create({ type: INVALID_TURN_INPUT, message: `invalid chat turn input: ${problems.join('; ')}`, nonRetryable: true, details: problems });
}

function checked(input: unknown): ChatTurnInput {
  try {
    return parseChatTurnInput(input);
  } catch (err) {
    if (!(err instanceof ChatTurnInputError)) throw err;
    throw invalid(err.problems);
  }
}

export interface TurnStartDeps {
  tools: Pick<Toolbox, 'listTools'>;
  /** Recorded with the tool list, so a turn's defaults never change under replay. */
  workerDefaults: WorkerTurnDefaults;
  /** The worker's tool sets, by name (its config's `toolsets`). */
  toolsets?: Readonly<Record<string, Toolset>>;
}

export function makeTurnStartActivities({ tools, workerDefaults, toolsets = {} }: TurnStartDeps) {
  return {
    // A local activity has no heartbeats: each server's listing is bounded by its listTimeoutMs,
    // and the SDK keeps the workflow task alive while a local activity runs.
    async prepareTurn(input: unknown): Promise<PreparedTurn> {
      const turn = checked(input);
      const resolved = resolveTurn(turn, workerDefaults);
      const controls = requestControlProblems(resolved);
      if (controls.length) throw invalid(controls);
      const toolset = turn.toolset === undefined ? undefined : toolsets[turn.toolset];
      if (turn.toolset !== undefined && !toolset) throw invalid([unknownToolsetProblem(turn.toolset, toolsets)]);
      const selection = selectTools(turn, turn.toolset, toolset);
      const listed = await tools.listTools(
        { ...(selection.servers ? { servers: selection.servers } : {}), ...(turn.context ? { context: turn.context } : {}) },
        { signal: Context.current().cancellationSignal },
      );
      const prepared = prepareTurnOf(turn, listed, workerDefaults, selection);
      const forced = namedTool(resolved.toolChoice);
      if (forced !== undefined && prepared.forcedTool === undefined) throw invalid([notOfferedProblem(prepared.catalog, forced)]);
      return prepared;
    },
  };
}

/** The turn-start local activities' type: what the workflow schedules and the worker registers. */
export type TurnStartActivities = ReturnType<typeof makeTurnStartActivities>;
