/**
 * How `run`, `chat` and `watch` print a turn's stream (src/core/stream-events.ts) for a person: the
 * text as it is written, one line per tool call (`→` its input, `✓`/`✗` its end) and per approval,
 * a marker line when Claude's call is retried (text printed already cannot be taken back: the text
 * comes again after the marker), and the answer once: as it is written when it adds something to
 * what was printed, at the turn's end when it did not stream. `--events` prints each event as one
 * JSON line instead ({@link eventLine}).
 *
 * The answer is printed only when it differs from Claude's last words printed before it: a
 * formatter that writes those words again as the answer (the default formatter often does) adds
 * nothing, and the answer's deltas are held back while they repeat them; once they differ (a custom
 * formatter, an answer with more or other text) the answer is printed in full, as it is written.
 */
import { inputWaitLines } from './input-request-lines';
import type { TurnStreamEvent, TurnTools } from '../core/stream-events';
import { ANSWER_TEXT_ID } from '../core/stream-events';
import type { TurnResponse } from '../core/response';
import { oneLine } from '../core/text';
import { artifactLines } from './render';

/** Characters of a tool call's arguments shown on its line. */
const INPUT_CHARS = 80;
const DIM = '\x1b[2m';
const UNDIM = '\x1b[22m';

/** `text` dimmed on a terminal (the caller knows colour is allowed: no NO_COLOR). */
export function dimmed(text: string): string {
  return `${DIM}${text}${UNDIM}`;
}

/** Unavailable servers named on a tools line; the rest are counted. */
const UNAVAILABLE_NAMED = 5;

/**
 * What a turn offers Claude, in one line (its `data-tools` event), e.g. `tools: 12 offered
 * (everything 11, crm 1) · 3 dropped (over maxToolsPerRequest (15): 3) · unavailable: files
 * (connect failed: ECONNREFUSED)`: counts per server (Claude's own tools by name), the deferred
 * ones counted, the dropped ones counted per reason, each unavailable server with its reason (the
 * first five, then how many more); empty parts left out.
 */
export function toolsLine(tools: TurnTools): string {
  const parts: string[] = [];
  if (tools.offered.length) {
    const perServer = new Map<string, number>();
    const own: string[] = [];
    for (const t of tools.offered) {
      if (t.server === undefined) own.push(t.name);
      else perServer.set(t.server, (perServer.get(t.server) ?? 0) + 1);
    }
    const groups = [...[...perServer].map(([server, n]) => `${server} ${n}`), ...own];
    parts.push(`${tools.offered.length} offered (${groups.join(', ')})`);
  } else parts.push('none offered');
  if (tools.deferred.length) parts.push(`${tools.deferred.length} deferred`);
  if (tools.dropped.length) {
    const perReason = new Map<string, number>();
    for (const d of tools.dropped) {
      const reason = oneLine(d.reason, 60);
      perReason.set(reason, (perReason.get(reason) ?? 0) + 1);
    }
    parts.push(`${tools.dropped.length} dropped (${[...perReason].map(([reason, n]) => `${reason}: ${n}`).join(', ')})`);
  }
  if (tools.unavailable.length) {
    const named = tools.unavailable.slice(0, UNAVAILABLE_NAMED).map((u) => `${u.server} (${oneLine(u.reason, 60)})`);
    const more = tools.unavailable.length - named.length;
    parts.push(`unavailable: ${named.join(', ')}${more > 0 ? ` +${more} more` : ''}`);
  }
  return `tools: ${parts.join(' · ')}`;
}

/** An event as `--events` prints it: the event object as is, on one line. */
export function eventLine(event: TurnStreamEvent): string {
  return `${JSON.stringify(event)}\n`;
}

export interface StreamPrinterOptions {
  /** Where the printing goes (stdout). */
  write: (text: string) => void;
  /** A line with each turn's question when it starts (`watch`: the person did not type it). */
  questions?: boolean;
  /** The answer's artifacts after it (`watch`; `run` and `chat` print them with the result). */
  artifacts?: boolean;
  /** Claude's words before the answer dimmed (a terminal, a turn whose formatter writes the answer, colour allowed: not with NO_COLOR). */
  dimSteps?: boolean;
}

/** What the printer knows of one turn. */
interface TurnState {
  /** Each text id's text printed since its last retry. */
  texts: Map<string, string>;
  /** The last step text id that printed something. */
  lastStepText?: string;
  /** Tool call id → `server · tool` (or Claude's name for it). */
  tools: Map<string, string>;
  /** Text printed in this turn (a new kind of text starts a new paragraph). */
  printed: boolean;
  /** The answer is on the screen: printed, or held back as a repeat of the last step's text. */
  answerShown: boolean;
  /** The answer's deltas held back: so far they repeat the last step's text. */
  heldAnswer: string;
  /** The answer is printed as it is written (it differed from the last step's text). */
  answerLive: boolean;
}

