/**
 * `mcp-turns batch results <batch>`: a batch's result lines read back from Temporal
 * (src/client/batch-results.ts), whoever started it (the CLI elsewhere, the client API, a
 * schedule) and whether or not it still runs: the JSONL `mcp-turns batch` writes, on stdout or into
 * `--out`, then one line of counts on stderr. It exits as a run of the batch would for the lines
 * written (src/cli/batch-exit-code.ts), and 1 when visibility did not list every finished turn in
 * time (the lines it listed are written first).
 */
import fs from 'node:fs';
import { Command } from 'commander';
import { BatchResultsShortfallError, getBatchResults } from '../../client/batch-results';
import type { ResultLine } from '../../client/result-line';
import type { BatchStatus } from '../../client/batch-status';
import { connectOrFail } from '../connect';
import { cliSettings } from '../cli-settings';
import { CliError } from '../cli-error';
import { EXIT } from '../exit-codes';
import { countsOf } from '../batch-counts';
import { batchExitCode } from '../batch-exit-code';
import { resultsCountLine } from '../batch-results';

interface BatchResultsOptions {
  out?: string;
  address?: string;
  namespace?: string;
}

/** Writes `text` to stdout, resolving once stdout can take more. */
function toStdout(text: string): Promise<void> {
  return new Promise((resolve) => (process.stdout.write(text) ? resolve() : process.stdout.once('drain', resolve)));
}

/** `--out`, emptied now, and a writer that appends to it. */
function toFile(file: string): (text: string) => Promise<void> {
  try {
    fs.writeFileSync(file, '');
  } catch (err) {
    throw new CliError(`--out ${file}: cannot write it: ${(err as Error).message}`, EXIT.badInput);
  }
  return async (text) => fs.appendFileSync(file, text);
}

/** `batch q: 6 results on stdout: 5 answered, 1 failed; the batch still runs: 2 of 8 queries not finished (…)`. */
function summaryLine(status: BatchStatus, lines: readonly ResultLine[], where: string): string {
  const p = status.progress;
  const left = p.total - p.completed - p.failed - p.skipped;
  const running = status.ended ? '' : `; the batch still runs: ${left} of ${p.total} ${p.total === 1 ? 'query' : 'queries'} not finished (mcp-turns watch ${status.name} follows it)`;
  return `batch ${status.name}: ${resultsCountLine(lines, where)}${running}`;
}

/** The flags `results` takes; `batch FILE` takes them too. */
const OWN_FLAGS: ReadonlySet<string> = new Set(['out', 'address', 'namespace']);

/**
 * The options of `batch results`. Commander hands a subcommand only the flags its parent does not
 * take, so those `batch FILE` takes too (`--out`, `--address`, `--namespace`) are parsed by `batch`
 * and read from there; any other flag of `batch FILE` given here is refused, not ignored.
 */
function sharedOptionsOf(command: Command): BatchResultsOptions {
  const batch = command.parent;
  for (const option of batch?.options ?? []) {
    const key = option.attributeName();
    if (!OWN_FLAGS.has(key) && batch?.getOptionValueSource(key) === 'cli') {
      throw new CliError(`batch results takes --out, --address and --namespace: ${option.long ?? option.flags} is for batch FILE`, EXIT.badInput);
    }
  }
  return command.optsWithGlobals<BatchResultsOptions>();
}

export function batchResultsCommand(): Command {
  return new Command('results')
    .description("a batch's result lines read from Temporal, whoever started it, finished or still running: JSONL on stdout (or --out), counts on stderr")
    .argument('<batch>', 'the batch name (a file named "results" is run as batch ./results)')
    .option('--out <file>', 'write the lines to this file (replacing it) instead of stdout')
    .option('--address <host:port>', 'Temporal address (default from TEMPORAL_ADDRESS / profile)')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (name: string, _opts: BatchResultsOptions, command: Command) => {
      const opts = sharedOptionsOf(command);
      const settings = cliSettings(command);
      const { client } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings);
      try {
        const results = await getBatchResults(client, name);
        const write = opts.out !== undefined ? toFile(opts.out) : toStdout;
        const lines: ResultLine[] = [];
        let shortfall: BatchResultsShortfallError | undefined;
        try {
          for await (const line of results.lines) {
            lines.push(line);
            await write(JSON.stringify(line) + '\n');
          }
        } catch (err) {
          if (!(err instanceof BatchResultsShortfallError)) throw err;
          shortfall = err;
        }
        console.error(summaryLine(results, lines, opts.out !== undefined ? `in ${opts.out}` : 'on stdout'));
        if (shortfall) throw new CliError(shortfall.message, EXIT.failed);
        process.exitCode = batchExitCode(countsOf(lines), 0);
      } finally {
        await client.connection.close();
      }
    });
}
