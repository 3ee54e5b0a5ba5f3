/**
 * The progress lines `mcp-turns run` and `chat` print while a turn runs, from its progress query
 * asked again and again: each tool call once it has ended, then a line when Claude is asked for a
 * new step or the answer is being formatted. A tool call's line comes before the next step's.
 */
import type { TurnProgress } from '../core/turn-result';
import { WAITING_APPROVAL_STATUS } from '../core/run-status';
import { toolCallLine } from './render';

export class ProgressLines {
  /** The tool calls printed so far, as `<turn id>:<call id>`. */
  readonly printedCalls = new Set<string>();
  private lastPhase = '';

  /** @param phaseIndent goes before the step and formatting lines (a tool call's line is indented already). */
  constructor(private readonly phaseIndent = '') {}

  /** The lines the progress `p` of turn `turnId` adds to those returned before. */
  next(turnId: string, p: TurnProgress): string[] {
    const lines: string[] = [];
    for (const c of p.toolCalls) {
      const key = `${turnId}:${c.id}`;
      if (c.status === 'running' || c.status === WAITING_APPROVAL_STATUS || this.printedCalls.has(key)) continue;
      this.printedCalls.add(key);
      lines.push(toolCallLine(c));
    }
    const phase = `${turnId}:${p.phase}:${p.step}`;
    if (phase !== this.lastPhase) {
      this.lastPhase = phase;
      if (p.phase === 'asking-claude') lines.push(`${this.phaseIndent}Claude · step ${p.step}`);
      else if (p.phase === 'formatting') lines.push(`${this.phaseIndent}formatting the answer`);
    }
    return lines;
  }
}
