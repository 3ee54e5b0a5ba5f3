/** The `mcp-turns` command line. Each command lives in commands/<name>.ts. */
import { Command } from 'commander';
import { packageVersion } from '../temporal/project-paths';
import { causeChain } from '../client/describe-failure';
import { CliError } from './cli-error';
import { InvalidIdError } from '../schemas/ids';
import { NotFoundError } from '../client/not-found';
import type * as SettingsErrors from '../config/settings-errors';
import { EXIT, EXIT_CODES_HELP } from './exit-codes';
import { endQuietlyOnClosedOutput } from './closed-output';
import { refuseFlagsTakenAsValues } from './flag-values';
import type * as Approvals from './commands/approvals';
import type * as Auth from './commands/auth';
import type * as Batch from './commands/batch';
import type * as Cancel from './commands/cancel';
import type * as Ls from './commands/ls';
import type * as Chat from './commands/chat';
import type * as CodecServer from './commands/codec-server';
import type * as Decide from './commands/decide';
import type * as Demo from './commands/demo';
import type * as Keys from './commands/keys';
import type * as Respond from './commands/respond';
import type * as Run from './commands/run';
import type * as Schedule from './commands/schedule';
import type * as Serve from './commands/serve';
import type * as Server from './commands/server';
import type * as Show from './commands/show';
import type * as StubModel from './commands/stub-model';
import type * as Watch from './commands/watch';
import type * as Worker from './commands/worker';

/*
 * Each command, loaded when asked for: a command that runs a worker loads the Temporal worker (and
 * webpack's neighbours) in ~0.4 s, which `approvals`, `show` or `approve` have no use for.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const COMMANDS: Record<string, () => Command> = {
  server: () => (require('./commands/server') as typeof Server).serverCommand(),
  worker: () => (require('./commands/worker') as typeof Worker).workerCommand(),
  serve: () => (require('./commands/serve') as typeof Serve).serveCommand(),
  run: () => (require('./commands/run') as typeof Run).runCommand(),
  chat: () => (require('./commands/chat') as typeof Chat).chatCommand(),
  show: () => (require('./commands/show') as typeof Show).showCommand(),
  watch: () => (require('./commands/watch') as typeof Watch).watchCommand(),
  batch: () => (require('./commands/batch') as typeof Batch).batchCommand(),
  schedule: () => (require('./commands/schedule') as typeof Schedule).scheduleCommand(),
  ls: () => (require('./commands/ls') as typeof Ls).lsCommand(),
  cancel: () => (require('./commands/cancel') as typeof Cancel).cancelCommand(),
  approvals: () => (require('./commands/approvals') as typeof Approvals).approvalsCommand(),
  approve: () => (require('./commands/decide') as typeof Decide).approveCommand(),
  deny: () => (require('./commands/decide') as typeof Decide).denyCommand(),
  respond: () => (require('./commands/respond') as typeof Respond).respondCommand(),
  demo: () => (require('./commands/demo') as typeof Demo).demoCommand(),
  'stub-model': () => (require('./commands/stub-model') as typeof StubModel).stubModelCommand(),
  auth: () => (require('./commands/auth') as typeof Auth).authCommand(),
  keys: () => (require('./commands/keys') as typeof Keys).keysCommand(),
  'codec-server': () => (require('./commands/codec-server') as typeof CodecServer).codecServerCommand(),
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** The command `argv` invokes (the first word after the global options), if it names one. */
function invokedCommand(argv: string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--state-dir') i++;
    else if (!arg.startsWith('-')) return Object.hasOwn(COMMANDS, arg) ? arg : undefined;
  }
  return undefined;
}

/**
 * A flag or argument commander cannot parse (unknown, missing its value, a missing argument) is bad
 * input: exit code 2 after commander's own line. `--help` and `--version` exit 0.
 */
function asBadInputOnParseError(command: Command): Command {
  return command.exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.answered : EXIT.badInput));
}

/**
 * A command and each of its subcommands (`batch results`, `schedule add`, `keys new`: commander asks
 * only the command that parses): parse errors are bad input, and `--help` ends with the exit codes.
 */
function withExitCodes(command: Command): Command {
  for (const sub of command.commands) withExitCodes(sub);
  return asBadInputOnParseError(command.addHelpText('after', `\n${EXIT_CODES_HELP}`));
}

export function buildProgram(argv?: string[]): Command {
  const program = new Command('mcp-turns')
    .description('Durable Claude tool-use loops on Temporal: each chat turn is a workflow.')
    .version(packageVersion())
    .addHelpText('after', `\n${EXIT_CODES_HELP}`)
    // Each command's action loads its settings once (cli-settings.ts) and passes them down.
    .option('--state-dir <dir>', "where the Temporal CLI, the dev server's database and log are kept (default MCP_TURNS_HOME, else .mcp-turns/ in a clone of the repository, else the per-user state directory)");
  // Only the invoked command is loaded; without one (help, a typo), all are, for the listing.
  const invoked = argv && invokedCommand(argv);
  for (const [name, make] of Object.entries(COMMANDS)) {
    if (!invoked || name === invoked) program.addCommand(withExitCodes(make()));
  }
  // A flag's value is never the next flag (flag-values.ts); checked before any command acts.
  program.hook('preAction', (_program, action) => refuseFlagsTakenAsValues(action, argv ?? process.argv));
  return asBadInputOnParseError(program);
}

/**
 * Bad input the person can fix, exit code 2: an id that cannot be used (e.g. --id of a conversation's
 * turn form), or a setting (a flag, an environment variable, the config file), its problems listed
 * below its line unless the line names them.
 */
function badInput(err: unknown): CliError | undefined {
  if (err instanceof InvalidIdError) return new CliError(err.message, EXIT.badInput);
  if (err instanceof NotFoundError) return new CliError(err.message, EXIT.notFound);
  // Loaded only now: it loads every section's module, which a command that succeeds may not need.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { isSettingsError } = require('../config/settings-errors') as typeof SettingsErrors;
  if (isSettingsError(err)) return new CliError(err.message, EXIT.badInput, (err.problems ?? []).filter((p) => !err.message.includes(p)));
  return undefined;
}

export async function main(argv: string[]): Promise<void> {
  endQuietlyOnClosedOutput();
  try {
    await buildProgram(argv).parseAsync(argv);
  } catch (err) {
    const failure = err instanceof CliError ? err : badInput(err) ?? new CliError(causeChain(err));
    console.error(`mcp-turns: ${failure.message}`);
    for (const line of failure.lines) console.error(`  ${line}`);
    process.exit(failure.exitCode);
  }
}