export class StreamPrinter {
  private readonly turns = new Map<string, TurnState>();
  private atLineStart = true;
  /** The text id (with its turn) whose deltas print now, if the last thing printed was text. */
  private textKey: string | undefined;
  private anyTurn = false;

  /** Step text dimmed: asked for, and no NO_COLOR in the environment. */
  private readonly dim: boolean;

  constructor(private readonly opts: StreamPrinterOptions) {
    this.dim = opts.dimSteps === true;
  }

  /** Whether turn `turnId`'s answer has been printed (live, or at its end). */
  answerShown(turnId: string): boolean {
    return this.turns.get(turnId)?.answerShown ?? false;
  }

  /** Whether the last thing printed left a line open. */
  get midLine(): boolean {
    return !this.atLineStart;
  }

  /** Prints what `event` adds. */
  print(event: TurnStreamEvent): void {
    const turn = this.turn(event.turnId);
    switch (event.type) {
      case 'start':
        if (this.opts.questions) {
          if (this.anyTurn) this.line('');
          this.line(`you> ${oneLine(event.question, 200)}`);
        }
        this.anyTurn = true;
        return;
      case 'text-delta':
        return this.text(event.turnId, turn, event.id, event.delta);
      case 'data-retry': {
        for (const id of event.discard) if (turn.texts.has(id)) turn.texts.set(id, '');
        if (event.discard.includes(ANSWER_TEXT_ID)) turn.heldAnswer = '';
        const why = oneLine(event.reason, 200);
        this.line(event.attempt > 1 ? `↻ retrying (attempt ${event.attempt}): ${why}` : `↻ ${why}`);
        return;
      }
      case 'tool-input-available': {
        // Claude's server tools run at the API: labelled as Claude's.
        const label = event.providerExecuted ? `Claude · ${event.toolName}` : event.server && event.tool ? `${event.server} · ${event.tool}` : event.toolName;
        turn.tools.set(event.toolCallId, label);
        this.line(`→ ${label} ${oneLine(JSON.stringify(event.input ?? {}), INPUT_CHARS)}`);
        return;
      }
      case 'tool-output-available': {
        const label = turn.tools.get(event.toolCallId) ?? event.toolName;
        const attempts = event.attempts && event.attempts > 1 ? ` · ${event.attempts} attempts` : '';
        if (event.notRun === 'repeated') this.line(`↺ ${label} · repeated, not run again`);
        else if (event.notRun) this.line(`✗ ${label} · not run (${event.notRun})`);
        else if (event.providerExecuted) this.line(`${event.isError ? '✗' : '✓'} ${label} · ${oneLine(event.output ?? '', INPUT_CHARS) || 'done'}`);
        else if (event.isError) this.line(`✗ ${label} · error · ${event.durationMs} ms${attempts}`);
        else this.line(`✓ ${label} · ${event.durationMs} ms${attempts}`);
        return;
      }
      case 'data-approval': {
        const label = turn.tools.get(event.toolCallId) ?? event.toolName;
        const by = event.by ? ` by ${event.by}` : '';
        const reason = event.reason ? `: ${oneLine(event.reason, 200)}` : '';
        if (event.state === 'waiting') {
          const limit =
            event.timeoutMs !== undefined ? ` (at most ${Math.round(event.timeoutMs / 1000)} s)` : '';
          this.line(`⏸ ${label} waits for approval${limit}`);
        } else if (event.state === 'approved') this.line(`▶ ${label} approved${by}${reason}`);
        else if (event.state === 'denied') this.line(`✗ ${label} denied${by}${reason}`);
        else this.line(`✗ ${label}: no decision in time, not run`);
        return;
      }
      case 'data-input': {
        const label = turn.tools.get(event.toolCallId) ?? event.toolName;
        const by = event.by ? ` by ${event.by}` : '';
        if (event.state === 'waiting') {
          const limit = event.timeoutMs !== undefined ? ` (declined after ${Math.round(event.timeoutMs / 1000)} s)` : '';
          this.line(`? ${label} asks the person${limit}:`);
          for (const l of inputWaitLines({ turnId: event.turnId, callId: event.toolCallId, round: event.round, requests: event.requests })) this.line(l);
        } else if (event.state === 'answered') this.line(`▶ ${label} answered${by}`);
        else if (event.state === 'declined') this.line(`✗ ${label}: questions declined${by}`);
        else this.line(`✗ ${label}: no answer in time, declined`);
        return;
      }
      case 'data-answer':
        return this.answer(turn, event.response);
      case 'finish':
      case 'error':
        // How the turn ended is the command's to say (with its result, or its failure on stderr).
        this.endLine();
        return;
      default:
        // start-step, finish-step, reasoning, compaction (the retry that follows says why); the
        // turn's tools (a line on stderr: src/cli/turn-follower.ts).
        return;
    }
  }

