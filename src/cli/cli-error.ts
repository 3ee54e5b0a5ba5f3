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
