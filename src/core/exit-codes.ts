/**
 * What each outcome is worth as an exit code: what `mcp-turns` exits with, and what a batch's
 * result line carries as its `exitCode` (written by the CLI, the client API and `serve` alike).
 * A script can trust them: 0 only when the turn (or every query of a batch) was answered in full.
 * The CLI's help table of them is src/cli/exit-codes.ts.
 */
import type { ChatTurnResult } from './turn-result';

export const EXIT = {
  /** The turn was answered (a batch: every query was). */
  answered: 0,
  /** The turn or a batch query failed, or the command could not do its work (a server down). */
  failed: 1,
  /** Bad input: a flag, a file, a config, a question. Nothing was started. */
  badInput: 2,
  /** An id or a name that names nothing (no such turn, conversation, batch or server): bad input too. */
  notFound: 2,
  /**
   * The turn stopped before a full answer: a budget, the context window, a repeated call, a refusal,
   * a stop sequence, or an answer that does not match its output schema.
   */
  partial: 3,
  /** A tool call was denied by a person, or its approval timed out. */
  notApproved: 4,
  /** Interrupted (Ctrl-C) while the turn goes on: `mcp-turns watch ID` follows it, `cancel ID` stops it. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code a finished turn's result calls for: a denial first, then a partial answer. */
export function exitCodeOf(result: Pick<ChatTurnResult, 'stopReason' | 'approvals'>): ExitCode {
  if ((result.approvals ?? []).some((a) => a.outcome === 'denied' || a.outcome === 'timed_out')) return EXIT.notApproved;
  return result.stopReason === 'completed' ? EXIT.answered : EXIT.partial;
}
