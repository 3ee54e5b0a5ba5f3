import fs from 'node:fs';
import { Command } from 'commander';
import { batchShardWorkflowIds, runBatch, type BatchItemOutcome } from '../../client/batch-client';
import { messageBatchWaits } from '../../client/message-batch-status';
import { BATCH_NAME_PATTERN, type BatchProgress } from '../../core/batch';
import { CliError } from '../cli-error';
import {
  batchSummary,
  defaultBatchName,
  defaultResultsFile,
  earlierResults,
  otherBatchIn,
  startLine,
  type ApprovalCounts,
} from '../batch-results';
import { resultLine, type ResultLine } from '../../client/result-line';
import { batchResultsCommand } from './batch-results';
import { countLine, countsOf } from '../batch-counts';
import { batchExitCode } from '../batch-exit-code';
import { BatchProgressView } from '../batch-progress';
import { EXIT } from '../exit-codes';
import { addBatchFlags, batchFlagsOf, type BatchFlags } from '../batch-flags';
import { readBatchFile } from '../batch-file';
import { FailingCalls } from '../../client/failing-calls';
import { RunningTurnFailures } from '../../client/running-turn-failures';
import { openTurnStack } from '../turn-stack';
import { holdExitOnClosedOutput } from '../closed-output';
import { cliSettings } from '../cli-settings';
import { withSearchAttributeFix } from '../search-attribute-fix';

interface BatchOptions extends BatchFlags {
  out?: string;
  name?: string;
  taskQueue?: string;
  address?: string;
  namespace?: string;
  config?: string;
}

function readResults(file: string): ResultLine[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as ResultLine];
      } catch {
        return []; // a line cut short by a crash is fetched again
      }
    });
}

/** `batch <file>` runs a file; `batch results <batch>` reads a batch's lines back (commands/batch-results.ts); a file named `results` runs as `batch ./results`. */
export function batchCommand(): Command {
  const command = new Command('batch')
    .description('run every query of a JSONL file as a durable batch; safe to run again after any crash (batch results NAME: read its lines back)')
    .addCommand(batchResultsCommand())
    .argument('<file>', 'JSONL: one {"id"?, "question", ...overrides} per line (a file named "results": ./results)')
    .option('--out <file>', 'results JSONL (default <file>.results.jsonl; with another --name N, <file>.N.results.jsonl)')
    .option('--name <name>', 'batch name (default: the file name); child workflow ids are <name>-<id or line>');
  return addBatchFlags(command)
    .option('--task-queue <queue>', 'task queue (default mcp-turns or MCP_TURNS_TASK_QUEUE)')
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .option('--config <file>', 'worker config (MCP servers, claude) for the worker this command runs when none polls the task queue (default MCP_TURNS_CONFIG)')
    .action(async (file: string, opts: BatchOptions, command: Command) => {
      const { concurrency, defaults, messageBatches } = batchFlagsOf(opts);
      const { items, problems } = readBatchFile(file, defaults);
      const name = opts.name ?? defaultBatchName(file);
      if (!BATCH_NAME_PATTERN.test(name)) throw new CliError(`--name must be 1-100 characters of A-Z a-z 0-9 . _ -, got "${name}"`, EXIT.badInput);
      for (const p of problems) console.error(`${file}:${p.line}: ${p.message} (skipped)`);
      if (!items.length) throw new CliError(`${file}: no valid query lines`, 2);

      const out = opts.out ?? defaultResultsFile(file, name);
      const found = readResults(out);
      // Another batch's lines would be taken for this one's answers (and dropped by the rewrite below).
      const other = otherBatchIn(found, name);
      if (other !== undefined) {
        throw new CliError(`--out ${out} holds results of batch ${other}: give batch ${name} its own --out, or --name ${other} to go on with that batch`, EXIT.badInput);
      }
      // Only completed lines are kept: the batch workflow starts a failed query's id again
      // (ALLOW_DUPLICATE_FAILED_ONLY), so its line is fetched anew instead of staying stale.
      const earlier = earlierResults(found, new Set(items.map((i) => i.id)));
      const lines: ResultLine[] = [...earlier.kept];
      const reported = new Set(lines.map((l) => l.id));
      // Rewrite the file with whole lines only, so a line cut short by a crash does not linger.
      fs.writeFileSync(out, lines.map((l) => JSON.stringify(l) + '\n').join(''));

      const stack = await openTurnStack(opts, cliSettings(command));
      // The batch needs this command's own worker until it ends, whether or not anyone still reads the output.
      if (stack.inProcessWorker) holdExitOnClosedOutput();
      const { client, taskQueue } = stack;
      console.error(startLine({ name, total: items.length, earlier, out, concurrency, ...(messageBatches ? { messageBatches } : {}) }));
      const started = Date.now();
      // Counted as the lines are written, so the progress says what the results file says.
      const counts = countsOf(lines);
      let last: BatchProgress | undefined;
      // The turns' parents, by which collectors count their requests.
      const shards = batchShardWorkflowIds(name, concurrency, items.length);
      const view = new BatchProgressView(
        name,
        () => ({
          total: items.length,
          done: lines.length,
          partial: counts.partial,
          notApproved: counts.notApproved,
          failed: counts.failed,
          ...(last ? { running: last.running.length } : {}),
          waitingApproval: last?.waitingApproval.length ?? 0,
          waitingMessageBatch: last?.waitingMessageBatch?.length ?? 0,
          ratePerSecond: (lines.length - reported.size) / Math.max(0.001, (Date.now() - started) / 1000),
        }),
        messageBatches ? { messageBatchWaits: () => messageBatchWaits(client, last?.collectors ?? [], shards) } : {},
      );
      const failures = new RunningTurnFailures(new FailingCalls(client), name, () => last?.running ?? [], (l) => view.log(l));
      const approvals: ApprovalCounts = { approved: 0, denied: 0, timed_out: 0 };
      try {
        const batch = runBatch(client, {
          name,
          items,
          concurrency,
          taskQueue,
          ...(messageBatches ? { messageBatches } : {}),
          alreadyReported: reported,
          onResult: (o: BatchItemOutcome) => {
            const line = resultLine(o);
            for (const a of o.result?.approvals ?? []) if (a.outcome) approvals[a.outcome]++;
            lines.push(line);
            countLine(counts, line);
            fs.appendFileSync(out, JSON.stringify(line) + '\n');
            view.update();
          },
          onProgress: (p) => {
            last = p;
            view.update(p);
          },
        });
        await stack.whileWorking(batch).catch(async (err: unknown) => {
          throw await withSearchAttributeFix(err, `batch ${name}`, client, stack.address);
        });
      } finally {
        await failures.stop();
        view.stop();
        await stack.close();
      }
      console.log(batchSummary(lines, out, approvals, { messageBatches: Boolean(messageBatches), skipped: { lines: problems.length, file } }));
      process.exitCode = batchExitCode(counts, problems.length);
    });
}
