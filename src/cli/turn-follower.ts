/**
 * What `run` and `chat` do with each event of a turn they follow (`followTurn`): on a terminal,
 * print its text and tool calls as they are written; with `--events`, write each stream event as a
 * JSON line; else, when asked, print a progress line per step and ended tool call. Whatever is
 * printed, a failed attempt goes to stderr and a call waiting for approval goes to its turn's
 * {@link ApprovalPrompt}; on a terminal, what a turn offers Claude is one line on stderr at its start.
 *
 * An approval question comes after the lines that describe its call: it is asked once the lines
 * of the events read with it are printed (the stream hands on the events it has read one after the
 * other, without waiting on anything: they are all printed before the event loop's next turn), and
 * while it is open, the lines of the events that come are held and printed once it is answered (or
 * dropped), so that none is written over it. `--events` lines are not held: they are for programs.
 */
import type { FollowedEvent } from '../client/subscribe';
import { ApprovalPrompt, askOnStderr, type ApprovalPromptOptions } from './approval-prompt';
import type { ProgressLines } from './progress-lines';
import { eventLine, toolsLine, type StreamPrinter } from './stream-printer';

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
  /** Where each turn's tools line goes (`data-tools`, {@link toolsLine}: a terminal's stderr); none: not printed. */
  tools?: ((line: string) => void) | undefined;
}

/** How long a followed turn's stream may take to reach its end after the turn's result is in. */
export const STREAM_END_GRACE_MS = 10_000;

export class TurnFollower {
  private readonly prompts = new Map<string, ApprovalPrompt>();
  /** Waiting calls read and not yet handed to their prompt (they wait for the lines read with them). */
  private handing: Promise<void> = Promise.resolve();
  /** A question is open: the lines of the events that come are held. */
  private asking = false;
  /** The events read while a question was open, printed once it has closed. */
  private held: FollowedEvent[] = [];

  constructor(private readonly opts: TurnFollowerOptions) {}

  readonly onEvent = (event: FollowedEvent): void => {
    if (this.opts.events && event.type !== 'failing-call') process.stdout.write(eventLine(event));
    else if (this.asking) this.held.push(event);
    else this.show(event);
    if (event.type === 'data-approval') {
      const prompt = this.promptOf(event.turnId);
      if (event.state === 'waiting') {
        const call = { callId: event.toolCallId, name: event.toolName, input: event.input };
        this.handing = this.handing.then(() => new Promise<void>((resolve) => setImmediate(() => resolve(prompt.waiting(call)))));
      } else prompt.decided(event.toolCallId);
    }
  };

  /** Resolves once every waiting call handed on has been asked about (or given up). */
  async settled(): Promise<void> {
    await this.handing;
    await Promise.all([...this.prompts.values()].map((p) => p.settled()));
  }

  /** Prints what `event` adds for a person: the printer's text, else progress lines; a failed attempt's line. */
  private show(event: FollowedEvent): void {
    const { printer, progress } = this.opts;
    if (event.type === 'failing-call') {
      printer?.endLine();
      this.opts.warn(event.line);
    } else if (event.type === 'data-tools') {
      if (!this.opts.tools) return;
      printer?.endLine();
      this.opts.tools(toolsLine(event));
    } else if (printer) printer.print(event);
    else if (progress) for (const line of progress.lines.next(event)) progress.write(line);
  }

  /** Asks `question`, holding the lines of the events that come while it is open. */
  private readonly ask = async (question: string, signal: AbortSignal): Promise<string | undefined> => {
    this.opts.printer?.endLine();
    this.asking = true;
    try {
      return await (this.opts.approvals.ask ?? askOnStderr)(question, signal);
    } finally {
      this.asking = false;
      const held = this.held;
      this.held = [];
      for (const event of held) this.show(event);
    }
  };

  private promptOf(turnId: string): ApprovalPrompt {
    let prompt = this.prompts.get(turnId);
    if (!prompt) this.prompts.set(turnId, (prompt = new ApprovalPrompt({ ...this.opts.approvals, turnId, ask: this.ask })));
    return prompt;
  }
}
