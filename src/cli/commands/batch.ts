import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { runBatch, type BatchItemOutcome } from '../../client/batch-client';
import { parseBatchLines } from '../../schemas/batch-lines';
import { CliError, parsePositiveInt } from '../cli-error';
import { batchSummary, resultLine, type ResultLine } from '../batch-results';
import { openTurnStack } from '../turn-stack';
import { withSearchAttributeFix } from '../search-attribute-fix';

interface BatchOptions {
  concurrency: string;
  out?: string;
  name?: string;
  model?: string;
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

export function batchCommand(): Command {
  return new Command('batch')
    .description('run every query of a JSONL file as a durable batch; safe to run again after any crash')
    .argument('<file>', 'JSONL: one {"id"?, "question", ...overrides} per line')
    .option('--concurrency <n>', 'turns running at once', '10')
    .option('--out <file>', 'results JSONL (default <file>.results.jsonl)')
    .option('--name <name>', 'batch name (default: the file name); child workflow ids are <name>-<id or line>')
    .option('--model <model>', 'model for lines that name none')
    .option('--task-queue <queue>', 'task queue (default mcp-turns or MCP_TURNS_TASK_QUEUE)')
    .option('--address <host:port>', 'Temporal address')
    .option('--namespace <ns>', 'Temporal namespace')
    .option('--config <file>', 'worker config (MCP servers, claude) for the worker this command runs when none polls the task queue (default MCP_TURNS_CONFIG)')
    .action(async (file: string, opts: BatchOptions) => {
      const concurrency = parsePositiveInt(opts.concurrency, '--concurrency');
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (err) {
        throw new CliError(`cannot read ${file}: ${(err as Error).message}`, 2);
      }
      const name = opts.name ?? path.basename(file).replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9._-]/g, '-');
      if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) throw new CliError(`--name must be 1-100 characters of A-Z a-z 0-9 . _ -, got "${name}"`, 2);
      const { items, problems } = parseBatchLines(text);
      for (const p of problems) console.error(`${file}:${p.line}: ${p.message} (skipped)`);
      if (opts.model) for (const item of items) item.input.model ??= opts.model;
      if (!items.length) throw new CliError(`${file}: no valid query lines`, 2);

      const out = opts.out ?? `${file.replace(/\.jsonl?$/, '')}.results.jsonl`;
      const known = new Set(items.map((i) => i.id));
      // Only completed lines are kept: the batch workflow starts a failed query's id again
      // (ALLOW_DUPLICATE_FAILED_ONLY), so its line is fetched anew instead of staying stale.
      const lines: ResultLine[] = readResults(out).filter((l) => known.has(l.id) && l.status === 'completed');
      const reported = new Set(lines.map((l) => l.id));
      // Rewrite the file with whole lines only, so a line cut short by a crash does not linger.
      fs.writeFileSync(out, lines.map((l) => JSON.stringify(l) + '\n').join(''));

      const stack = await openTurnStack(opts);
      const { client, taskQueue } = stack;
      const tty = process.stderr.isTTY;
      const bar = tty
        ? new SingleBar(
            {
              format: 'batch {bar} {value}/{total} · {failed} failed · {running} running{waiting} · {rate}/s · ETA {eta_formatted}',
              hideCursor: true,
            },
            Presets.shades_classic,
          )
        : undefined;
      const started = Date.now();
      bar?.start(items.length, reported.size, { failed: 0, running: 0, waiting: '', rate: '0.0' });
      if (!tty) console.error(`batch ${name}: ${items.length} queries (${reported.size} already in ${out}), concurrency ${concurrency}`);
      // Turns waiting for a person's approval: shown in the bar, or a line whenever the set changes.
      let waitingShown = '';
      const approvals = { approved: 0, denied: 0, timed_out: 0 };
      try {
        const batch = runBatch(client, {
          name,
          items,
          concurrency,
          taskQueue,
          alreadyReported: reported,
          onResult: (o: BatchItemOutcome) => {
            const line = resultLine(o);
            for (const a of o.result?.approvals ?? []) if (a.outcome) approvals[a.outcome]++;
            lines.push(line);
            fs.appendFileSync(out, JSON.stringify(line) + '\n');
          },
          onProgress: (p) => {
            const failed = lines.filter((l) => l.status === 'failed').length;
            const rate = (lines.length - reported.size) / Math.max(0.001, (Date.now() - started) / 1000);
            const waiting = p.waitingApproval.length ? ` (${p.waitingApproval.length} waiting for approval)` : '';
            bar?.update(lines.length, { failed, running: p.running.length, waiting, rate: rate.toFixed(1) });
            const shown = [...p.waitingApproval].sort().join(' ');
            if (!tty && shown !== waitingShown) {
              waitingShown = shown;
              console.error(
                p.waitingApproval.length
                  ? `batch ${name}: ${p.waitingApproval.length} turn(s) waiting for approval (${shown}); see mcp-turns approvals --batch ${name}`
                  : `batch ${name}: no turn waits for approval`,
              );
            }
          },
        });
        await stack.whileWorking(batch).catch(async (err: unknown) => {
          throw await withSearchAttributeFix(err, `batch ${name}`, client, stack.address);
        });
      } finally {
        bar?.stop();
        await stack.close();
      }
      console.log(batchSummary(lines, out));
      const decided = approvals.approved + approvals.denied + approvals.timed_out;
      if (decided) {
        console.log(`approvals: ${decided} call(s) waited: ${approvals.approved} approved, ${approvals.denied} denied, ${approvals.timed_out} timed out`);
      }
    });
}
