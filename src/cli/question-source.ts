/**
 * Where `run` takes its question from: the argument, `-` (all of stdin, up to its end: Ctrl-D on a
 * terminal), or `--file <path>`. Exactly one; a question read from stdin or a file is used whole (its
 * lines kept), less the blank around it.
 * Anything else is one line with exit code 2, before anything is started.
 */
import fs from 'node:fs';
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';

const HOW = 'give it as the argument, `-` to read it from stdin, or --file <path>';

/** All of stdin, as text. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The question `run` was given: see the module comment. `listFlags` are the flags given that take a
 * list (`--allow a b`): a question after one of them is read as one more of its values.
 */
export async function readQuestion(
  argument: string | undefined,
  file: string | undefined,
  listFlags: string[] = [],
): Promise<string> {
  if (argument !== undefined && file !== undefined)
    throw new CliError(`a question and --file ${file}: ${HOW}, not two of them`, EXIT.badInput);
  let question: string;
  let from: string;
  if (file !== undefined) {
    try {
      question = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read the question: ${(err as Error).message}`, EXIT.badInput);
    }
    from = file;
  } else if (argument === '-') {
    question = await readStdin();
    from = 'stdin';
  } else if (argument !== undefined) {
    return argument;
  } else {
    const after = listFlags.length
      ? ` (a question after ${listFlags.join(', ')} is read as one of its values: put it first)`
      : '';
    throw new CliError(`no question: ${HOW}${after}`, EXIT.badInput);
  }
  if (!question.trim())
    throw new CliError(`the question from ${from} is empty: nothing was started`, EXIT.badInput);
  return question.trim();
}
