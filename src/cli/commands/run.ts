import { Command } from 'commander';
import { WorkflowFailedError } from '@temporalio/client';
import { startChatTurn, getTurnProgress, type ChatTurnHandle } from '../../client/chat-turn-client';
import { workflowUrl } from '../../client/ui-link';
import { ChatTurnInputError, parseChatTurnInput, type ChatTurnInput } from '../../schemas/turn-input';
import type { ChatTurnResult, TurnProgress } from '../../core/turn-result';
import { asBadInput, CliError, parsePositiveInt } from '../cli-error';
import { renderResult } from '../render';
import { describeFailure } from '../../client/describe-failure';
import { openTurnStack } from '../turn-stack';
import { withSearchAttributeFix } from '../search-attribute-fix';
import { ApprovalPrompt } from '../approval-prompt';
import { deciderIdentity } from '../decider-identity';
import { ProgressLines } from '../progress-lines';
import { subscribeTurn } from '../../stream/subscribe';
import { eventLine, followStream, StreamPrinter, type FollowedStream } from '../stream-printer';

interface RunOptions {
  server?: string[];
  maxSteps?: string;
  model?: string;
  id?: string;
  wait: boolean;
  json?: boolean;
  events?: boolean;
  format: boolean;
  system?: string;
  taskQueue?: string;
  address?: string;
  namespace?: string;
  as?: string;
  config?: string;
}

/** How long a turn's stream may take to reach its end after the turn's result is in. */
const STREAM_END_GRACE_MS = 10_000;

/**
 * Polls the turn's progress query until it ends: prints each step and tool call as it happens
 * (`print`), and hands calls waiting for approval to `approvals` (every `pollMs`).
 */
async function followProgress(
  handle: ChatTurnHandle,
  done: () => boolean,
  print: boolean,
  approvals: ApprovalPrompt,
  pollMs: number,
): Promise<void> {
  const lines = new ProgressLines();
  while (!done()) {
    let p: TurnProgress | undefined;
    try {
      p = await getTurnProgress(handle);
    } catch {
      // The first workflow task may not have run yet.
    }
    if (p && print) for (const line of lines.next(handle.workflowId, p)) process.stderr.write(`${line}\n`);
    if (p?.pendingApprovals.length) await approvals.handle(p.pendingApprovals);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export function runCommand(): Command {
  return new Command('run')
    .description('run one chat turn and print its answer')
    .argument('<question>', 'the question')
    .option('--server <name...>', 'MCP servers to use (default: all the worker has)')
    .option('--max-steps <n>', 'Claude calls in the tool loop')
    .option('--model <model>', 'Claude model')
    .option('--system <prompt>', 'system prompt')
    .option('--no-format', 'skip the response formatter')
    .option('--id <workflowId>', 'workflow id (default turn-<time-sortable id>)')
    .option('--no-wait', 'print the workflow id and return at once')
    .option('--json', 'print only the result object as JSON')
    .option('--events', "print the turn's stream, one JSON event a line, and nothing else on stdout")
    .option('--task-queue <queue>', 'task queue (default mcp-turns or MCP_TURNS_TASK_QUEUE)')
    .option('--address <host:port>', 'Temporal address (default from TEMPORAL_ADDRESS / profile)')
    .option('--namespace <ns>', 'Temporal namespace')
    .option('--as <name>', 'who approves the calls you answer on the terminal (default: user@host)')
    .option('--config <file>', 'worker config (MCP servers, claude) for the worker this command runs when none polls the task queue (default MCP_TURNS_CONFIG)')
    .action(async (question: string, opts: RunOptions) => {
      if (opts.events && opts.json) throw new CliError('--events and --json: choose one', 2);
      if (opts.events && !opts.wait) throw new CliError('--events follows the turn: it cannot go with --no-wait', 2);
      // Streamed always (a `watch` elsewhere can follow it); printed as it is written on a terminal.
      const input: ChatTurnInput = { question, format: opts.format, stream: true };
      if (opts.server) input.servers = opts.server;
      if (opts.maxSteps) input.maxSteps = parsePositiveInt(opts.maxSteps, '--max-steps');
      if (opts.model) input.model = opts.model;
      if (opts.system) input.system = opts.system;
      asBadInput(() => parseChatTurnInput(input), ChatTurnInputError);
      const stack = await openTurnStack(opts, { runWorker: opts.wait });
      const { client, address, namespace, taskQueue } = stack;
      try {
        let handle: ChatTurnHandle;
        try {
          handle = await startChatTurn(client, input, { taskQueue, ...(opts.id ? { workflowId: opts.id } : {}) });
        } catch (err) {
          throw await withSearchAttributeFix(err, 'the turn', client, address);
        }
        const link = workflowUrl(address, namespace, handle.workflowId, stack.uiUrl);
        if (!opts.wait) {
          console.log(opts.json ? JSON.stringify({ workflowId: handle.workflowId, url: link }) : `started ${handle.workflowId}\n${link}`);
          return;
        }
        let finished = false;
        // A call waiting for approval is asked about on a terminal, else the commands to decide it are printed.
        const ended = new AbortController();
        const approvals = new ApprovalPrompt({
          client,
          turnId: handle.workflowId,
          identity: deciderIdentity(opts.as),
          interactive: process.stdin.isTTY === true,
          connectionArgs: [...(opts.address ? ['--address', opts.address] : []), ...(opts.namespace ? ['--namespace', opts.namespace] : [])],
          signal: ended.signal,
        });
        // On a terminal the stream's lines replace the progress lines; --events prints the stream as it is.
        const live = !opts.json && !opts.events && process.stdout.isTTY === true;
        const printer = live
          ? new StreamPrinter({ write: (text) => void process.stdout.write(text), dimSteps: opts.format })
          : undefined;
        let stream: FollowedStream | undefined;
        if (opts.events || printer) {
          const id = handle.workflowId;
          stream = followStream(
            async (signal) => subscribeTurn(client, id, { signal }),
            (event) => (printer ? printer.print(event) : process.stdout.write(eventLine(event))),
          );
        }
        const printProgress = !opts.json && !live && process.stderr.isTTY === true;
        const follow = followProgress(handle, () => finished, printProgress, approvals, printProgress || live ? 300 : 1000);
        let result: ChatTurnResult;
        let turnEnded = false;
        try {
          result = await stack.whileWorking(handle.result());
          turnEnded = true;
        } catch (err) {
          if (err instanceof WorkflowFailedError) {
            turnEnded = true;
            throw new CliError(`turn ${handle.workflowId} failed: ${describeFailure(err)}`);
          }
          throw err;
        } finally {
          finished = true;
          ended.abort();
          await follow;
          // The stream ends with the turn: its last events (the answer, the finish) are printed first.
          await stream?.stop(turnEnded ? STREAM_END_GRACE_MS : 0);
          printer?.endLine();
        }
        if (opts.events) return;
        if (opts.json) console.log(JSON.stringify(result, null, 2));
        else console.log(renderResult(result, link, { answer: !printer?.answerShown(handle.workflowId) }));
      } finally {
        await stack.close();
      }
    });
}
