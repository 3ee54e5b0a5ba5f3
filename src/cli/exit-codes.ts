/**
 * The exit codes of every mcp-turns command: one table, printed by `--help` and in docs/cli.md.
 * A script can trust them: 0 only when the turn (or every query of a batch) was answered in full.
 */
import type { ChatTurnResult } from '../core/turn-result';

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

/** The table `--help` prints after each command's own help, and docs/cli.md repeats. */
export const EXIT_CODES_HELP = [
  'Exit codes (every command):',
  '  0    answered (batch: every line ran and every query was answered in full)',
  '  1    the turn or a query failed, or the command could not do its work',
  '  2    bad input (a flag, a file, a config, an empty question, an id or name that names nothing):',
  '       nothing was started; batch: input lines were skipped, the rest ran',
  '  3    partial answer: stopped by a budget (--max-steps, tokens, tool calls), the context window,',
  '       a repeated call, a refusal, a --stop-sequence, or an answer not matching --output-schema',
  '  4    a tool call was denied or its approval timed out',
  '  130  interrupted by Ctrl-C while the turn goes on (watch ID follows it, cancel ID stops it)',
  '  141  the output was closed (`| head`): nothing more was written (the work goes on)',
  'A batch exits with the worst of its queries\' codes and its skipped lines: 1, then 4, then 3, then 2.',
].join('\n');

/** The exit code a finished turn's result calls for: a denial first, then a partial answer. */
export function exitCodeOf(result: Pick<ChatTurnResult, 'stopReason' | 'approvals'>): ExitCode {
  if ((result.approvals ?? []).some((a) => a.outcome === 'denied' || a.outcome === 'timed_out')) return EXIT.notApproved;
  return result.stopReason === 'completed' ? EXIT.answered : EXIT.partial;
}
