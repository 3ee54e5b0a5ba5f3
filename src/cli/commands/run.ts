import { Command } from 'commander';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import { startChatTurn, type ChatTurnHandle } from '../../client/chat-turn-client';
import { workflowUrl } from '../../client/ui-link';
import type { ChatTurnResult } from '../../core/turn-result';
import { CliError } from '../cli-error';
import { runPrintout } from '../output-lines';
import { describeFailure } from '../../client/describe-failure';
import { openTurnStack } from '../turn-stack';
import { holdExitOnClosedOutput } from '../closed-output';
import { cliSettings } from '../cli-settings';
import { withSearchAttributeFix } from '../search-attribute-fix';
import { connectionArgs } from '../approval-prompt';
import { deciderIdentity } from '../decider-identity';
import { EXIT, exitCodeOf } from '../exit-codes';
import { InputLines } from '../input-lines';
import { ProgressLines } from '../progress-lines';
import { readQuestion } from '../question-source';
import { takenIdError } from '../taken-workflow-id';
import { addTurnFlags, listFlagsGiven, turnInputOf, turnOptionsOf, type TurnFlags } from '../turn-flags';
import { followTurn } from '../../client/subscribe';
import { STREAM_END_GRACE_MS, TurnFollower } from '../turn-follower';
import { dimmed, followStream, StreamPrinter } from '../stream-printer';

interface RunOptions extends TurnFlags {
  file?: string;
  id?: string;
  wait: boolean;
  json?: boolean;
  events?: boolean;
  taskQueue?: string;
  address?: string;
  namespace?: string;
  as?: string;
  config?: string;
}

const say = (line: string): void => void process.stderr.write(`${line}\n`);

/**
 * What Ctrl-C prints: the turn is not stopped, and how to follow or stop it. A turn this command's
 * own worker ran waits for the next worker (`mcp-turns worker`, or the next run or chat).
 */
function interruptedLine(turnId: string, inProcessWorker: boolean): string {
  const goesOn = inProcessWorker
    ? `goes on once a worker runs it (this command's worker stopped with it: \`mcp-turns worker\` runs one)`
    : 'goes on';
  return `interrupted: turn ${turnId} ${goesOn}; \`mcp-turns watch ${turnId}\` follows it, \`mcp-turns cancel ${turnId}\` stops it`;
}

/**
 * An approval question on the terminal, on a reader of its own for the question: Ctrl-C while it
 * is open interrupts the run, as it does anywhere else.
 */
async function askOnTerminal(question: string, signal: AbortSignal, onInterrupt: () => void): Promise<string | undefined> {
  const lines = new InputLines({ onInterrupt });
  try {
    return await lines.question(question, signal);
  } finally {
    lines.close();
  }
}

