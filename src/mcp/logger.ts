/** The structured logger the MCP layer writes to (the worker passes Temporal's Runtime logger). */
export interface McpLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: McpLogger = { debug() {}, info() {}, warn() {}, error() {} };
