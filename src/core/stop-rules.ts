/**
 * When a turn's tool loop stops, and why: pure rules, checked at three points of a step. A turn
 * stops only between whole steps, so every tool_use in the transcript has its tool_result.
 */
import type { ClaudeCallOutput, ContentBlock } from './contracts';
import { NEED_MORE_DATA } from './prompts';
import { textOf } from './transcript';
import type { TurnStopReason } from './turn-result';

/** The budgets and loop policy of a turn (its input, defaults applied). */
export interface TurnLimits {
  maxSteps: number;
  /** Input + output tokens of the whole turn; checked after each tool round. */
  maxTokens?: number;
  loopPolicy: 'native' | 'gather-then-format';
}

/** What the loop does after a Claude reply. */
export type ReplyOutcome =
  /** Run the reply's tool calls, then ask Claude again. */
  | { next: 'run-tools' }
  /** `pause_turn`: a server-side tool paused the reply; send it back as-is and ask again. */
  | { next: 'ask-again' }
  | { next: 'stop'; reason: TurnStopReason };

/** Before a step: the step budget is spent once `stepsTaken` reaches `maxSteps`. */
export function stopBeforeStep(stepsTaken: number, limits: TurnLimits): TurnStopReason | undefined {
  return stepsTaken >= limits.maxSteps ? 'max_steps' : undefined;
}

/**
 * After a reply (the max_tokens raise and compaction already tried): a reply that ran out of
 * context window stops; a refusal stops; a reply cut at max_tokens stops; a reply without tool
 * calls is the answer; otherwise the tools run.
 */
export function outcomeOfReply(reply: Pick<ClaudeCallOutput, 'content' | 'stopReason'>): ReplyOutcome {
  if (reply.stopReason === 'model_context_window_exceeded') return { next: 'stop', reason: 'context_window' };
  if (reply.stopReason === 'pause_turn') return { next: 'ask-again' };
  if (reply.stopReason === 'refusal') return { next: 'stop', reason: 'refusal' };
  if (isCutInsideToolUse(reply)) return { next: 'stop', reason: 'max_tokens' };
  if (!reply.content.some((b) => b.type === 'tool_use')) {
    if (reply.stopReason === 'max_tokens') return { next: 'stop', reason: 'max_tokens' };
    return { next: 'stop', reason: reply.stopReason === 'stop_sequence' ? 'stop_sequence' : 'completed' };
  }
  return { next: 'run-tools' };
}

/**
 * What of a reply goes into the transcript: all of it, except from a reply cut inside a tool_use
 * (at max_tokens or at the end of the context window), whose unfinished call is dropped (a
 * tool_use without its tool_result would break the next request); undefined when nothing is left.
 */
export function replyToKeep(reply: Pick<ClaudeCallOutput, 'content' | 'stopReason'>): ContentBlock[] | undefined {
  const cut = reply.stopReason === 'max_tokens' || reply.stopReason === 'model_context_window_exceeded';
  if (!cut || !endsInToolUse(reply)) return reply.content;
  const said = reply.content.filter((b) => b.type !== 'tool_use');
  return said.length ? said : undefined;
}

/** A reply that ran out of max_tokens while writing a tool call. */
export function isCutInsideToolUse(reply: Pick<ClaudeCallOutput, 'content' | 'stopReason'>): boolean {
  return reply.stopReason === 'max_tokens' && endsInToolUse(reply);
}

function endsInToolUse(reply: Pick<ClaudeCallOutput, 'content'>): boolean {
  return reply.content[reply.content.length - 1]?.type === 'tool_use';
}

/** What a finished tool round tells the stop rules. */
export interface ToolRoundFacts {
  /** Claude repeated a call it had made with the same arguments. */
  repeated: boolean;
  /** The tool-call budget is used up (some calls may have been answered "not run"). */
  overBudget: boolean;
  /** Input + output tokens of the turn so far. */
  tokensUsed: number;
  /** The reply whose tools ran. */
  reply: ContentBlock[];
}

/**
 * After a tool round, in this order: a repeated call, the tool-call budget, the token budget, and
 * (gather-then-format) a reply that did not ask for more data.
 */
export function stopAfterToolRound(round: ToolRoundFacts, limits: TurnLimits): TurnStopReason | undefined {
  if (round.repeated) return 'repeated_call';
  if (round.overBudget) return 'max_tool_calls';
  if (limits.maxTokens !== undefined && round.tokensUsed >= limits.maxTokens) return 'max_tokens';
  if (limits.loopPolicy === 'gather-then-format' && !textOf(round.reply).includes(NEED_MORE_DATA)) return 'completed';
  return undefined;
}
