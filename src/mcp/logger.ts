/**
 * The structured logger the MCP layer writes to. The worker passes Temporal's Runtime logger; tests
 * pass a recorder. Messages are constant strings; what varies goes into fields.
 */
import type { Redactor } from './redaction';

/** A structured logger: a constant message plus fields. */
export interface McpLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Drops everything (the default when no logger is given). */
export const silentLogger: McpLogger = { debug() {}, info() {}, warn() {}, error() {} };

function redactValue(value: unknown, redactor: Redactor): unknown {
  if (typeof value === 'string') return redactor.redact(value);
  if (value instanceof Error) return redactor.redact(value.message);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redactor));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, redactor)]));
  }
  return value;
}

/**
 * A logger for one server: every line carries `server`, and the server's configured secrets are
 * replaced in the message and in every string field (server stderr and error text included).
 */
export function serverLogger(log: McpLogger, server: string, redactor: Redactor): McpLogger {
  const wrap =
    (level: keyof McpLogger) =>
    (message: string, fields: Record<string, unknown> = {}): void =>
      log[level](redactor.redact(message), {
        server,
        ...(redactValue(fields, redactor) as Record<string, unknown>),
      });
  return { debug: wrap('debug'), info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}
