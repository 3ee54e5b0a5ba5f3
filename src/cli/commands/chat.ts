/**
 * `mcp-turns chat [--id ID]`: a conversation at the terminal. Each line typed is one message to the
 * conversation workflow (created on the first message); while it is answered, the running turn's
 * steps and tool calls are shown, and a call waiting for approval is asked about as `run` does.
 * Without a terminal, each line of stdin is one message, sent once the one before it is answered.
 *
 * After any crash (of this command, the worker or the server) `chat --id ID` goes on: the
 * conversation workflow keeps the history, and a message sent but not answered yet is kept in a
 * small local file (pending-messages.ts) and sent again with the same message id, which the
 * conversation answers once.
 */
import { Command } from 'commander';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import {
  answeringTurnOfResend,
  closeConversation,
  followMessageTurn,
  newConversationId,
  messageTurnId,
  sendOrFindMessage,
  withTurnResult,
  type SentMessage,
} from '../../client/conversation-client';
import { workflowUrl } from '../../client/ui-link';
import { describeId, endedPhrase } from '../../client/describe-id';
import { newId } from '../../client/ids';
import { conversationTurnIndex, type MessageOutcome, type TurnOptions } from '../../core/conversation';
import { oneLine } from '../../core/text';
import { connectionArgs } from '../approval-prompt';
import { CliError } from '../cli-error';
import { ProgressLines } from '../progress-lines';
import { STREAM_END_GRACE_MS, TurnFollower } from '../turn-follower';
import { deciderIdentity } from '../decider-identity';
import { EXIT } from '../exit-codes';
import { InputLines } from '../input-lines';
import { conversationsDir, PendingMessages, type PendingMessage } from '../pending-messages';
import { cliSettings } from '../cli-settings';
import { withSearchAttributeFix } from '../search-attribute-fix';
import { openTurnStack, type TurnStack } from '../turn-stack';
import { droppedToolsLine, outputJson, toolCallLine } from '../render';
import { answerNotes, expectsOutput } from '../output-lines';
import { addTurnFlags, turnOptionsOf, type TurnFlags } from '../turn-flags';
import { dimmed, followStream, StreamPrinter, type FollowedStream } from '../stream-printer';
import { serverToolCostNote } from '../../core/usage';

interface ChatOptions extends TurnFlags {
  id?: string;
  json?: boolean;
  events?: boolean;
  taskQueue?: string;
  address?: string;
  namespace?: string;
  as?: string;
  config?: string;
}

const say = (line: string): void => void process.stderr.write(`${line}\n`);

/** A message's outcome from its turn, for a message answered before this command asked again. */
function outcomeFromTurn(client: Client, turnId: string): Promise<MessageOutcome> {
  return withTurnResult(client, { index: conversationTurnIndex(turnId), turnId });
}


class Chat {
  private readonly pending: PendingMessages;
  /** On a terminal (and not --json / --events): the turns' text and tool calls as they are written. */
  private readonly printer: StreamPrinter | undefined;
  /** The dropped-tools lines printed so far: each once a session, not once a message. */
  private readonly droppedShown = new Set<string>();

  constructor(
    private readonly stack: TurnStack,
    private readonly conversationId: string,
    private readonly opts: ChatOptions,
    private readonly options: TurnOptions,
    /** The session's input: approval questions are asked on it. */
    private readonly lines: InputLines,
    /** The conversation's messages not yet answered, kept in the state directory. */
    pending: PendingMessages,
  ) {
    this.pending = pending;
    // With an output schema stdout gets each answer's JSON: the stream's lines go to stderr.
    const view = options.output !== undefined ? process.stderr : process.stdout;
    if (!opts.json && !opts.events && process.stdout.isTTY === true)
      this.printer = new StreamPrinter({ write: (text) => void view.write(text), dimSteps: opts.format && stack.settings.color });
  }

