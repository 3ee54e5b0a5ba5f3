/**
 * A batch's JSONL file read into its items, each line under the batch flags' defaults
 * (src/schemas/batch-lines.ts): shared by `batch` and `schedule add`. A file that cannot be read is
 * one line naming it, exit code 2; what a command does with bad lines is its own.
 */
import fs from 'node:fs';
import type { BatchItem } from '../core/batch';
import type { TurnOptions } from '../core/conversation';
import { parseBatchLines, type BatchLineProblem } from '../schemas/batch-lines';
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';

/** The file's items and its bad lines (each by number). */
export function readBatchFile(file: string, defaults: TurnOptions): { items: BatchItem[]; problems: BatchLineProblem[] } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, EXIT.badInput);
  }
  return parseBatchLines(text, defaults);
}
