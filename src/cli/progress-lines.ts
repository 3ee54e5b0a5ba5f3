/**
 * The progress lines `mcp-turns run` and `chat` print while a turn runs, when its text is not
 * printed as it streams: a line when Claude is asked for a step, each tool call once it has ended,
 * and a line when the answer starts to be written. Made from the turn's stream, in its order.
 */
import { ANSWER_TEXT_ID, type TurnStreamEvent } from '../core/stream-events';
import { toolCallLine } from './render';

export class ProgressLines {
  /** The tool calls printed so far, as `<turn id>:<call id>`. */
  readonly printedCalls = new Set<string>();
  /** Each announced call's step and arguments, by `<turn id>:<call id>`. */
  private readonly announced = new Map<string, { step: number; input: unknown }>();
  private readonly formatting = new Set<string>();

  /** @param phaseIndent goes before the step and formatting lines (a tool call's line is indented already). */
  constructor(private readonly phaseIndent = '') {}

  /** The lines `event` adds. */
  next(event: TurnStreamEvent): string[] {
    switch (event.type) {
      case 'start-step':
        return [`${this.phaseIndent}Claude · step ${event.step}`];
      case 'tool-input-available':
        this.announced.set(`${event.turnId}:${event.toolCallId}`, { step: event.step, input: event.input });
        return [];
      case 'tool-output-available': {
        const key = `${event.turnId}:${event.toolCallId}`;
        const call = this.announced.get(key);
        if (!call || this.printedCalls.has(key)) return [];
        this.printedCalls.add(key);
        return [
          toolCallLine({
            name: event.toolName,
            step: call.step,
            input: call.input,
            isError: event.isError,
            durationMs: event.durationMs,
            repeated: event.notRun === 'repeated',
            ...(event.isError && event.output ? { error: event.output } : {}),
          }),
        ];
      }
      case 'text-delta':
        if (event.id !== ANSWER_TEXT_ID || this.formatting.has(event.turnId)) return [];
        this.formatting.add(event.turnId);
        return [`${this.phaseIndent}formatting the answer`];
      default:
        return [];
    }
  }
}
