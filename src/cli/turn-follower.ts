/**
 * What `run` and `chat` do with each event of a turn they follow (`followTurn`): on a terminal,
 * print its text and tool calls as they are written; with `--events`, write each stream event as a
 * JSON line; else, when asked, print a progress line per step and ended tool call. Whatever is
 * printed, a failed attempt goes to stderr and a call waiting for approval goes to its turn's
 * {@link ApprovalPrompt}.
 */
import type { FollowedEvent } from '../client/subscribe';
import { ApprovalPrompt, type ApprovalPromptOptions } from './approval-prompt';
import type { ProgressLines } from './progress-lines';
import { eventLine, type StreamPrinter } from './stream-printer';

export interface TurnFollowerOptions {
  /** The text and tool calls as they are written (a terminal's stdout). */
  printer?: StreamPrinter | undefined;
  /** Each stream event as a JSON line on stdout (`--events`). */
  events?: boolean;
  /** Progress lines, and where they go (when neither of the above prints the turn). */
  progress?: { lines: ProgressLines; write: (line: string) => void } | undefined;
  /** How a turn's waiting calls are asked about (its prompt is made on its first waiting call). */
  approvals: Omit<ApprovalPromptOptions, 'turnId'>;
  /** Where a failed attempt's line goes. */
  warn: (line: string) => void;
}

/** How long a followed turn's stream may take to reach its end after the turn's result is in. */
export const STREAM_END_GRACE_MS = 10_000;

export class TurnFollower {
  private readonly prompts = new Map<string, ApprovalPrompt>();

  constructor(private readonly opts: TurnFollowerOptions) {}

  readonly onEvent = (event: FollowedEvent): void => {
    const { printer, progress } = this.opts;
    if (event.type === 'failing-call') {
      printer?.endLine();
      this.opts.warn(event.line);
      return;
    }
    if (printer) printer.print(event);
    else if (this.opts.events) process.stdout.write(eventLine(event));
    else if (progress) for (const line of progress.lines.next(event)) progress.write(line);
    if (event.type === 'data-approval') {
      const prompt = this.promptOf(event.turnId);
      if (event.state === 'waiting') prompt.waiting({ callId: event.toolCallId, name: event.toolName, input: event.input });
      else prompt.decided(event.toolCallId);
    }
  };

  /** Resolves once every waiting call handed on has been asked about (or given up). */
  async settled(): Promise<void> {
    await Promise.all([...this.prompts.values()].map((p) => p.settled()));
  }

  private promptOf(turnId: string): ApprovalPrompt {
    let prompt = this.prompts.get(turnId);
    if (!prompt) this.prompts.set(turnId, (prompt = new ApprovalPrompt({ ...this.opts.approvals, turnId })));
    return prompt;
  }
}
