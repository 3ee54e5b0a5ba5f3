/**
 * The events of a turn's stream, named as the Vercel AI SDK's UI message stream names its parts
 * where one fits, `data-…` for the rest. Every event has its offset in the stream (a conversation's
 * stream numbers its turns' events in order) and the turn it belongs to; events that came from a
 * Claude call carry the attempt that wrote them.
 *
 * The stream never contradicts the turn's result: after a `data-retry` naming a text id, that id's
 * earlier deltas are void, and the deltas after the last one join to exactly the step's text
 * (`answer`: exactly `response.conversation`).
 *
 * A turn with `output` (src/core/output-spec.ts) writes its answer as JSON: the answer's deltas are
 * that JSON as Claude writes it, and `data-output` follows each delta that changes the object parsed
 * so far (`partial: true`); a `data-retry` discarding the answer starts the parse again. Its result's
 * `output`, once known, is one last `data-output` (`partial: false`) just before `data-answer`; a
 * turn without one (`invalid_output`, a refusal) has none.
 */
import type { ChatTurnResult, TurnStopReason } from './turn-result';
import type { TurnResponse } from './response';
import type { TokenUsage } from './usage';
import type { EndStatus } from './run-status';
import type { DroppedTool, ServerUnavailable } from './contracts';
import type { InputRequest } from './input-requests';

/** The id of step `n`'s text deltas. */
export const stepTextId = (step: number): string => `step-${step}`;
/** The id of step `n`'s reasoning deltas. */
export const reasoningId = (step: number): string => `reasoning-${step}`;
/** The longest tool result text an event carries; the rest is named by its size. */
export const TOOL_OUTPUT_TEXT_LIMIT = 8000;

/** The id of the answer's text deltas (the formatter's conversation, as written). */
export const ANSWER_TEXT_ID = 'answer';
interface Base {
  /** Position in the stream, from 0. */
  offset: number;
  /** The turn's workflow id. */
  turnId: string;
}

/** A tool the turn offers Claude, as its start recorded it. */
export interface OfferedTool {
  /** The tool's name as Claude sees it. */
  name: string;
  /** The MCP server (or tool module) that has the tool. */
  server?: string;
  /** The tool's own name there. */
  tool?: string;
  /** One of Claude's own server tools (web search…): the API runs it, not a worker. */
  providerExecuted?: boolean;
}

/**
 * What a turn offers Claude and what it goes without, as its start (`prepareTurn`) recorded it:
 * the `data-tools` event (src/core/turn-toolset.ts `turnToolsOf` makes it).
 */
export interface TurnTools {
  /** Every tool sent to Claude, in the order sent (deferred ones too). */
  offered: OfferedTool[];
  /** Claude names of the offered tools sent with defer_loading, found by tool search. */
  deferred: string[];
  /** Tools left out, and why (allow/deny, `maxToolsPerRequest`, an unusable schema…). */
  dropped: DroppedTool[];
  /** Servers the turn goes without, and why: not reachable, circuit open, not configured, not in the toolset. */
  unavailable: ServerUnavailable[];
}

/** How a stream ended (src/core/run-status.ts). */
export type StreamEndStatus = EndStatus;

export type TurnStreamEvent = Base &
  (
    | { type: 'start'; question: string }
    | ({ type: 'data-tools' } & TurnTools)
    | { type: 'start-step'; step: number }
    | { type: 'text-delta'; id: string; delta: string; step?: number; attempt: number }
    | { type: 'reasoning-delta'; id: string; delta: string; step: number; attempt: number }
    | {
        type: 'data-retry';
        /** Text ids whose deltas so far are void. */
        discard: string[];
        /** The attempt that follows, 1-based, counting every call of the step. */
        attempt: number;
        reason: string;
        step?: number;
      }
    | { type: 'data-compaction'; step: number; reason: string }
    | {
        type: 'tool-input-available';
        toolCallId: string;
        /** The tool's name as Claude called it. */
        toolName: string;
        server?: string;
        tool?: string;
        /** Claude's arguments (injected values are added on the worker and never appear here). */
        input: unknown;
        step: number;
        /** One of Claude's own server tools (web search…): the API ran it, not the worker. */
        providerExecuted?: true;
      }
    | {
        type: 'data-approval';
        toolCallId: string;
        state: 'waiting' | 'approved' | 'denied' | 'timed_out';
        toolName: string;
        /** The call's arguments, with `waiting`: what the person decides on. */
        input?: unknown;
        by?: string;
        reason?: string;
        timeoutMs?: number;
      }
    | {
        /**
         * A tool call's server asked the person questions (src/core/input-requests.ts): the call
         * waits for the answers (`waiting`), then is sent again with them; the same call may be
         * asked again (a new `round`). Every event of a round carries what was asked, so its last
         * one alone tells the whole round.
         */
        type: 'data-input';
        toolCallId: string;
        /** Which round of the call's questions, from 1. */
        round: number;
        /** Answered (accepted), declined, or declined for want of an answer in `timeoutMs`. */
        state: 'waiting' | 'answered' | 'declined' | 'timed_out';
        toolName: string;
        server: string;
        tool: string;
        /** The server's questions, each with its message: a form with its schema, or a URL to visit. */
        requests: InputRequest[];
        timeoutMs?: number;
        /** Who answered or declined (the identity the decision came with). */
        by?: string;
        reason?: string;
        /** With `answered`: what the person gave (a form's content; several forms' by request key; none for a URL). */
        answer?: Record<string, unknown>;
      }
    | {
        type: 'tool-output-available';
        toolCallId: string;
        toolName: string;
        isError: boolean;
        /** As the turn's result has it (`ToolCallRecord.durationMs`): the tool's own time to answer; 0 for a call that did not run. */
        durationMs: number;
        /** Size of the result's content as JSON, in bytes. */
        resultBytes: number;
        /** The result as Claude read it, as text (an image as `[image]`), cut at {@link TOOL_OUTPUT_TEXT_LIMIT} characters. */
        output?: string;
        /** Why it did not run: repeated, denied, or refused (unknown tool, budget). */
        notRun?: 'repeated' | 'denied' | 'refused';
        attempts?: number;
        /** A server tool's result, as the API wrote it in Claude's reply (its duration is not known: 0). */
        providerExecuted?: true;
      }
    | { type: 'finish-step'; step: number }
    | {
        type: 'data-output';
        /** The answer's object: as far as its JSON has been written (`partial`), or the result's `output`. */
        output: unknown;
        partial: boolean;
      }
    | { type: 'data-answer'; response: TurnResponse }
    | { type: 'error'; errorText: string }
    | {
        type: 'finish';
        status: StreamEndStatus;
        stopReason?: TurnStopReason;
        usage?: TokenUsage;
        costUsd?: number;
      }
  );

export type TurnStreamEventType = TurnStreamEvent['type'];

/** An event as the projection builds it, before the stream numbers it. */
export type UnnumberedEvent = TurnStreamEvent extends infer E
  ? E extends unknown
    ? Omit<E, 'offset' | 'turnId'>
    : never
  : never;

/** The finish of a completed turn, from its result. */
export function finishOf(result: ChatTurnResult): UnnumberedEvent {
  return {
    type: 'finish',
    status: 'completed',
    stopReason: result.stopReason,
    usage: result.usage,
    costUsd: result.costUsd,
  };
}
