/**
 * `mcp-turns watch <turn|conversation|batch>`: follows a turn's or a conversation's stream from any
 * offset, live while it runs, whole after it has closed: printed as `run` prints it on a terminal
 * (the text as it is written, a line per tool call and approval, the answer at the end if it did not
 * stream; on a terminal, what each turn offers Claude in a line on stderr), or with `--events` one
 * JSON event a line. A turn's watch ends with the turn (exit 0 when it completed, 1 otherwise); a
 * conversation's when it closes, or on Ctrl-C (exit 130). An id that names neither but a batch
 * follows the batch's progress to its end (src/cli/batch-watch.ts), exiting as a run of it would.
 */
import { Command } from 'commander';
import type { Client } from '@temporalio/client';
import { connectOrFail } from '../connect';
import { cliSettings } from '../cli-settings';
import { CliError } from '../cli-error';
import { EXIT } from '../exit-codes';
import { followConversation, followTurn } from '../../client/subscribe';
import type { StreamEndStatus, TurnStreamEvent } from '../../core/stream-events';
import { oneLine } from '../../core/text';
import { describeId } from '../../client/describe-id';
import { findBatchShards, type BatchShards } from '../../client/batch-shards';
import { NotFoundError } from '../../client/not-found';
import { kindPhrase } from '../../client/workflow-kind';
import { batchWorkflowId } from '../../core/batch';
import { SA_BATCH } from '../../core/search-attributes';
import { watchBatch } from '../batch-watch';
import { noWorkerLine, runHealth } from '../../client/run-health';
import { dimmed, eventLine, StreamPrinter, toolsLine } from '../stream-printer';
import { serverToolCostNote } from '../../core/usage';

interface WatchOptions {
  from?: string;
  events?: boolean;
  address?: string;
  namespace?: string;
}

const say = (line: string): void => void process.stderr.write(`${line}\n`);

function parseOffset(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n))
    throw new CliError(`--from must be an offset (0 or more), got "${value}"`, EXIT.badInput);
  return n;
}

/** How a turn ended, in words. */
function ending(turnId: string, status: StreamEndStatus | string, error?: string): string {
  switch (status) {
    case 'completed':
      return `turn ${turnId} completed`;
    case 'failed':
      return `turn ${turnId} failed${error ? `: ${oneLine(error, 500)}` : ''}`;
    case 'cancelled':
      return `turn ${turnId} was cancelled`;
    case 'terminated':
      return `turn ${turnId} was terminated`;
    case 'timed_out':
      return `turn ${turnId} timed out`;
    default:
      return `turn ${turnId} ended: ${status}`;
  }
}

/** A completed turn's closing line: its stop reason, tokens and cost. */
function completedLine(finish: Extract<TurnStreamEvent, { type: 'finish' }>): string {
  const u = finish.usage;
  return (
    `${ending(finish.turnId, finish.status)}` +
    (finish.stopReason ? ` · ${finish.stopReason}` : '') +
    (u ? ` · ${u.inputTokens} in / ${u.outputTokens} out tokens` : '') +
    (finish.costUsd !== undefined ? ` · $${finish.costUsd.toFixed(4)}${finish.usage ? serverToolCostNote(finish.usage) : ''}` : '')
  );
}

/** What `watch` follows: a turn's or a conversation's stream, or a batch's progress. */
type Watched = { kind: 'turn' | 'conversation' } | { kind: 'batch'; batch: BatchShards };

/**
 * What `id` names: a turn or a conversation by its id, else a batch by its name (or by one of its
 * workflows' ids); anything else is one clear line, exit 2.
 */
