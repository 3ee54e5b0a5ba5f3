/** A value as a string literal in a visibility query (`McpTurnsBatch = "nightly"`), escaped. */
export function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
