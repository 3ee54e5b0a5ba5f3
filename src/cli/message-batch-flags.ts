/**
 * `--message-batches` and `--message-batch-deadline` of `mcp-turns batch`: every Claude call of the
 * batch through Anthropic's Message Batches API, and how long a request may wait for its answer. A
 * bad value, or a deadline without `--message-batches`, is one line naming the flag, exit code 2.
 */
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';

/** The flags as commander gives them. */
export interface MessageBatchFlags {
  messageBatches?: boolean;
  messageBatchDeadline?: string;
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** The shortest deadline a turn takes (its input's `messageBatches.deadlineMs`). */
const MIN_DEADLINE_MS = 1000;

const DEADLINE_FORMS = 'a duration such as 90s, 30m, 2h or 24h, or milliseconds';

/** Milliseconds of `90s`, `30m`, `2h`, `1500ms` or a bare number of milliseconds; undefined when it is none of those. */
export function parseDurationMs(value: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!m) return undefined;
  const ms = Math.round(Number(m[1]) * UNIT_MS[(m[2] ?? 'ms') as keyof typeof UNIT_MS]);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/**
 * The batch's `messageBatches` option: undefined without `--message-batches`; the deadline only
 * when given (a turn's default is the API's own, 24 h).
 */
export function messageBatchesOf(flags: MessageBatchFlags): { deadlineMs?: number } | undefined {
  const deadline = flags.messageBatchDeadline;
  if (deadline !== undefined && !flags.messageBatches) {
    throw new CliError(
      '--message-batch-deadline needs --message-batches: it is the deadline of each Message Batch request',
      EXIT.badInput,
    );
  }
  if (!flags.messageBatches) return undefined;
  if (deadline === undefined) return {};
  const ms = parseDurationMs(deadline);
  if (ms === undefined || ms < MIN_DEADLINE_MS) {
    throw new CliError(
      `--message-batch-deadline must be ${DEADLINE_FORMS}, at least 1 s; got "${deadline}"`,
      EXIT.badInput,
    );
  }
  return { deadlineMs: ms };
}