async function watchedOf(client: Client, id: string, namespace: string): Promise<Watched> {
  const named = await describeId(client, id);
  if (named?.kind === 'conversation' || named?.kind === 'turn') return { kind: named.kind };
  const batchName = named?.kind === 'batch' ? named.searchAttributes.get(SA_BATCH) : id;
  if (batchName !== undefined) {
    try {
      return { kind: 'batch', batch: await findBatchShards(client, batchName) };
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
  if (named) throw new CliError(`${id} is ${kindPhrase(named.type)}, not a turn, a conversation or a batch`, EXIT.badInput);
  const shard = batchWorkflowId(id);
  throw new CliError(`no turn, conversation or batch named ${id} in namespace ${namespace} (no workflow ${id}, ${shard} or ${shard}-sI-of-N)`, EXIT.notFound);
}

export function watchCommand(): Command {
  return new Command('watch')
    .description(
      "follow a turn's or a conversation's stream: its text as it is written, its tool calls and approvals, and (on stderr) calls failing and retried; or a batch's progress to its end",
    )
    .argument('<id>', 'a turn or a conversation, or a batch by its name')
    .option('--from <offset>', 'start at this offset of the stream (default 0: from the start)')
    .option('--events', 'print each event as one JSON line')
    .option('--address <host:port>', 'Temporal address (default from TEMPORAL_ADDRESS / profile)')
    .option('--namespace <ns>', 'Temporal namespace')
    .action(async (id: string, opts: WatchOptions, command: Command) => {
      const settings = cliSettings(command);
      const fromOffset = opts.from !== undefined ? parseOffset(opts.from) : 0;
      const { client, namespace } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings);
      const printer = opts.events
        ? undefined
        : new StreamPrinter({
            write: (text) => void process.stdout.write(text),
            questions: true,
            artifacts: true,
          });
      // Ctrl-C: leave quietly (what is watched goes on).
      process.once('SIGINT', () => {
        if (printer?.midLine) process.stdout.write('\n');
        process.exit(130);
      });
      try {
        const watched = await watchedOf(client, id, namespace);
        if (watched.kind === 'batch') {
          if (opts.from !== undefined || opts.events) throw new CliError('--from and --events follow the stream of a turn or a conversation: a batch has none (watch it without them)', EXIT.badInput);
          process.exitCode = await watchBatch(client, watched.batch);
          return;
        }
        const kind = watched.kind;
        // Why it may not move, first: a failing workflow task is told by the stream as it fails.
        const described = await client.workflow.getHandle(id).describe();
        if (described.status.name === 'RUNNING') {
          const health = await runHealth(client, described);
          if (health.noWorker) say(noWorkerLine(health.taskQueue));
        }
        const events =
          kind === 'conversation' ? followConversation(client, id, { fromOffset }) : followTurn(client, id, { fromOffset });
        let finish: Extract<TurnStreamEvent, { type: 'finish' }> | undefined;
        let error: string | undefined;
        for await (const event of events) {
          if (event.type === 'failing-call') {
            // Why the turn is waiting: on stderr, whatever stdout has.
            printer?.endLine();
            say(kind === 'conversation' ? `  ${event.line}` : event.line);
            continue;
          }
          if (event.type === 'data-tools' && printer) {
            // What the turn offers Claude: one line on a terminal's stderr.
            if (process.stderr.isTTY === true) {
              printer.endLine();
              const line = kind === 'conversation' ? `  ${toolsLine(event)}` : toolsLine(event);
              say(settings.color ? dimmed(line) : line);
            }
            continue;
          }
          if (printer) printer.print(event);
          else process.stdout.write(eventLine(event));
          if (event.type === 'error') error = event.errorText;
          if (event.type !== 'finish') continue;
          finish = event;
          if (kind === 'conversation' && !opts.events) {
            printer?.endLine();
            say(
              `  ${event.status === 'completed' ? completedLine(event) : ending(event.turnId, event.status, error)}`,
            );
          }
          error = undefined;
        }
        printer?.endLine();
        if (kind === 'conversation') {
          if (!opts.events) say(`conversation ${id} has closed`);
          return;
        }
        // A turn: how it ended (a watch from past its end has no finish: the turn's status says).
        const status: string = finish?.status ?? (await turnStatus(client, id));
        if (status !== 'completed') throw new CliError(ending(id, status, error), 1);
        if (!opts.events) say(finish ? completedLine(finish) : ending(id, status));
      } finally {
        await client.connection.close();
      }
    });
}

/** A closed turn's status as a stream's end names it. */
async function turnStatus(client: Client, id: string): Promise<string> {
  return (await describeId(client, id))?.status ?? 'unknown';
}