  /**
   * Follows the turn that answers message `messageId` (`followMessageTurn`): its events go to a
   * {@link TurnFollower}, whose approval prompts end with `ended`.
   */
  private followTurn(messageId: string, outcome: Promise<MessageOutcome>, ended: AbortSignal): { stream: FollowedStream; follower: TurnFollower; progress: ProgressLines } {
    const { client, conversationId } = this;
    const progress = new ProgressLines('  ');
    const follower = new TurnFollower({
      printer: this.printer,
      events: this.opts.events === true,
      // On a terminal the stream's lines replace the progress lines.
      progress: { lines: progress, write: say },
      warn: (line) => say(`  ${line}`),
      // What the turn offers Claude: one line on a terminal's stderr, dimmed when colour is allowed.
      tools:
        !this.opts.json && !this.opts.events && process.stderr.isTTY === true
          ? (line) => say(this.stack.settings.color ? dimmed(`  ${line}`) : `  ${line}`)
          : undefined,
      approvals: {
        client,
        identity: deciderIdentity(this.opts.as),
        interactive: this.lines.terminal,
        connectionArgs: connectionArgs(this.opts),
        signal: ended,
        ask: (question, asked) => this.lines.question(question, asked),
      },
    });
    const stream = followStream(async (signal) => followMessageTurn(client, conversationId, messageId, outcome, signal), follower.onEvent);
    return { stream, follower, progress };
  }

  get client(): Client {
    return this.stack.client;
  }

  /** Messages a crashed session sent without printing their answers: sent again, same ids. */
  unanswered(): PendingMessage[] {
    return this.pending.list();
  }

  /**
   * What becomes of a message an earlier session sent without printing its answer, in one line:
   * the conversation never received it (it is sent again), or it did (its answer, now or when its
   * turn ends, is printed; nothing is asked again).
   */
  async resumeLine(message: PendingMessage): Promise<string> {
    const text = oneLine(message.text, 100);
    const turnId = await messageTurnId(this.client, this.conversationId, message.messageId).catch(() => undefined);
    if (turnId === undefined) return `sending again, not received: ${text}`;
    const turn = await describeId(this.client, turnId);
    return turn && !turn.running ? `answered after the last session left: ${text}` : `received before the last session left, answered now: ${text}`;
  }

  /** Sends a new message and prints its outcome. */
  async send(text: string): Promise<void> {
    const messageId = newId('msg');
    await this.deliver(this.pending.add({ messageId, text }));
  }

