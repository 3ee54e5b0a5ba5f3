/**
 * What the queries of a batch came to, counted from their result lines: answered in full, answered
 * in part (by stop reason), answered without a tool call a person did not approve, or failed. Each
 * line's `exitCode` is what `run` exits with for the same result, so both mean the same.
 */
import type { TurnStopReason } from '../core/turn-result';
import { EXIT, type ExitCode } from './exit-codes';

/** What counting needs of a result line (src/cli/batch-results.ts). */
export interface CountedLine {
  status: 'completed' | 'failed';
  exitCode?: ExitCode;
  stopReason?: TurnStopReason;
}

export interface BatchCounts {
  /** Exit code 0. */
  answered: number;
  /** Exit code 3: stopped by a budget, the context window, a repeated call, a refusal, a stop sequence or an invalid output. */
  partial: number;
  /** The partial answers by stop reason. */
  partialBy: Partial<Record<TurnStopReason, number>>;
  /** Exit code 4: a tool call was denied or its approval timed out. */
  notApproved: number;
  /** Exit code 1. */
  failed: number;
}

export function noCounts(): BatchCounts {
  return { answered: 0, partial: 0, partialBy: {}, notApproved: 0, failed: 0 };
}

/** A line's exit code; a line written without one (by an earlier version) is read from its status and stop reason. */
export function lineExitCode(line: CountedLine): ExitCode {
  if (line.exitCode !== undefined) return line.exitCode;
  if (line.status === 'failed') return EXIT.failed;
  return line.stopReason === undefined || line.stopReason === 'completed' ? EXIT.answered : EXIT.partial;
}

/** Counts one more line into `counts`. */
export function countLine(counts: BatchCounts, line: CountedLine): void {
  switch (lineExitCode(line)) {
    case EXIT.answered:
      counts.answered++;
      return;
    case EXIT.partial: {
      counts.partial++;
      const reason = line.stopReason ?? 'completed';
      counts.partialBy[reason] = (counts.partialBy[reason] ?? 0) + 1;
      return;
    }
    case EXIT.notApproved:
      counts.notApproved++;
      return;
    default:
      counts.failed++;
  }
}

export function countsOf(lines: readonly CountedLine[]): BatchCounts {
  const counts = noCounts();
  for (const line of lines) countLine(counts, line);
  return counts;
}

/** `1 partial (refusal)`, `3 partial (2 refusal, 1 max_steps)`. */
export function partialPart(counts: BatchCounts): string {
  const reasons = Object.entries(counts.partialBy).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  const why = reasons.length === 1 ? reasons[0]![0] : reasons.map(([reason, n]) => `${n} ${reason}`).join(', ');
  return `${counts.partial} partial (${why})`;
}
