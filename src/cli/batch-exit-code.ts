/**
 * The exit code of `mcp-turns batch`. Each query's result has the code `run` would exit with for it
 * (exitCodeOf: 0 answered, 3 partial, 4 not approved), a failed query 1, and input lines skipped
 * (not JSON, no question, a duplicate id) make 2. The worst wins, in this order:
 *
 *   1 failed  >  4 not approved  >  3 partial  >  2 lines skipped  >  0 every query answered
 *
 * Worse is further from an answer: a failed query has none, a not-approved one was answered without
 * a call a person refused, a partial one was cut short. Skipped lines come last: they were reported
 * by line number before anything ran, and what the queries that did run came to matters more to
 * the script reading the code. docs/cli.md states the same order.
 */
import type { BatchCounts } from './batch-counts';
import { EXIT, type ExitCode } from './exit-codes';

export function batchExitCode(counts: BatchCounts, skippedLines: number): ExitCode {
  if (counts.failed) return EXIT.failed;
  if (counts.notApproved) return EXIT.notApproved;
  if (counts.partial) return EXIT.partial;
  if (skippedLines) return EXIT.badInput;
  return EXIT.answered;
}