export function runCommand(): Command {
  const command = new Command('run')
    .description('run one chat turn and print its answer (with --output-schema: its output, as JSON)')
    .argument('[question]', 'the question; `-` reads it from stdin')
    .option('--file <path>', 'read the question from this file');
  return addTurnFlags(command, 'the turn')
    .option('--id <workflowId>', 'workflow id, used once (default turn-<time-sortable id>)')
    .option('--no-wait', 'print the workflow id and return at once')
    .option('--json', 'print only the result object as JSON')
    .option('--events', "print the turn's stream, one JSON event a line, and nothing else on stdout")
    .option('--task-queue <queue>', 'task queue (default mcp-turns or MCP_TURNS_TASK_QUEUE)')
    .option('--address <host:port>', 'Temporal address (default from TEMPORAL_ADDRESS / profile)')
    .option('--namespace <ns>', 'Temporal namespace')
    .option('--as <name>', 'who approves the calls you answer on the terminal (default: user@host)')
    .option('--config <file>', 'worker config (MCP servers, claude) for the worker this command runs when none polls the task queue (default MCP_TURNS_CONFIG)')
    .action(async (argument: string | undefined, opts: RunOptions, command: Command) => {
      if (opts.events && opts.json) throw new CliError('--events and --json: choose one', EXIT.badInput);
      if (opts.events && !opts.wait) throw new CliError('--events follows the turn: it cannot go with --no-wait', EXIT.badInput);
      const options = turnOptionsOf(opts);
      const input = turnInputOf(await readQuestion(argument, opts.file, listFlagsGiven(opts)), options);
      const stack = await openTurnStack(opts, cliSettings(command), { runWorker: opts.wait });
      const { client, address, namespace, taskQueue } = stack;
      try {
        let handle: ChatTurnHandle;
        try {
          // A named turn is started once: an id in use, running or closed, is refused.
          handle = await startChatTurn(client, input, { taskQueue, eagerStart: stack.inProcessWorker, ...(opts.id ? { workflowId: opts.id, workflowIdReusePolicy: 'REJECT_DUPLICATE' } : {}) });
        } catch (err) {
          if (err instanceof WorkflowExecutionAlreadyStartedError && opts.id) throw await takenIdError(client, opts.id);
          throw await withSearchAttributeFix(err, 'the turn', client, address);
        }
        const link = workflowUrl(address, namespace, handle.workflowId, stack.uiUrl);
        if (!opts.wait) {
          console.log(opts.json ? JSON.stringify({ workflowId: handle.workflowId, url: link }) : `started ${handle.workflowId}\n${link}`);
          return;
        }
        // The turn needs this command's own worker until it ends, whether or not anyone still reads the output.
        if (stack.inProcessWorker) holdExitOnClosedOutput();
        // On a terminal the stream's lines replace the progress lines; --events prints the stream as it is.
        const live = !opts.json && !opts.events && process.stdout.isTTY === true;
        // With an output schema stdout gets the output's JSON only: the stream's lines go to stderr.
        const view = input.output !== undefined ? process.stderr : process.stdout;
        const printer = live
          ? new StreamPrinter({ write: (text) => void view.write(text), dimSteps: opts.format && stack.settings.color })
          : undefined;
        // Ctrl-C leaves the turn running (a key at an approval question, else a signal).
        const interrupted = (): void => {
          if (process.stderr.isTTY) process.stderr.write('\n'); // after the terminal's ^C
          printer?.endLine();
          say(interruptedLine(handle.workflowId, stack.inProcessWorker));
          process.exit(EXIT.interrupted);
        };
        process.once('SIGINT', interrupted);
        // A call waiting for approval is asked about on a terminal, else the commands to decide it are printed.
        const ended = new AbortController();
        const follower = new TurnFollower({
          printer,
          events: opts.events === true,
          progress: !opts.json && !live && process.stderr.isTTY === true ? { lines: new ProgressLines(), write: say } : undefined,
          warn: say,
          // What the turn offers Claude: one line on a terminal's stderr, dimmed when colour is allowed.
          tools: !opts.json && !opts.events && process.stderr.isTTY === true ? (line) => say(stack.settings.color ? dimmed(line) : line) : undefined,
          approvals: {
            client,
            identity: deciderIdentity(opts.as),
            interactive: process.stdin.isTTY === true,
            connectionArgs: connectionArgs(opts),
            signal: ended.signal,
            ask: (question, signal) => askOnTerminal(question, signal, interrupted),
          },
        });
        const id = handle.workflowId;
        const stream = followStream(async (signal) => followTurn(client, id, { signal }), follower.onEvent);
        let result: ChatTurnResult;
        let turnEnded = false;
        try {
          result = await stack.whileWorking(handle.result());
          turnEnded = true;
        } catch (err) {
          if (err instanceof WorkflowFailedError) {
            turnEnded = true;
            throw new CliError(`turn ${handle.workflowId} failed: ${describeFailure(err)}`, EXIT.failed);
          }
          throw err;
        } finally {
          ended.abort();
          // The stream ends with the turn: its last events (the answer, the finish) are printed first.
          await stream.stop(turnEnded ? STREAM_END_GRACE_MS : 0);
          await follower.settled();
          printer?.endLine();
        }
        process.exitCode = exitCodeOf(result);
        const printout = runPrintout(result, {
          turnId: handle.workflowId,
          link,
          outputSchema: input.output !== undefined,
          json: opts.json === true,
          events: opts.events === true,
          answerShown: printer?.answerShown(handle.workflowId) === true,
        });
        for (const line of printout.stderr) say(line);
        if (printout.stdout !== undefined) console.log(printout.stdout);
      } finally {
        await stack.close();
      }
    });
}
