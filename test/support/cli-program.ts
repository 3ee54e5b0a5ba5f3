/** The CLI's flag parsing as unit tests drive it: the real program, or one command with its action left out. */
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main';

/** What the real command line does with `args`: the error it stops with, or nothing. */
export async function parse(...args: string[]): Promise<unknown> {
  const argv = ['node', 'mcp-turns', ...args];
  return buildProgram(argv).parseAsync(argv).then(() => undefined, (err: unknown) => err);
}

/** The options `command` is given by `args`, its action left out (nothing is started). */
export async function flagsOf<T>(command: Command, ...args: string[]): Promise<T> {
  await command.exitOverride().action(() => {}).parseAsync(args, { from: 'user' });
  return command.opts() as T;
}
