/**
 * A flag that takes a value never takes the next flag as it. Commander gives an option whose value
 * is required the next word even when it is a flag (`--deny --config mcp.json` denies the tools
 * named `--config` and `mcp.json`, and the config is never read), so a value that is one of the
 * command's own flags is refused, naming both. `--deny=--config` still says it is meant.
 */
import type { Command, Option } from 'commander';
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';

/** Every flag `command` and its parents take, long and short (`--config`, `-c`, `--no-format`). */
function flagsOf(command: Command): Set<string> {
  const flags = new Set<string>(['-h', '--help']);
  for (let c: Command | null = command; c; c = c.parent) {
    for (const option of c.options as readonly Option[]) {
      if (option.long) flags.add(option.long);
      if (option.short) flags.add(option.short);
    }
  }
  return flags;
}

/** True when `value` is a flag of `flags` (or one with its value attached: `--config=x`). */
function isFlag(value: string, flags: Set<string>): boolean {
  return flags.has(value) || flags.has(value.split('=')[0]!);
}

/**
 * Refuses (exit 2) a value `command`'s options took that is one of its flags, unless `argv` shows
 * it was attached with `=` on purpose.
 */
export function refuseFlagsTakenAsValues(command: Command, argv: readonly string[]): void {
  const flags = flagsOf(command);
  for (let c: Command | null = command; c; c = c.parent) refuseIn(c, flags, argv);
}

/** The check of {@link refuseFlagsTakenAsValues} on the options of `command` itself (a global option is its parent's). */
function refuseIn(command: Command, flags: Set<string>, argv: readonly string[]): void {
  const values = command.opts<Record<string, unknown>>();
  for (const option of command.options as readonly Option[]) {
    if (!option.required && !option.optional) continue; // a switch takes no value
    const value = values[option.attributeName()];
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== 'string' || !isFlag(v, flags)) continue;
      if (option.long && argv.includes(`${option.long}=${v}`)) continue;
      throw new CliError(
        `${option.long ?? option.short} needs a value, and the next word is the flag ${v.split('=')[0]}: give ${option.long ?? option.short} its value first` +
          (option.long ? ` (or write ${option.long}=${v} if that is the value)` : ''),
        EXIT.badInput,
      );
    }
  }
}
