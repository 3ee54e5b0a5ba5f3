/** The result of one chat turn: the answer plus what operators need to trust and bill it. */
import type { DroppedTool, FormatMode, MessageParam, ServerUnavailable } from './contracts';
import type { ApprovalRecord } from './approvals';
import type { WAITING_APPROVAL_STATUS } from './run-status';
import type { CompactionReport } from './compaction';
import type { TurnResponse } from './response';
import type { TokenUsage } from './usage';
import type { OutputReport } from './output-spec';

export type TurnStopReason =
  /** Claude answered without asking for more tools (or, gather-then-format, without NEED MORE DATA). */
  | 'completed'
  | 'max_steps'
  | 'max_tool_calls'
  /** The turn's token budget was reached, or Claude's reply was cut at max_tokens. */
  | 'max_tokens'
  /** Claude repeated a call it had already made with the same arguments. */
  | 'repeated_call'
  | 'refusal'
  /** A loop call ended at one of the turn's `stopSequences` (its text may be cut there). */
  | 'stop_sequence'
  /** The turn's `output` did not validate against its schema, even after a repair call. */
  | 'invalid_output'
  /**
   * The conversation does not fit the model's context window, even with all prior history
   * compacted: the answer says so, and the formatter is not called (it would not fit either).
   */
  | 'context_window';

export interface ToolCallRecord {
  /** Claude's tool_use id. */
  id: string;
  step: number;
  /** MCP server and tool; undefined for a name Claude made up. */
  server?: string;
  tool?: string;
  /** The Claude-side tool name. */
  name: string;
  input: unknown;
  isError: boolean;
  /** Short error text when isError. */
  error?: string;
  /** Answered from an earlier identical call, not executed. */
  repeated?: boolean;
  /**
   * How long the tool took to answer: the attempt that answered, timed by the worker that ran it
   * (`attempts` counts the tries). A call that failed: the workflow's time from scheduling to the
   * failure, retries included. 0 for a call that did not run.
   */
  durationMs: number;
  /** Activity attempts (0 when not executed). */
  attempts: number;
}

export interface ChatTurnResult {
  response: TurnResponse;
  stopReason: TurnStopReason;
  /** Claude calls in the tool loop. */
  steps: number;
  toolCalls: ToolCallRecord[];
  /** Every Claude call of the turn, formatter included, retried attempts excluded. */
  usage: TokenUsage;
  /** From the worker's price table; 0 for unknown models. */
  costUsd: number;
  model: string;
  /** The full updated conversation: pass it as `history` to the next turn. */
  messages: MessageParam[];
  /** How the formatter produced the answer; absent with `format: false` and with `output`. */
  formatMode?: FormatMode;
  /**
   * With the turn's `output`: the answer as a JSON object that matches its schema. Absent when none
   * does (`stopReason: "invalid_output"`) or the turn stopped before its answer (refusal, context window).
   */
  output?: unknown;
  /** With the turn's `output`: how it was written, and why it is absent when it is. */
  outputReport?: OutputReport;
  /** The stop sequence a loop call ended at (`stopReason: "stop_sequence"`). */
  stopSequence?: string;
  /** Servers whose tools were not available to this turn. */
  unavailableServers: ServerUnavailable[];
  /** Tools not offered to Claude, and why. */
  droppedTools: DroppedTool[];
  /** Every call that waited for approval, with its decision. */
  approvals: ApprovalRecord[];
  /**
   * Present when the prior history had to be compacted to fit the context window: what was done.
   * A conversation replays the same stages on its history (src/core/compaction.ts).
   */
  compaction?: CompactionReport;
}

/** Live progress, answered by the `progress` query. */
export interface TurnProgress {
  /**
   * `listing-tools`: checking the input and listing tools; `asking-claude`: waiting for a Claude
   * reply; `calling-tools`: the step's tool calls run or wait for approval.
   */
  phase: 'listing-tools' | 'asking-claude' | 'calling-tools' | 'formatting' | 'done';
  step: number;
  toolCalls: Array<Pick<ToolCallRecord, 'id' | 'name' | 'step' | 'isError' | 'durationMs'> & { status: 'running' | typeof WAITING_APPROVAL_STATUS | 'ok' | 'error' }>;
  /** Calls waiting for a person's approval now. */
  pendingApprovals: ApprovalRecord[];
  usage: TokenUsage;
  costUsd: number;
  /** The Claude call waits for a Message Batch: since when (ms), and its collector's workflow id. */
  waitingMessageBatch?: { since: number; collector: string };
}
