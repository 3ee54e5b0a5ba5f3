/**
 * Conversations from code: each conversation is one workflow (id = the conversation id) that
 * answers its messages in order, one child turn each. Callers send only the new message.
 */
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import type { chatTurn } from '../../workflows/chat-turn';
import type { conversation } from '../../workflows/conversation';
import { CONTINUING_AS_NEW, DUPLICATE_MESSAGE, NOT_THE_OWNER, type ConversationInput, type ConversationMessage, type ConversationStatus, type MessageAnswered, type MessageOutcome, type TurnOptions } from '../core/conversation';
import type { MessageParam } from '../core/contracts';
import { oneLine } from '../core/text';
import { describeFailure } from './describe-failure';
import { newId } from './ids';
import { taskQueueOf } from './client-task-queue';
import {
  cancelCurrentTurnSignal,
  closeConversationSignal,
  conversationStatusQuery,
  conversationTranscriptQuery,
  sendMessageUpdate,
  turnOfMessageQuery,
} from '../core/workflow-handlers';
import { parseTurnOptions } from '../schemas/turn-options';
import { withOutputSpec, type WithOutputRequest } from './output-schema';
import { requestControlProblems } from '../core/request-control-checks';
import { ChatTurnInputError } from '../schemas/turn-input';
import { checkId, ConversationIdSchema, MessageIdSchema } from '../schemas/ids';
import { WorkflowKindError } from './workflow-kind';
import { streamedInput, type StreamOption } from './chat-turn-client';
import { followTurn, subscribeTurn, type FollowedEvent, type SubscribeOptions } from './subscribe';
import type { TurnStreamEvent } from '../core/stream-events';
import { describeId } from './describe-id';
import { NotFoundError } from './not-found';
import { ownerSearchAttributes, ownerStartOptions, visibleTo, type Owner, type Viewer } from './owner';

export type ConversationHandle = WorkflowHandle<typeof conversation>;

/** Turn options as the client API takes them: the `output` schema may be a zod schema (src/client/output-schema.ts). */
export type TurnOptionsRequest = WithOutputRequest<TurnOptions>;

export interface ConversationOptions extends Omit<ConversationInput, 'options'> {
  /** Turn options for every message (a message's own options win field by field, `context` key by key). */
  options?: TurnOptionsRequest;
  /** @default "mcp-turns" */
  taskQueue?: string;
  /**
   * The workflow's summary in the Web UI and in lists. @default its first message, when a message
   * creates it ({@link submitMessage}); else "conversation <id>" (lists then show its first turn's question)
   */
  summary?: string;
  /** Whose conversation it is (src/client/owner.ts): its turns are theirs too. */
  owner?: Owner;
}

/** `conv-<time-sortable id>`: a new conversation id. */
export function newConversationId(now = Date.now()): string {
  return newId('conv', now);
}

/** Checks turn options as a turn would (zod, with a placeholder question); throws naming the bad field. */
function checkOptions(options: TurnOptions | undefined): void {
  if (!options) return;
  const problems = requestControlProblems(parseTurnOptions(options));
  if (problems.length) throw new ChatTurnInputError(problems);
}

/**
 * How a conversation workflow starts: with its id, a start of a running one returns that one. An
 * id whose workflow has closed is never started afresh: its history and its turns' ids are that
 * conversation's ({@link ConversationEndedError}).
 */
function startOptions(client: Client, conversationId: string, opts: ConversationOptions) {
  const { taskQueue, summary, owner, options, ...rest } = opts;
  const input: ConversationInput = { ...rest, ...(options ? { options: withOutputSpec(options) } : {}) };
  return {
    workflowId: conversationId,
    taskQueue: taskQueueOf(client, taskQueue),
    args: [input] satisfies [ConversationInput],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    staticSummary: summary ? oneLine(summary, 120) : `conversation ${conversationId}`,
    ...(owner ? { typedSearchAttributes: ownerSearchAttributes(owner), ...ownerStartOptions(owner) } : {}),
  };
}

/** A conversation that has closed (idle, closed, or ended otherwise) takes no more messages. */
export class ConversationEndedError extends Error {
  override name = 'ConversationEndedError';
  constructor(
    readonly conversationId: string,
    /** In the one vocabulary (src/core/run-status.ts): completed, timed_out, … */
    readonly status: string,
  ) {
    super(`conversation ${conversationId} has ended (${status}) and takes no more messages: start a new one (another id)`);
  }
}

