/** An error the CLI prints as one line (no stack) before exiting with `exitCode`. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
    /** Extra lines (e.g. one per config problem). */
    readonly lines: string[] = [],
  ) {
    super(message);
  }
}

/**
 * `fn()`, with an error of one of `kinds` (bad input the person can fix: a config, a flag, an
 * environment variable) turned into a one-line CliError with exit code 2, and the problems it lists
 * that its message does not name as extra lines. Any other error goes on as it is.
 */
export function asBadInput<T>(fn: () => T, ...kinds: Array<abstract new (...args: never[]) => Error>): T {
  try {
    return fn();
  } catch (err) {
    if (kinds.some((kind) => err instanceof kind)) {
      const message = (err as Error).message;
      const problems = (err as { problems?: unknown }).problems;
      // A problem the message already names is not printed again below it.
      const lines = Array.isArray(problems) ? problems.map(String).filter((p) => !message.includes(p)) : [];
      throw new CliError(message, 2, lines);
    }
    throw err;
  }
}

export function parsePort(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new CliError(`${flag} must be a port number (1-65535), got "${value}"`, 2);
  return n;
}

export function parsePositiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${flag} must be a positive integer, got "${value}"`, 2);
  return n;
}
