import { Command } from 'commander';

/** Placeholder until the cancel command is written. */
export function cancelCommand(): Command {
  return new Command('cancel').description('cancel a turn, a conversation or a batch');
}