/**
 * Why `conversationId` cannot take a message, when the id is the cause: it names a workflow
 * `viewer` may not see ({@link NotFoundError}, as if there were none), another kind of workflow
 * ({@link WorkflowKindError}) or a conversation that has ended ({@link ConversationEndedError}).
 * Undefined for a running conversation or a free id.
 */
async function refusalAt(client: Client, conversationId: string, viewer?: Viewer): Promise<Error | undefined> {
  const named = await describeId(client, conversationId);
  if (!named) return undefined;
  if (viewer && !visibleTo(viewer, named.searchAttributes)) return new NotFoundError(`no conversation ${conversationId}`);
  if (named.kind !== 'conversation') return new WorkflowKindError(conversationId, 'conversation', named.type);
  if (!named.running) return new ConversationEndedError(conversationId, named.status);
  return undefined;
}

/** `err`, or the id's own refusal when the server refused a start or a message there. */
async function explained(client: Client, conversationId: string, err: unknown, viewer?: Viewer): Promise<unknown> {
  if (!(err instanceof WorkflowExecutionAlreadyStartedError) && !(err instanceof WorkflowUpdateFailedError)) return err;
  if (err instanceof WorkflowUpdateFailedError && err.cause?.message === NOT_THE_OWNER) return new NotFoundError(`no conversation ${conversationId}`);
  return (await refusalAt(client, conversationId, viewer)) ?? err;
}

/** Starts a conversation, or returns the running one with that id. */
export async function startConversation(client: Client, conversationId: string, opts: ConversationOptions = {}): Promise<ConversationHandle> {
  checkId(ConversationIdSchema, conversationId, 'conversationId');
  checkOptions(opts.options ? withOutputSpec(opts.options) : undefined);
  try {
    return await client.workflow.start<typeof conversation>('conversation', startOptions(client, conversationId, opts));
  } catch (err) {
    throw await explained(client, conversationId, err);
  }
}

export interface SendMessageOptions {
  /**
   * The message's id, unique in the conversation: a message sent again with the same id (e.g. a
   * retry after a crash) is refused with `WorkflowUpdateFailedError` naming the turn that answers it
   * (its message starts with `DUPLICATE_MESSAGE` from src/core/conversation.ts), never asked twice.
   * Default: a new random id.
   */
  messageId?: string;
  /** This message's turn options, over the conversation's. */
  options?: TurnOptionsRequest;
  /** Used when the conversation does not exist yet (it is created with the message, in one call). */
  conversation?: ConversationOptions;
  /** Stream the message's turn (it sets the turn's `stream`) and hand each event to `onEvent`. */
  stream?: StreamOption;
  /**
   * Who sends it: a conversation this message creates is theirs, and one that is someone else's
   * refuses it with {@link NotFoundError}, as if there were none, unless they are an admin. Without
   * it, any conversation takes the message (the CLI, the client API).
   */
  sender?: { owner: Owner; admin: boolean };
  /** The slot of the sender's usage ledger the message's turn holds (src/client/usage-ledger-client.ts): the turn releases it at its end. */
  usageSlot?: string;
}

/** A sent message whose turn is under way. */
export interface SentMessage {
  conversationId: string;
  messageId: string;
  /** Waits for the message's turn to end (re-attaches after a connection failure). */
  outcome(): Promise<MessageOutcome>;
}

/**
 * Sends one message, creating the conversation if needed (update-with-start: create and send are
 * one call), and returns once the conversation has it; `outcome()` waits for its turn. A run about
 * to continue as new refuses new messages ({@link CONTINUING_AS_NEW}); `outcome()` then sends the
 * message again until the next run accepts it.
 */
