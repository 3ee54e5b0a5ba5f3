/**
 * While payloads are encrypted, a worker's log lines keep failures' types and drop their messages
 * and stacks: a failure's message can quote a tool's output or Claude's text, and logs are not
 * encrypted. The failure itself keeps its message, encrypted (src/encryption/).
 */
import { formatWithOptions } from 'node:util';
import type { LogEntry } from '@temporalio/worker';

const format = formatWithOptions.bind(undefined, { colors: process.stderr.isTTY === true });

/** What is left of an error in a log line: its name and failure type. */
function redacted(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const type = (value as { type?: unknown }).type;
  return `${value.name}${typeof type === 'string' && type ? ` (${type})` : ''}: message withheld while encryption is on`;
}

/** The entry with every Error among its metadata's values reduced to its name and type. */
export function withFailureMessagesWithheld(entry: LogEntry): LogEntry {
  if (!entry.meta) return entry;
  const meta = Object.fromEntries(Object.entries(entry.meta).map(([k, v]) => [k, redacted(v)]));
  return { ...entry, meta };
}

/** Writes an entry as Temporal's default logger does (stderr, one line), failure messages withheld. */
export function logWithFailureMessagesWithheld(entry: LogEntry): void {
  const { level, timestampNanos, message, meta } = withFailureMessagesWithheld(entry);
  const date = new Date(Number(timestampNanos / 1_000_000n));
  process.stderr.write(`${format(date)} [${level}] ${message}${meta === undefined ? '' : ` ${format(meta)}`}\n`);
}
