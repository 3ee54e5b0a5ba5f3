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
import { outcomeOfReply, replyToKeep, stopAfterToolRound, stopBeforeStep } from '../src/core/stop-rules';
import { textOf, toolResultsMessage, toolUses } from '../src/core/transcript';
import type { TranscriptSegment } from '../src/core/transcript-segment';
import { turnProgress } from '../src/core/turn-progress';
import type { ChatTurnResult, TurnStopReason } from '../src/core/turn-result';
import { approvalRecordQuery, decideUpdate, liveInputSignal, pendingApprovalsQuery, turnProgressQuery } from '../src/core/workflow-handlers';
import type { ChatTurnInput } from '../src/schemas/turn-input';
import { Approvals } from './approvals';
import { askClaude, CONTEXT_EXHAUSTED } from './claude-step';
import { answer } from './turn-answer';
import { turnStartActivities } from './turn-activities';
import { markCompleted, markEnded } from './turn-search-attributes';
import { releaseUsageSlot } from './usage-release';
import { STARTING_PROGRESS, Turn } from './turn-state';
import { workflowTime } from './workflow-clock';

/**
 * @param history the prior conversation as transcript segments (how a conversation passes it: each
 *   segment is stored once and referenced); callers with a plain message list use `input.history`.
 */
export async function chatTurn(input: ChatTurnInput, ...history: TranscriptSegment[]): Promise<ChatTurnResult> {
  const approvals = new Approvals();
  let turn: Turn | undefined;
  // Every handler is registered here, before anything awaits, so a query or update right after the start is handled.
  setHandler(turnProgressQuery, () => (turn ? turnProgress(turn.progress()) : STARTING_PROGRESS));
  setHandler(pendingApprovalsQuery, () => approvals.pending());
  setHandler(approvalRecordQuery, (callId) => approvals.current(callId));
  setHandler(liveInputSignal, (asked) => turn?.askLive(asked));
  setHandler(decideUpdate, (decision) => approvals.decide(decision, workflowTime()), {
    validator: (decision) => {
      const problem = approvals.problem(decision);
      if (problem) throw new Error(problem);
    },
  });
  try {
    turn = await startTurn(input, approvals, history);
    const stopReason = await runLoop(turn);
    const result = turn.finish(stopReason, await answer(turn, stopReason));
    markCompleted(result, turn.input.model);
    await releaseUsageSlot(turn.tokensUsed());
    return result;
  } catch (err) {
    markEnded(err, turn?.input.model);
    await releaseUsageSlot(turn?.tokensUsed() ?? 0);
    throw err;
  }
}

/** The input check and the tool listing, then the turn's state. A bad input fails the run at once. */
async function startTurn(input: ChatTurnInput, approvals: Approvals, history: TranscriptSegment[]): Promise<Turn> {
  let prepared;
  try {
    prepared = await turnStartActivities('check input, list tools').prepareTurn(input);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === INVALID_TURN_INPUT) {
      throw ApplicationFailure.create({ type: INVALID_TURN_INPUT, message: cause.message, nonRetryable: true, details: cause.details ?? undefined });
    }
    throw err;
  }
  return new Turn(input, prepared, approvals, history);
}

/** Claude ⇄ tool rounds until a stop rule says why the loop ends; it ends only between whole steps. */
async function runLoop(turn: Turn): Promise<TurnStopReason> {
  for (;;) {
    const budgetSpent = stopBeforeStep(turn.step, turn.input);
    if (budgetSpent) return budgetSpent;
    const step = turn.beginStep();
    const reply = await askClaude(turn);
    if (reply === CONTEXT_EXHAUSTED) return 'context_window';
    const kept = replyToKeep(reply);
    if (kept) turn.transcript.addReply(kept);
    const outcome = outcomeOfReply(reply);
    if (outcome.next === 'stop') {
      if (outcome.reason === 'stop_sequence') turn.stopSequence = reply.stopSequence;
      return outcome.reason;
    }
    if (outcome.next === 'ask-again') continue;

    turn.enter('calling-tools');
    const round = await turn.calls.runRound(toolUses(reply.content), step, textOf(reply.content));
    turn.transcript.addToolResults(toolResultsMessage(round.results));
    const stop = stopAfterToolRound({ ...round, tokensUsed: turn.tokensUsed(), reply: reply.content }, turn.input);
    if (stop) return stop;
  }
}