  /** Sends (or sends again) a recorded message, follows its turn and prints its outcome once it is in. */
  async deliver(message: PendingMessage): Promise<void> {
    let sent: SentMessage;
    try {
      const sentOrFound = await this.stack.whileWorking(
        sendOrFindMessage(this.client, this.conversationId, message.text, {
          messageId: message.messageId,
          options: this.options,
          conversation: { taskQueue: this.stack.taskQueue },
        }),
      );
      if (sentOrFound.turnId !== undefined) {
        this.print(message, await outcomeFromTurn(this.client, sentOrFound.turnId));
        return;
      }
      sent = sentOrFound.sent;
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) throw new CliError(`message not accepted: ${err.cause?.message ?? err.message}`);
      throw await withSearchAttributeFix(err, 'the conversation', this.client, this.stack.address);
    }
    const ended = new AbortController();
    const outcomeOf = this.stack.whileWorking(sent.outcome());
    const { stream, follower, progress } = this.followTurn(message.messageId, outcomeOf, ended.signal);
    let outcome: MessageOutcome;
    let answered = false;
    try {
      outcome = await outcomeOf;
      answered = true;
    } catch (err) {
      const turnId = answeringTurnOfResend(err);
      if (turnId) outcome = await outcomeFromTurn(this.client, turnId);
      else if (err instanceof WorkflowUpdateFailedError) throw new CliError(`message ${message.messageId} failed: ${err.cause?.message ?? err.message}`);
      else throw err;
    } finally {
      ended.abort();
      // The stream ends with the turn: its last events (the answer, the finish) are printed first.
      await stream.stop(answered ? STREAM_END_GRACE_MS : 0);
      await follower.settled();
      this.printer?.endLine();
    }
    // Tool calls the stream did not show (it stopped before them): from the result (the printer showed them on a terminal).
    if (!this.printer && !this.opts.events)
      for (const c of outcome.result?.toolCalls ?? []) if (!progress.printedCalls.has(`${outcome.turnId}:${c.id}`)) say(toolCallLine(c));
    this.print(message, outcome);
  }

  /** Prints an outcome (the answer on stdout) and forgets the pending message. */
  private print(message: PendingMessage, outcome: MessageOutcome): void {
    const result = outcome.result;
    // An output asked for by this session's flags, or by the conversation's own options (its result says so).
    const structured = result !== undefined && expectsOutput(result, this.options.output !== undefined);
    if (this.opts.events) {
      // Only the stream on stdout; how the turn ended, on stderr.
      say(result ? `  turn ${outcome.turnId} · ${result.stopReason}` : `  turn ${outcome.turnId}: ${outcome.error ?? 'no answer'}`);
    } else if (this.opts.json) {
      const line = {
        conversationId: this.conversationId,
        messageId: message.messageId,
        index: outcome.index,
        turnId: outcome.turnId,
        question: message.text,
        ...(result
          ? { answer: result.response.conversation, stopReason: result.stopReason, toolCalls: result.toolCalls.length, usage: result.usage, costUsd: result.costUsd }
          : {}),
        ...(result?.output !== undefined ? { output: result.output } : {}),
        ...(result?.outputReport?.problems ? { outputProblems: result.outputReport.problems } : {}),
        ...(result?.stopSequence !== undefined ? { stopSequence: result.stopSequence } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
        ...(result?.compaction ? { compaction: { toolResultsReplaced: result.compaction.toolResultsReplaced, messagesDropped: result.compaction.messagesDropped } } : {}),
        ...(result?.droppedTools.length ? { droppedTools: result.droppedTools } : {}),
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    } else if (result) {
      // With an output: its JSON (none: nothing, the notes below say why); else the answer, unless it streamed.
      if (result.output !== undefined) process.stdout.write(`${outputJson(result.output)}\n`);
      else if (!structured && !this.printer?.answerShown(outcome.turnId)) process.stdout.write(`${result.response.conversation.trim() || '(empty answer)'}\n`);
      for (const a of result.response.artifacts) (structured ? process.stderr : process.stdout).write(`── artifact ${a.id}: ${a.title} (${a.type}) ──\n${a.content}\n`);
      const u = result.usage;
      const compacted = result.compaction
        ? ` · compacted: ${result.compaction.toolResultsReplaced} tool results, ${result.compaction.messagesDropped} messages`
        : '';
      say(
        `  turn ${outcome.turnId} · ${result.stopReason} · ${result.toolCalls.length} tool call${result.toolCalls.length === 1 ? '' : 's'} · ` +
          `${u.inputTokens} in / ${u.outputTokens} out tokens · $${result.costUsd.toFixed(4)}${serverToolCostNote(u)}${compacted}`,
      );
    } else {
      say(`  turn ${outcome.turnId}: ${outcome.error ?? 'no answer'}`);
    }
    if (result) for (const note of answerNotes(result, outcome.turnId, structured)) say(`  ${note}`);
    const dropped = result && droppedToolsLine(result.droppedTools);
    if (dropped && !this.droppedShown.has(dropped)) {
      this.droppedShown.add(dropped);
      say(`  ${dropped}`);
    }
    this.pending.remove(message.messageId);
  }
}

/**
 * Whether the id names a new or a running conversation. Refuses an id of another kind of workflow,
 * and a conversation that has ended (a message would start it afresh, without its history); the
 * messages left pending for an ended conversation are forgotten (it answered what it had accepted
 * before it ended; `show` prints it).
 */
async function checkConversation(client: Client, id: string, pending: PendingMessages): Promise<'new' | 'running'> {
  const named = await describeId(client, id);
  if (!named) return 'new';
  if (named.kind !== 'conversation') throw new CliError(`${id} is a ${named.type} workflow, not a conversation`, 2);
  if (named.running) return 'running';
  for (const message of pending.list()) {
    say(`not sent again: ${oneLine(message.text, 100)} (the conversation has ended)`);
    pending.remove(message.messageId);
  }
  throw new CliError(
    `conversation ${id} has ended (${endedPhrase(named)}) ` +
      `and takes no more messages: \`mcp-turns show ${id}\` prints it; \`mcp-turns chat\` starts a new one`,
  );
}

export function chatCommand(): Command {
  const command = new Command('chat')
    .description('chat in one conversation: each line is a message, answered in order with the history so far (resume with --id after any crash)')
    .option('--id <conversationId>', 'the conversation to continue or start (default: a new conv-<time-sortable id>)');
  return addTurnFlags(command, 'each message')
    .option('--json', 'print one JSON line per answered message')
    .option('--events', "print each message's turn as its stream, one JSON event a line, and nothing else on stdout")
    .option('--task-queue <queue>', 'task queue (default mcp-turns or MCP_TURNS_TASK_QUEUE)')
    .option('--address <host:port>', 'Temporal address (default from TEMPORAL_ADDRESS / profile)')
    .option('--namespace <ns>', 'Temporal namespace')
    .option('--as <name>', 'who approves the calls you answer on the terminal (default: user@host)')
    .option('--config <file>', 'worker config (MCP servers, claude) for the worker this command runs when none polls the task queue (default MCP_TURNS_CONFIG)')
    .action(async (opts: ChatOptions, command: Command) => {
      if (opts.events && opts.json) throw new CliError('--events and --json: choose one', EXIT.badInput);
      const settings = cliSettings(command);
      const options = turnOptionsOf(opts);
      const stack = await openTurnStack(opts, settings);
      let lines: InputLines | undefined;
      try {
        const conversationId = opts.id ?? newConversationId();
        const pending = new PendingMessages(conversationId, conversationsDir(settings.stateDir));
        const state = await checkConversation(stack.client, conversationId, pending);
        say(
          `conversation ${conversationId}${state === 'running' ? ' (continued)' : ''} · ` +
            `${workflowUrl(stack.address, stack.namespace, conversationId, stack.uiUrl)}`,
        );
        say(`  resume any time with: mcp-turns chat --id ${conversationId}   (/close ends the conversation, Ctrl-D leaves it open)`);
        // Ctrl-C while a message is answered (a key to the session's reader on a terminal, else a
        // signal): leave; the answer is kept. Ctrl-C at the prompt ends the input, as Ctrl-D does.
        const leave = (): void => {
          lines?.close();
          const goesOn = stack.inProcessWorker ? 'it goes on once a worker runs it (this command\'s worker stopped with it)' : 'it goes on';
          say(`\nleft conversation ${conversationId}; ${goesOn}. mcp-turns chat --id ${conversationId} prints the answer`);
          process.exit(EXIT.interrupted);
        };
        process.once('SIGINT', leave);
        // Read from now on: lines typed while unanswered messages are sent again wait their turn.
        lines = new InputLines({ onInterrupt: leave });
        const chat = new Chat(stack, conversationId, opts, options, lines, pending);
        for (const message of chat.unanswered()) {
          say(await chat.resumeLine(message));
          await chat.deliver(message);
        }
        for (let raw = await lines.next(); raw !== undefined; raw = await lines.next()) {
          const line = raw.trim();
          if (!line) continue;
          if (line === '/quit' || line === '/exit') break;
          if (line === '/close') {
            await closeConversation(stack.client, conversationId);
            say(`conversation ${conversationId} closed`);
            return;
          }
          await chat.send(line);
        }
        say(`conversation ${conversationId} stays open: mcp-turns chat --id ${conversationId}`);
      } finally {
        lines?.close();
        await stack.close();
      }
    });
}
