/**
 * The flags of a batch's queries, shared by `batch` and `schedule add` (one rule for both): the
 * window (`--concurrency`), the lines' defaults (`--model`, the tool flags and the request controls,
 * src/cli/turn-flags.ts) and Message Batches (src/cli/message-batch-flags.ts). A bad flag is one line
 * naming it, exit code 2, before anything is started.
 */
import type { Command } from 'commander';
import type { TurnOptions } from '../core/conversation';
import { parsePositiveInt } from './cli-error';
import { messageBatchesOf, type MessageBatchFlags } from './message-batch-flags';
import { addRequestFlags, addToolFlags, batchDefaultsOf, type RequestFlags, type ToolFlags } from './turn-flags';

/** The flags as commander gives them. */
export interface BatchFlags extends ToolFlags, RequestFlags, MessageBatchFlags {
  concurrency: string;
  model?: string;
}

/** Adds the batch flags to `command`. */
export function addBatchFlags(command: Command): Command {
  command.option('--concurrency <n>', 'turns running at once', '10').option('--model <model>', 'model for lines that name none');
  return addRequestFlags(addToolFlags(command, true), true)
    .option(
      '--message-batches',
      "every Claude call of the batch goes through Anthropic's Message Batches API at half price; turns wait durably, up to 24 h",
    )
    .option(
      '--message-batch-deadline <duration>',
      'with --message-batches: a request not answered in this time (90s, 30m, 2h, 24h or milliseconds) is sent once more, then fails its turn (default 24h)',
    );
}

/** What the batch flags set: the window, the lines' defaults and the Message Batches option. */
export function batchFlagsOf(flags: BatchFlags): { concurrency: number; defaults: TurnOptions; messageBatches?: { deadlineMs?: number } } {
  const concurrency = parsePositiveInt(flags.concurrency, '--concurrency');
  const messageBatches = messageBatchesOf(flags);
  return { concurrency, defaults: batchDefaultsOf(flags), ...(messageBatches ? { messageBatches } : {}) };
}