  /** Ends an open line (before the command prints anything else). */
  endLine(): void {
    if (!this.atLineStart) this.opts.write('\n');
    this.atLineStart = true;
    this.textKey = undefined;
  }

  private turn(turnId: string): TurnState {
    let turn = this.turns.get(turnId);
    if (!turn) {
      turn = { texts: new Map(), tools: new Map(), printed: false, answerShown: false, heldAnswer: '', answerLive: false };
      this.turns.set(turnId, turn);
    }
    return turn;
  }

  private text(turnId: string, turn: TurnState, id: string, delta: string): void {
    if (id === ANSWER_TEXT_ID && !turn.answerLive) {
      if (!delta) return;
      turn.heldAnswer += delta;
      if (this.repeatsLastStep(turn, turn.heldAnswer)) return;
      // It differs: printed from its start, then as it is written.
      turn.answerLive = true;
      delta = turn.heldAnswer;
      turn.heldAnswer = '';
    }
    const key = `${turnId}\u0000${id}`;
    if (this.textKey !== key) {
      this.endLine();
      // The answer after Claude's words: a paragraph of its own.
      if (id === ANSWER_TEXT_ID && turn.printed) this.opts.write('\n');
      this.textKey = key;
    }
    if (!delta) return;
    turn.texts.set(id, (turn.texts.get(id) ?? '') + delta);
    if (id === ANSWER_TEXT_ID) turn.answerShown = true;
    else turn.lastStepText = id;
    turn.printed = true;
    const dim = this.dim && id !== ANSWER_TEXT_ID;
    this.opts.write(dim ? `${DIM}${delta}${UNDIM}` : delta);
    this.atLineStart = delta.endsWith('\n');
  }

  /** Whether `answer` (so far) is the start of the last step's text printed, or all of it. */
  private repeatsLastStep(turn: TurnState, answer: string): boolean {
    const shown = turn.lastStepText ? (turn.texts.get(turn.lastStepText) ?? '').trim() : '';
    return shown !== '' && shown.startsWith(answer.trimStart());
  }

  /**
   * The turn's answer, unless it has been printed: streamed as the answer, or it is the last step's
   * text (the formatter off, or it wrote those words again), printed as Claude wrote it; the part of
   * it not printed yet otherwise.
   */
  private answer(turn: TurnState, response: TurnResponse): void {
    const conversation = response.conversation.trim();
    if (!turn.answerLive) {
      const shown = turn.lastStepText ? (turn.texts.get(turn.lastStepText) ?? '').trim() : '';
      let rest = conversation || '(empty answer)';
      if (shown && conversation.startsWith(shown)) rest = conversation.slice(shown.length).trim();
      if (rest) {
        this.endLine();
        if (turn.printed) this.opts.write('\n');
        this.line(rest);
      }
      turn.answerShown = true;
    }
    if (this.opts.artifacts && response.artifacts.length) {
      this.endLine();
      for (const a of response.artifacts) this.line(['', ...artifactLines(a)].join('\n'));
    }
  }

  private line(text: string): void {
    this.endLine();
    this.opts.write(`${text}\n`);
  }
}

/** How long a stopped stream's call under way is waited for. */
const STOP_WAIT_MS = 1000;

/** Waits for `work`, for at most `ms`. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  if (ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** A stream followed alongside the turn, ended once the turn has ended. */
export interface FollowedStream {
  /**
   * Waits for the stream's end (its `finish`) for at most `graceMs`, then stops it; a stream that
   * broke says so on stderr, and the command goes on with its result. With 0 (the turn did not end:
   * the command stops for a reason it reports itself), stops it at once and says nothing of it.
   * Nothing is handed on after it has returned.
   */
  stop(graceMs: number): Promise<void>;
}

/**
 * Hands each event of the stream `subscribe` opens to `onEvent` until the stream ends or is
 * stopped; `subscribe` gets the signal that stops it.
 */
export function followStream<E>(
  subscribe: (signal: AbortSignal) => Promise<AsyncIterable<E> | undefined>,
  onEvent: (event: E) => void,
): FollowedStream {
  const controller = new AbortController();
  let failure: unknown;
  const done = (async () => {
    const events = await subscribe(controller.signal);
    if (!events) return;
    for await (const event of events) {
      if (controller.signal.aborted) return;
      onEvent(event);
    }
  })().catch((err: unknown) => {
    if (!controller.signal.aborted) failure = err;
  });
  return {
    async stop(graceMs) {
      await within(done, graceMs);
      controller.abort();
      // A call under way when it was stopped (a describe, a query) is not waited for long.
      await within(done, STOP_WAIT_MS);
      if (failure && graceMs > 0)
        process.stderr.write(
          `mcp-turns: the turn's stream stopped: ${(failure as Error).message ?? String(failure)}\n`,
        );
    },
  };
}
