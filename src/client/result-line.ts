/**
 * One line of a batch's results: what a query came to, as `mcp-turns batch` writes it to its
 * results file, `mcp-turns batch results` reads it back from Temporal, and `serve` streams it
 * (`GET /v1/batches/{name}/results`): one definition, so all three write the same line.
 */
import type { BatchItemOutcome } from './batch-client';
import { EXIT, exitCodeOf, type ExitCode } from '../core/exit-codes';
import type { TurnStopReason } from '../core/turn-result';
import type { TokenUsage } from '../core/usage';

export interface ResultLine {
  id: string;
  /** `completed`: the turn ended (in full or in part, see `exitCode`); kept by a rerun. `failed`: run again by a rerun. */
  status: 'completed' | 'failed';
  /** What `run` exits with for the same result: 0 answered, 3 partial, 4 not approved, 1 failed. */
  exitCode?: ExitCode;
  answer?: string;
  /** The turn's output: its answer as JSON matching the turn's output schema. */
  output?: unknown;
  /** Why the answer does not match the output schema (`stopReason: "invalid_output"`). */
  outputProblems?: string[];
  stopReason?: TurnStopReason;
  /** The stop sequence the turn stopped at (`stopReason: "stop_sequence"`): its answer may be cut there. */
  stopSequence?: string;
  usage?: TokenUsage;
  costUsd?: number;
  toolCalls?: number;
  durationMs?: number;
  error?: string;
  workflowId: string;
}

export function resultLine(o: BatchItemOutcome): ResultLine {
  const exitCode = o.status === 'completed' && o.result ? exitCodeOf(o.result) : EXIT.failed;
  const line: ResultLine = { id: o.id, status: o.status, exitCode, workflowId: o.workflowId };
  if (o.result) {
    line.answer = o.result.response.conversation;
    if (o.result.output !== undefined) line.output = o.result.output;
    if (o.result.outputReport?.problems?.length) line.outputProblems = o.result.outputReport.problems;
    line.stopReason = o.result.stopReason;
    if (o.result.stopSequence !== undefined) line.stopSequence = o.result.stopSequence;
    line.usage = o.result.usage;
    line.costUsd = o.result.costUsd;
    line.toolCalls = o.result.toolCalls.length;
  }
  if (o.durationMs !== undefined) line.durationMs = o.durationMs;
  if (o.error) line.error = o.error;
  return line;
}
