/**
 * One chat turn as a durable workflow: check the input and list the tools (one local activity),
 * then Claude ⇄ tool rounds until Claude stops asking for tools or a budget stops the loop, then
 * the answer (the forced response formatter, or Claude's last text). Every Claude call and every
 * tool call is its own activity, so each retries on its own and shows in the UI.
 *
 * Deterministic code only: time comes from the workflow clock, and I/O from activities.
 */
import { ActivityFailure, ApplicationFailure, setHandler } from '@temporalio/workflow';
import { INVALID_TURN_INPUT } from '../src/core/failure-types';
import { turnProgressQuery } from '../src/core/workflow-handlers';
import type { TranscriptSegment } from '../src/core/transcript-segment';
import { outcomeOfReply, replyToKeep, stopAfterToolRound, stopBeforeStep } from '../src/core/stop-rules';
import { textOf, toolResultsMessage, toolUses } from '../src/core/transcript';
import { applyTurnDefaults, DEFAULT_MAX_STEPS } from '../src/core/turn-defaults';
import type { ChatTurnInput } from '../src/schemas/turn-input';
import { turnProgress } from '../src/core/turn-progress';
import type { ChatTurnResult, TurnStopReason } from '../src/core/turn-result';
import { Approvals } from './approvals';
import { askClaude } from './claude-step';
import { answer, finalTranscript } from './turn-answer';
import { turnStartActivities } from './turn-activities';
import { markCompleted, markEnded, markRunning } from './turn-search-attributes';
import { startingProgress, Turn } from './turn-state';

/**
 * @param history the prior conversation as transcript segments (how a conversation passes it: each
 *   segment is stored once and referenced); callers with a plain message list use `input.history`.
 */
export async function chatTurn(rawInput: ChatTurnInput, ...history: TranscriptSegment[]): Promise<ChatTurnResult> {
  let turn: Turn | undefined;
  // Handlers are registered before anything awaits, so a query or update right after the start is handled.
  setHandler(turnProgressQuery, () => turnProgress(turn?.progress() ?? startingProgress(rawInput.maxSteps ?? DEFAULT_MAX_STEPS)));
  const approvals = new Approvals(() => turn?.enter(turn.phase));
  try {
    turn = await startTurn(rawInput, approvals, history);
    const stopReason = await runLoop(turn);
    const result = await finishTurn(turn, stopReason);
    markCompleted(result);
    return result;
  } catch (err) {
    markEnded(err);
    throw err;
  }
}

/** The input check and the tool listing, then the turn's state. A bad input fails the run at once. */
async function startTurn(rawInput: ChatTurnInput, approvals: Approvals, history: TranscriptSegment[]): Promise<Turn> {
  let listed;
  try {
    listed = await turnStartActivities('check input, list tools').prepareTurn(rawInput);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === INVALID_TURN_INPUT) {
      throw ApplicationFailure.create({ type: INVALID_TURN_INPUT, message: cause.message, nonRetryable: true, details: cause.details ?? undefined });
    }
    throw err;
  }
  const turn = new Turn(applyTurnDefaults(rawInput), listed, approvals, history);
  markRunning(turn.request.model);
  return turn;
}

/** Claude ⇄ tool rounds until a stop rule says why the loop ends; it ends only between whole steps. */
async function runLoop(turn: Turn): Promise<TurnStopReason> {
  for (;;) {
    const budgetSpent = stopBeforeStep(turn.step, turn.input);
    if (budgetSpent) return budgetSpent;
    turn.step++;
    turn.enter('asking-claude');
    const reply = await askClaude(turn.transcript, turn.request, turn.step, turn.input.compaction ?? {}, (r) => turn.count(r));
    const kept = replyToKeep(reply);
    if (kept) turn.transcript.addReply(kept);
    const outcome = outcomeOfReply(reply);
    if (outcome.next === 'stop') return outcome.reason;
    if (outcome.next === 'ask-again') continue;

    turn.enter('calling-tools');
    const round = await turn.calls.runRound(toolUses(reply.content), turn.step, textOf(reply.content));
    turn.transcript.addToolResults(toolResultsMessage(round.results));
    const tokensUsed = turn.usage.inputTokens + turn.usage.outputTokens;
    const stop = stopAfterToolRound({ ...round, tokensUsed, reply: reply.content }, turn.input);
    if (stop) return stop;
  }
}

/** The answer, then the turn's result. */
async function finishTurn(turn: Turn, stopReason: TurnStopReason): Promise<ChatTurnResult> {
  const { response, formatMode } = await answer(turn, stopReason);
  turn.enter('done');
  return {
    response,
    stopReason,
    steps: turn.step,
    toolCalls: turn.calls.records,
    usage: turn.usage,
    costUsd: turn.costUsd,
    model: turn.request.model,
    messages: finalTranscript(turn, response),
    ...(formatMode ? { formatMode } : {}),
    unavailableServers: turn.unavailable,
    droppedTools: turn.droppedTools,
    approvals: turn.approvals.records,
    ...(turn.transcript.compaction ? { compaction: turn.transcript.compaction } : {}),
  };
}
