import { Command } from 'commander';

/** Placeholder until the ls command is written. */
export function lsCommand(): Command {
  return new Command('ls').description('list recent turns, conversations and batches');
}
