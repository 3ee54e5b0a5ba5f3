/**
 * What `run`, `show` and `batch` make of a turn's `output` and of how its answer ended: with an
 * output schema, stdout gets the output's JSON and nothing else (the rest and any problem on
 * stderr); a stop sequence is noted on stderr; both are partial answers (exit 3), in a batch too.
 */
import type { BatchItemOutcome } from '../../src/client/batch-client';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { ZERO_USAGE } from '../../src/core/usage';
import { resultLine } from '../../src/client/result-line';
import { countsOf, partialPart } from '../../src/cli/batch-counts';
import { EXIT, exitCodeOf } from '../../src/cli/exit-codes';
import { answerNotes, runPrintout } from '../../src/cli/output-lines';
import { renderResult } from '../../src/cli/render';

const result = (over: Partial<ChatTurnResult> = {}): ChatTurnResult => ({
  response: { conversation: 'The total is 42.', artifacts: [] },
  stopReason: 'completed',
  steps: 1,
  toolCalls: [],
  usage: ZERO_USAGE,
  costUsd: 0,
  model: 'claude-test',
  messages: [],
  unavailableServers: [],
  droppedTools: [],
  approvals: [],
  ...over,
});

const output = { total: 42, lines: [{ item: 'tea', price: 42 }] };
const structured = result({ output, outputReport: { path: 'structured', calls: 1, repaired: false, notes: [] } });
const invalid = result({
  stopReason: 'invalid_output',
  outputReport: { path: 'instructed', calls: 2, repaired: false, problems: ['/total: must be number', "must have required property 'lines'"], notes: [] },
});
const opts = { turnId: 'turn-1', link: 'http://ui/turn-1', outputSchema: true };

describe('run', () => {
  it('with an output schema, stdout is the output as JSON (2 spaces), the rest of the result goes to stderr', () => {
    const printout = runPrintout(structured, opts);
    expect(printout.stdout).toBe(JSON.stringify(output, null, 2));
    expect(JSON.parse(printout.stdout!)).toEqual(output);
    expect(printout.stderr).toEqual([
      'Stop reason: completed · steps 1 · model claude-test',
      'Output: structured · 1 call',
      'Tokens: 0 in, 0 out, 0 cache read, 0 cache write · cost $0.0000',
      'Temporal UI: http://ui/turn-1',
    ]);
    expect(printout.stderr.join('\n')).not.toContain('The total is 42.');
    expect(exitCodeOf(structured)).toBe(EXIT.answered);
  });

  it('invalid_output: nothing on stdout, each problem one line on stderr naming the turn, exit code 3', () => {
    const printout = runPrintout(invalid, opts);
    expect(printout.stdout).toBeUndefined();
    expect(printout.stderr.slice(-2)).toEqual([
      'turn turn-1: the answer does not match the output schema: /total: must be number',
      "turn turn-1: the answer does not match the output schema: must have required property 'lines'",
    ]);
    expect(printout.stderr).toContain('Output: instructed · 2 calls');
    expect(exitCodeOf(invalid)).toBe(EXIT.partial);
    // Stopped before its answer: said so, nothing on stdout.
    const refused = runPrintout(result({ stopReason: 'refusal' }), opts);
    expect(refused.stdout).toBeUndefined();
    expect(refused.stderr.at(-1)).toBe('turn turn-1: no output: the turn stopped with refusal before its answer');
  });

  it('--json stays the whole result; --events prints nothing more on stdout; the notes go to stderr', () => {
    expect(runPrintout(invalid, { ...opts, json: true })).toEqual({
      stdout: JSON.stringify(invalid, null, 2),
      stderr: [
        'turn turn-1: the answer does not match the output schema: /total: must be number',
        "turn turn-1: the answer does not match the output schema: must have required property 'lines'",
      ],
    });
    expect(runPrintout(structured, { ...opts, json: true }).stdout).toBe(JSON.stringify(structured, null, 2));
    expect(runPrintout(structured, { ...opts, events: true })).toEqual({ stderr: [] });
  });

  it('a stop sequence is noted on stderr (the answer may be cut), exit code 3; without a schema stdout is the rendered result', () => {
    const stopped = result({ stopReason: 'stop_sequence', stopSequence: '\n###' });
    const printout = runPrintout(stopped, { ...opts, outputSchema: false });
    expect(printout.stderr).toEqual(['turn turn-1: the answer stopped at the stop sequence "\\n###" and may be cut there']);
    expect(printout.stdout).toMatch(/^The total is 42\.\n\nStop reason: stop_sequence "\\n###" · steps 1 · model claude-test\n/);
    expect(exitCodeOf(stopped)).toBe(EXIT.partial);
    expect(answerNotes(result({ stopReason: 'stop_sequence' }), 't', false)).toEqual(['turn t: the answer stopped at a stop sequence and may be cut there']);
    // The answer shown as it streamed is not printed again.
    expect(runPrintout(result(), { ...opts, outputSchema: false, answerShown: true }).stdout).toMatch(/^\nStop reason: completed/);
    expect(answerNotes(result(), 't', false)).toEqual([]);
  });
});

it('show: a result with an output has it as its answer, as JSON; how it was written follows the stop reason', () => {
  const shown = renderResult({ ...structured, outputReport: { path: 'structured', calls: 2, repaired: true, notes: [] } }).split('\n');
  expect(shown).toEqual([
    ...JSON.stringify(output, null, 2).split('\n'),
    '',
    'Stop reason: completed · steps 1 · model claude-test',
    'Output: structured · 2 calls (repaired)',
    'Tokens: 0 in, 0 out, 0 cache read, 0 cache write · cost $0.0000',
  ]);
  expect(renderResult(invalid)).toContain("Output: instructed · 2 calls\n  does not match the schema: /total: must be number\n  does not match the schema: must have required property 'lines'");
});

describe('batch', () => {
  const outcome = (r: ChatTurnResult): BatchItemOutcome => ({ id: 'a', workflowId: 'b-a', status: 'completed', result: r, durationMs: 10 });

  it('a line has the output when the turn has one, the problems when it ended invalid_output, the stop sequence it stopped at', () => {
    expect(resultLine(outcome(structured))).toMatchObject({ status: 'completed', exitCode: 0, stopReason: 'completed', output });
    const line = resultLine(outcome(invalid));
    expect(line).toMatchObject({ exitCode: 3, stopReason: 'invalid_output', outputProblems: ['/total: must be number', "must have required property 'lines'"] });
    expect(line).not.toHaveProperty('output');
    expect(resultLine(outcome(result({ stopReason: 'stop_sequence', stopSequence: 'END' })))).toMatchObject({ exitCode: 3, stopReason: 'stop_sequence', stopSequence: 'END' });
    expect(resultLine(outcome(result()))).not.toHaveProperty('outputProblems');
  });

  it('invalid_output and stop_sequence count as partial answers, by stop reason', () => {
    const lines = [structured, invalid, result({ stopReason: 'stop_sequence', stopSequence: 'END' }), invalid].map((r) => resultLine(outcome(r)));
    const counts = countsOf(lines);
    expect(counts).toMatchObject({ answered: 1, partial: 3, partialBy: { invalid_output: 2, stop_sequence: 1 } });
    expect(partialPart(counts)).toBe('3 partial (2 invalid_output, 1 stop_sequence)');
    // A line written without an exit code is read from its stop reason.
    expect(countsOf([{ status: 'completed', stopReason: 'stop_sequence' }]).partial).toBe(1);
  });
});
