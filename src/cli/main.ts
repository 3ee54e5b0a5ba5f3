/** The `mcp-turns` command line. Each command lives in commands/<name>.ts. */
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { packageRoot, stateDir } from '../temporal/project-paths';
import { causeChain } from '../client/describe-failure';
import { CliError } from './cli-error';
import { approvalsCommand } from './commands/approvals';
import { authCommand } from './commands/auth';
import { batchCommand } from './commands/batch';
import { chatCommand } from './commands/chat';
import { approveCommand, denyCommand } from './commands/decide';
import { demoCommand } from './commands/demo';
import { runCommand } from './commands/run';
import { serverCommand } from './commands/server';
import { showCommand } from './commands/show';
import { stubModelCommand } from './commands/stub-model';
import { workerCommand } from './commands/worker';

function version(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('mcp-turns')
    .description('Durable Claude tool-use loops on Temporal: each chat turn is a workflow.')
    .version(version())
    .option('--state-dir <dir>', `where the Temporal CLI, the dev server's database and log are kept (default MCP_TURNS_HOME, else ${stateDir()})`)
    .hook('preAction', (cmd) => {
      const dir = (cmd.opts() as { stateDir?: string }).stateDir;
      if (dir) process.env.MCP_TURNS_HOME = path.resolve(dir);
    });
  program.addCommand(serverCommand());
  program.addCommand(workerCommand());
  program.addCommand(runCommand());
  program.addCommand(chatCommand());
  program.addCommand(showCommand());
  program.addCommand(batchCommand());
  program.addCommand(approvalsCommand());
  program.addCommand(approveCommand());
  program.addCommand(denyCommand());
  program.addCommand(demoCommand());
  program.addCommand(stubModelCommand());
  program.addCommand(authCommand());
  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    const failure = err instanceof CliError ? err : new CliError(causeChain(err));
    console.error(`mcp-turns: ${failure.message}`);
    for (const line of failure.lines) console.error(`  ${line}`);
    process.exit(failure.exitCode);
  }
}