export async function submitMessage(client: Client, conversationId: string, text: string, opts: SendMessageOptions = {}): Promise<SentMessage> {
  checkId(ConversationIdSchema, conversationId, 'conversationId');
  const messageId = checkId(MessageIdSchema, opts.messageId ?? newId('msg'), 'messageId');
  const own = opts.options ? withOutputSpec(opts.options) : undefined;
  checkOptions(own);
  checkOptions(opts.conversation?.options ? withOutputSpec(opts.conversation.options) : undefined);
  const options = opts.stream ? streamedInput(own ?? {}, opts.stream) : own;
  const sender = opts.sender;
  const viewer: Viewer | undefined = sender && !sender.admin ? { admin: false, ownerKey: sender.owner.key } : undefined;
  const message: ConversationMessage = {
    text,
    id: messageId,
    ...(options ? { options } : {}),
    ...(viewer ? { owner: viewer.ownerKey } : {}),
    ...(opts.usageSlot ? { usageSlot: opts.usageSlot } : {}),
  };
  const conversationOptions = { ...opts.conversation, ...(sender ? { owner: sender.owner } : {}) };
  const send = () =>
    client.workflow
      .startUpdateWithStart(sendMessageUpdate, {
        args: [message],
        updateId: messageId,
        waitForStage: 'ACCEPTED',
        // A conversation this message creates is titled by it: its first question.
        startWorkflowOperation: new WithStartWorkflowOperation<typeof conversation>('conversation', startOptions(client, conversationId, { ...conversationOptions, summary: opts.conversation?.summary ?? text })),
      })
      .catch(async (err: unknown) => {
        throw await explained(client, conversationId, err, viewer);
      });
  // The server accepts a message to a running workflow of any kind (only that workflow refuses it,
  // later) and refuses one to an ended conversation without saying why: one describe says first.
  // The conversation itself refuses a message from someone other than its owner: a conversation
  // another caller creates between this describe and the send is not theirs either.
  const refusal = await refusalAt(client, conversationId, viewer);
  if (refusal) throw refusal;
  let update = await send();
  return {
    conversationId,
    messageId,
    async outcome() {
      for (let attempt = 0; ; attempt++) {
        try {
          return await withTurnResult(client, await update.result());
        } catch (err) {
          // A run about to continue as new refused it: the next run takes it. A refused update
          // leaves nothing in history, so the same update id is sent again.
          if (err instanceof WorkflowUpdateFailedError && err.cause?.message === CONTINUING_AS_NEW) {
            await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
            update = await send();
            continue;
          }
          // Refused otherwise, or the turn's own failure: final. Anything else (the server
          // restarted, the connection broke) re-attaches to the same update by its id.
          if (err instanceof WorkflowUpdateFailedError) throw await explained(client, conversationId, err, viewer);
          return withTurnResult(client, await client.workflow.getHandle(conversationId).getUpdateHandle<MessageAnswered>(messageId).result());
        }
      }
    },
  };
}

/**
 * The turn that answered a message sent again, when `err` is the conversation's refusal of it
 * (`message already sent, answered by turn <id>`): the message was answered before (perhaps before
 * the conversation continued as new, whose new run remembers only its id). Else undefined.
 */
export function answeringTurnOfResend(err: unknown): string | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const message = err.cause?.message ?? '';
  return message.startsWith(DUPLICATE_MESSAGE) ? message.slice(DUPLICATE_MESSAGE.length).trim() || undefined : undefined;
}

/** A message sent now, or one sent before under the same id: the turn that answered it. */
export type SentOrFound = { sent: SentMessage; turnId?: undefined } | { turnId: string; sent?: undefined };

/**
 * {@link submitMessage} for a caller that sends a message again after a crash or a dropped
 * connection (the CLI's chat, `serve`): a message already sent under `messageId` is not asked
 * again, and its answering turn is named instead of the refusal.
 */
export async function sendOrFindMessage(
  client: Client,
  conversationId: string,
  text: string,
  opts: SendMessageOptions & { messageId: string },
): Promise<SentOrFound> {
  try {
    return { sent: await submitMessage(client, conversationId, text, opts) };
  } catch (err) {
    const turnId = answeringTurnOfResend(err);
    if (turnId) return { turnId };
    throw err;
  }
}

/**
 * A message's outcome: its answer with the turn's result, read from the turn; a turn that failed or
 * was cancelled has its failure in one line instead.
 */
