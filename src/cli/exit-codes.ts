/**
 * The exit codes of every mcp-turns command: the codes themselves are the core's (a batch's result
 * line carries one too: src/core/exit-codes.ts); this is their table, printed by `--help` and in
 * docs/cli.md.
 */
export { EXIT, exitCodeOf, type ExitCode } from '../core/exit-codes';

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
