/**
 * The lines a person types (or pipes) into `chat`, read by one reader for the whole session: every
 * line is queued as it comes, so lines pasted at once, or typed while a message is answered, are
 * each sent in turn and none is lost. On a terminal the reader prompts `you> ` only when it waits
 * for a line, and asks approval questions (a question takes the next line typed after it, never a
 * queued message).
 *
 * On a terminal the reader owns Ctrl-C and Ctrl-D (the terminal is in raw mode while it reads):
 * Ctrl-D on an empty line ends the input, Ctrl-C at the `you> ` prompt too; Ctrl-C anywhere else (a
 * message being answered, an approval question) calls `onInterrupt`.
 */
import readline from 'node:readline';

export const PROMPT = 'you> ';

export interface InputLinesOptions {
  /** Ctrl-C on a terminal while no message line is awaited. */
  onInterrupt: () => void;
}

export class InputLines {
  /** Stdin is a terminal: prompts and questions are shown, Ctrl-C and Ctrl-D come as keys. */
  readonly terminal = process.stdin.isTTY === true;
  private readonly rl: readline.Interface;
  /** Lines read and not taken yet, oldest first. */
  private readonly queued: string[] = [];
  private ended = false;
  /** The wait of {@link next} for a line. */
  private waiting: ((line: string | undefined) => void) | undefined;
  /** An open {@link question}: it takes the next line before any wait of {@link next}. */
  private asking: ((answer: string | undefined) => void) | undefined;

  constructor(private readonly opts: InputLinesOptions) {
    this.rl = readline.createInterface({
      input: process.stdin,
      ...(this.terminal ? { output: process.stderr } : {}),
      terminal: this.terminal,
    });
    this.rl.setPrompt('');
    this.rl.on('line', (line) => this.take(line));
    this.rl.on('close', () => this.end());
    this.rl.on('SIGINT', () => (this.waiting && !this.asking ? this.rl.close() : this.opts.onInterrupt()));
  }

  private take(line: string): void {
    const answer = this.asking ?? this.waiting;
    if (!answer) {
      this.queued.push(line);
      return;
    }
    this.rl.setPrompt('');
    if (this.asking) this.asking = undefined;
    else this.waiting = undefined;
    answer(line);
  }

  private end(): void {
    this.ended = true;
    const open = [this.asking, this.waiting];
    this.asking = this.waiting = undefined;
    // The next output starts on a line of its own, not after the prompt.
    if (this.terminal && open.some(Boolean)) process.stderr.write('\n');
    for (const answer of open) answer?.(undefined);
  }

  /**
   * The next line: the oldest queued (shown after the prompt on a terminal, so each answer follows
   * its message), else the next one read (`you> ` shown while it waits); undefined at the end of
   * the input.
   */
  next(): Promise<string | undefined> {
    const line = this.queued.shift();
    if (line !== undefined) {
      if (this.terminal) process.stderr.write(`${PROMPT}${line}\n`);
      return Promise.resolve(line);
    }
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiting = resolve;
      if (this.terminal) {
        this.rl.setPrompt(PROMPT);
        this.rl.prompt(true);
      }
    });
  }

  /**
   * Asks `question` on the terminal: the next line typed after it; undefined without a terminal,
   * at the end of the input, or when `signal` ends the wait first.
   */
  question(question: string, signal: AbortSignal): Promise<string | undefined> {
    if (!this.terminal || this.ended || signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        if (this.asking !== settle) return;
        this.asking = undefined;
        this.rl.setPrompt('');
        process.stderr.write('\n');
        resolve(undefined);
      };
      const settle = (answer: string | undefined): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      this.asking = settle;
      signal.addEventListener('abort', onAbort, { once: true });
      this.rl.setPrompt(question);
      this.rl.prompt(true);
    });
  }

  /** Stops reading (a terminal goes back to its own mode); a wait still open gets undefined. */
  close(): void {
    this.rl.close();
  }
}
