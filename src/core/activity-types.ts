/**
 * The activity types the turn workflow schedules, by the names the worker registers them under:
 * the activities' implementations are keyed by these, and readers of a turn's history (the stream,
 * the CLI's failing calls) find its calls by them.
 */
export const ACTIVITY_TYPES = {
  /** One Claude call of the tool loop (activities/claude.ts). */
  claude: 'claude',
  /** The response formatter's Claude call (activities/claude.ts). */
  formatResponse: 'formatResponse',
  /** One MCP tool call as an activity of its own (activities/mcp.ts; local calls are named per tool). */
  callTool: 'callTool',
  /** The turn's start: its input checked, its tools listed (a local activity: activities/turn-start.ts). */
  prepareTurn: 'prepareTurn',
} as const;

/** Whether activities of `activityType` are Claude calls (a loop step's or the formatter's). */
export function isClaudeCall(activityType: string): boolean {
  return activityType === ACTIVITY_TYPES.claude || activityType === ACTIVITY_TYPES.formatResponse;
}

/** Why a step's Claude call is asked again, its reply (or failure) not used: the workflow's decision. */
export const ASKED_AGAIN = {
  'cut-inside-tool-use': { reason: 'the reply was cut inside a tool call: asked again with more tokens', compacted: false },
  'context-window-full': { reason: 'the context window is full: asked again after compacting', compacted: true },
  'prompt-too-long': { reason: 'the prompt is too long: asked again after compacting', compacted: true },
} as const satisfies Record<string, { reason: string; compacted: boolean }>;

export type AskedAgain = keyof typeof ASKED_AGAIN;
