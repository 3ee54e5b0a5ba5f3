/**
 * The checks of a turn's request controls that need more than its schema: against its model and
 * thinking (the client runs them before it starts a turn, the turn's start again with the worker's
 * defaults applied), and against the tools the turn offers (its start, once they are listed). Each
 * problem is one line naming the field and the fix. Sandbox-safe.
 */
import type { ToolCatalog } from './contracts';
import { effortProblem } from './model-capabilities';
import { forcesToolUse, loopToolChoiceOf, type Effort, type ToolChoiceInput } from './request-controls';
import { serverToolName } from './tool-patterns';

/** What the checks read of a turn's input. */
export interface ControlledTurn {
  model?: string;
  thinking?: unknown;
  effort?: Effort;
  toolChoice?: ToolChoiceInput;
}

/** Problems of the controls against the turn's model and thinking. */
export function requestControlProblems(turn: ControlledTurn): string[] {
  const problems: string[] = [];
  if (turn.toolChoice !== undefined && turn.thinking !== undefined && forcesToolUse(loopToolChoiceOf(turn.toolChoice))) {
    problems.push('toolChoice: forcing a tool ("any" or a named tool) is refused by the API with thinking on: use "auto", or leave thinking off');
  }
  if (turn.effort !== undefined && turn.model !== undefined) {
    const problem = effortProblem(turn.model, turn.effort);
    if (problem) problems.push(`effort: ${problem}`);
  }
  return problems;
}

/** The tool a `toolChoice` names (`server__tool`, or the name Claude sees), as the caller wrote it; undefined: it names none. */
export function namedTool(choice: ToolChoiceInput | undefined): string | undefined {
  if (choice === undefined) return undefined;
  const loop = loopToolChoiceOf(choice);
  return loop.type === 'tool' ? loop.name : undefined;
}

/** The Claude name of the offered tool `name` stands for, or undefined when the turn does not offer it. */
export function offeredToolName(catalog: ToolCatalog, name: string): string | undefined {
  const direct = catalog.tools.find((t) => 'name' in t && t.name === name);
  if (direct && 'name' in direct) return direct.name;
  return Object.entries(catalog.targets).find(([, target]) => serverToolName(target.server, target.tool) === name)?.[0];
}

/** Why the turn cannot force `name`: it does not offer it. */
export function notOfferedProblem(catalog: ToolCatalog, name: string): string {
  const offered = catalog.tools.map((t) => ('name' in t ? t.name : undefined)).filter((n): n is string => n !== undefined);
  const sample = offered.slice(0, 10).join(', ');
  return `toolChoice: the turn does not offer a tool "${name}" (offered: ${sample || 'none'}${offered.length > 10 ? ', …' : ''}): name one of them as server__tool, or check the turn's servers, toolset and allow/deny lists`;
}
