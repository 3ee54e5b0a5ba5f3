/**
 * What `run` prints of a finished turn, and the notes `run` and `chat` print about how its answer
 * ended. With an output schema (`--output-schema`), stdout gets the turn's `output` as JSON and
 * nothing else: the rest of the result, and why there is no output when there is none, go to
 * stderr. A turn stopped at a stop sequence is said to be so on stderr, whatever stdout gets.
 */
import type { ChatTurnResult } from '../core/turn-result';
import { droppedToolsLine, outputJson, renderResult } from './render';

/** The turn was asked for an output (its schema given now, or its result says how its output was written). */
export function expectsOutput(result: Pick<ChatTurnResult, 'output' | 'outputReport'>, schemaGiven: boolean): boolean {
  return schemaGiven || result.output !== undefined || result.outputReport !== undefined;
}

/**
 * The lines (for stderr) on how turn `turnId`'s answer ended, when it calls for any: the stop
 * sequence it stopped at (its text may be cut there); with an output asked for (`structured`) and
 * none given, why: each problem of an answer that does not match the schema (`invalid_output`), or
 * the stop reason that came before an answer.
 */
export function answerNotes(
  result: Pick<ChatTurnResult, 'stopReason' | 'stopSequence' | 'output' | 'outputReport'>,
  turnId: string,
  structured: boolean,
): string[] {
  const notes: string[] = [];
  if (result.stopReason === 'stop_sequence') {
    const at = result.stopSequence !== undefined ? `the stop sequence ${JSON.stringify(result.stopSequence)}` : 'a stop sequence';
    notes.push(`turn ${turnId}: the answer stopped at ${at} and may be cut there`);
  }
  if (structured && result.output === undefined) {
    if (result.stopReason === 'invalid_output') {
      const problems = result.outputReport?.problems ?? [];
      if (!problems.length) notes.push(`turn ${turnId}: no output: the answer does not match the output schema`);
      for (const problem of problems) notes.push(`turn ${turnId}: the answer does not match the output schema: ${problem}`);
    } else notes.push(`turn ${turnId}: no output: the turn stopped with ${result.stopReason} before its answer`);
  }
  return notes;
}

/** How `run` prints the result. */
export interface RunPrintOptions {
  turnId: string;
  /** The turn's link in the Temporal UI. */
  link: string;
  /** `--output-schema` was given. */
  outputSchema: boolean;
  /** `--json`: the whole result on stdout. */
  json?: boolean;
  /** `--events`: stdout had the stream; nothing more goes there. */
  events?: boolean;
  /** The answer's text was printed as it streamed (a terminal): not again. */
  answerShown?: boolean;
}

/** What `run` prints once its turn has ended: its lines on stderr, then what stdout gets (one write, if any). */
export interface RunPrintout {
  stdout?: string;
  stderr: string[];
}

/**
 * What `run` prints once its turn has ended. `--json`: the whole result on stdout; `--events`:
 * nothing more on stdout. With an output schema: the output's JSON on stdout (nothing when there is
 * none), the rest of the result on stderr. Else the rendered result on stdout. The notes on how the
 * answer ended ({@link answerNotes}) go to stderr in every case, and so do the tools not offered
 * to Claude when stdout cannot have them (`--json`, `--events`).
 */
export function runPrintout(result: ChatTurnResult, opts: RunPrintOptions): RunPrintout {
  const structured = expectsOutput(result, opts.outputSchema);
  const notes = answerNotes(result, opts.turnId, structured);
  const dropped = droppedToolsLine(result.droppedTools ?? []);
  if (opts.events || opts.json) {
    const stderr = [...(dropped ? [dropped] : []), ...notes];
    return opts.json ? { stdout: JSON.stringify(result, null, 2), stderr } : { stderr };
  }
  if (!structured) return { stdout: renderResult(result, opts.link, { answer: !opts.answerShown }), stderr: notes };
  // The rest of the result as a terminal shows it, without the answer (stdout has it) or the blank lines before it.
  const rest = renderResult(result, opts.link, { answer: false }).split('\n');
  while (rest[0] === '') rest.shift();
  return { ...(result.output !== undefined ? { stdout: outputJson(result.output) } : {}), stderr: [...rest, ...notes] };
}