export async function withTurnResult(client: Client, answered: MessageAnswered): Promise<MessageOutcome> {
  if (answered.error !== undefined) return answered;
  try {
    return { ...answered, result: await client.workflow.getHandle<typeof chatTurn>(answered.turnId).result() };
  } catch (err) {
    if (err instanceof WorkflowFailedError) return { ...answered, error: oneLine(describeFailure(err), 500) };
    throw err;
  }
}

/**
 * Sends one message (creating the conversation if needed) and waits for its turn's outcome; with
 * `stream`, follows the turn as it is written.
 */
export async function sendMessage(client: Client, conversationId: string, text: string, opts: SendMessageOptions = {}): Promise<MessageOutcome> {
  const sent = await submitMessage(client, conversationId, text, opts);
  if (!opts.stream) return sent.outcome();
  let streaming = false;
  // A turn that never starts (the conversation ended first) is not waited for once the outcome is in.
  const neverStarted = new AbortController();
  const outcome = sent.outcome().finally(() => {
    if (!streaming) neverStarted.abort();
  });
  for await (const event of messageTurnEvents(client, conversationId, sent.messageId, outcome, neverStarted.signal)) {
    streaming = true;
    opts.stream.onEvent(event);
  }
  return outcome;
}

/**
 * The stream of the turn that answers message `messageId`: the conversation names the turn once it
 * has the message (a message refused by a run about to continue as new is named by the next run,
 * once it takes it), else the message's `outcome` does; a queued message's turn is waited for. Ends
 * without events when `signal` aborts first, or when the outcome is in and names no turn.
 */
export function messageTurnEvents(
  client: Client,
  conversationId: string,
  messageId: string,
  outcome: Promise<MessageOutcome>,
  signal?: AbortSignal,
): AsyncGenerator<TurnStreamEvent> {
  return messageTurn(client, conversationId, messageId, outcome, signal, subscribeTurn);
}

/** `messageTurnEvents`, followed: with the turn's failed attempts (`followTurn`). */
export function followMessageTurn(
  client: Client,
  conversationId: string,
  messageId: string,
  outcome: Promise<MessageOutcome>,
  signal?: AbortSignal,
): AsyncGenerator<FollowedEvent> {
  return messageTurn(client, conversationId, messageId, outcome, signal, followTurn);
}

async function* messageTurn<E>(
  client: Client,
  conversationId: string,
  messageId: string,
  outcome: Promise<MessageOutcome>,
  signal: AbortSignal | undefined,
  open: (client: Client, turnId: string, options: SubscribeOptions) => AsyncIterable<E>,
): AsyncGenerator<E> {
  let known: string | undefined;
  let settled = false;
  const settling = outcome.then(
    (o) => {
      known = o.turnId;
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (let wait = 50; !signal?.aborted; wait = Math.min(1000, wait * 2)) {
    const turnId = (await messageTurnId(client, conversationId, messageId).catch(() => undefined)) ?? known;
    if (turnId) {
      yield* open(client, turnId, { waitForStart: true, ...(signal ? { signal } : {}) });
      return;
    }
    if (settled) return;
    await Promise.race([settling, new Promise((r) => setTimeout(r, wait))]);
  }
}

/** The turn that answers message `messageId`, once the conversation has the message. */
export async function messageTurnId(client: Client, conversationId: string, messageId: string): Promise<string | undefined> {
  return client.workflow.getHandle(conversationId).query(turnOfMessageQuery, messageId);
}

export interface ConversationView {
  status: ConversationStatus;
  /** Every answered turn's messages, in order. */
  transcript: MessageParam[];
}

/** A running conversation's status and transcript. */
export async function getConversation(client: Client, conversationId: string): Promise<ConversationView> {
  const handle = client.workflow.getHandle(conversationId);
  const [status, transcript] = await Promise.all([handle.query(conversationStatusQuery), handle.query(conversationTranscriptQuery)]);
  return { status, transcript };
}

/** Cancels the turn the conversation is running now (the next queued message goes on). */
export async function cancelCurrentTurn(client: Client, conversationId: string): Promise<void> {
  await client.workflow.getHandle(conversationId).signal(cancelCurrentTurnSignal);
}

/** Closes the conversation once its queued messages are answered. */
export async function closeConversation(client: Client, conversationId: string): Promise<void> {
  await client.workflow.getHandle(conversationId).signal(closeConversationSignal);
}
