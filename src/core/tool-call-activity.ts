/**
 * How a tool call is named in Temporal. An activity of its own is a `callTool` with the call as its
 * summary; a local one is recorded in a marker that the Web UI labels with its activity type only,
 * so a local call's activity type is the call itself (`everything · echo`), handled by the worker's
 * dynamic activity (activities/mcp.ts).
 */

/** `server · tool`: a call's summary, and a local call's activity type. */
export function toolCallName(server: string, tool: string): string {
  return `${server} · ${tool}`;
}
