/**
 * Starting and reading chat turns from code. Plain-JS friendly: every function takes a Temporal
 * `Client` and plain objects.
 */
import { ownerStartOptions, type Owner } from './owner';
import type { Client, WorkflowHandle, WorkflowHandleWithStartDetails, WorkflowIdReusePolicy } from '@temporalio/client';
import type { chatTurn } from '../../workflows/chat-turn';
import { ChatTurnInputError, parseChatTurnInput, type ChatTurnInput } from '../schemas/turn-input';
import { requestControlProblems } from '../core/request-control-checks';
import { withOutputSpec, type OutputOf, type OutputSchema, type TypedChatTurnResult, type WithOutputRequest } from './output-schema';

/** A turn's input as the client API takes it: its `output` schema may be a zod schema. */
export type ChatTurnRequest<S extends OutputSchema = OutputSchema> = WithOutputRequest<ChatTurnInput, S>;
import { checkId, TurnIdSchema } from '../schemas/ids';
import { resolveTurn } from '../core/resolve-turn';
import type { TurnProgress } from '../core/turn-result';
import { turnProgressQuery } from '../core/workflow-handlers';
import { turnStartSearchAttributes } from '../core/search-attributes';
import { taskQueueOf } from './client-task-queue';
import { oneLine } from '../core/text';
import { newId } from './ids';
import type { TurnStreamEvent } from '../core/stream-events';
import { subscribeTurn } from './subscribe';

export type ChatTurnHandle = WorkflowHandle<typeof chatTurn>;

export interface StartChatTurnOptions {
  /**
   * Workflow id; default `turn-<time-sortable id>`. Starting an id that is already running fails; an
   * id ending `-turn-<n>` is refused (conversations' turns have such ids).
   */
  workflowId?: string;
  /** @default "mcp-turns" */
  taskQueue?: string;
  /** Batch name, set as the `McpTurnsBatch` search attribute. */
  batch?: string;
  /**
   * Whose turn it is (src/client/owner.ts): only they and admins see it through `serve`, and its
   * tasks are dispatched fairly among owners (the owner's key is its fairness key).
   */
  owner?: Owner;
  /** The slot of its owner's usage ledger it holds (src/client/usage-ledger-client.ts): it releases it at its end. */
  usageSlot?: string;
  /**
   * Whether `workflowId` may name a closed workflow (a new run starts under it). `REJECT_DUPLICATE`
   * refuses it as a running one is refused: `WorkflowExecutionAlreadyStartedError`.
   * @default "ALLOW_DUPLICATE"
   */
  workflowIdReusePolicy?: WorkflowIdReusePolicy;
  /**
   * Eager workflow start: the server hands the turn's first workflow task back with the start, to
   * a worker of this process on the same connection (the client must be made on the worker's
   * `NativeConnection`; with no free slot there the task goes through the queue as usual).
   * @default false
   */
  eagerStart?: boolean;
}

/** The turn's settings for the UI: the input's, defaults applied (the model is the worker's unless named). */
function staticDetails(checked: ChatTurnInput): string {
  const input = resolveTurn(checked, {});
  const lines = [
    `**model** ${checked.model ?? "the worker's default"}`,
    `**servers** ${input.servers?.join(', ') ?? 'all configured'}`,
    `**loop** ${input.loopPolicy}, max ${input.maxSteps} steps` +
      (input.maxToolCalls ? `, max ${input.maxToolCalls} tool calls` : '') +
      (input.maxTokens ? `, max ${input.maxTokens} tokens` : ''),
    input.output ? `**answer** a JSON object of the turn's schema${input.output.name ? ` (${input.output.name})` : ''}` : `**formatter** ${input.format ? 'on' : 'off'}`,
  ];
  const controls = [
    input.effort ? `effort ${input.effort}` : undefined,
    input.toolChoice !== undefined ? `tool choice ${typeof input.toolChoice === 'string' ? input.toolChoice : (input.toolChoice.name ?? input.toolChoice.type)}` : undefined,
    input.stopSequences ? `${input.stopSequences.length} stop sequence${input.stopSequences.length > 1 ? 's' : ''}` : undefined,
    input.cache ? `cache ${input.cache.ttl}` : undefined,
  ].filter((c): c is string => c !== undefined);
  if (controls.length) lines.push(`**requests** ${controls.join(', ')}`);
  if (input.tools?.allow) lines.push(`**allow** ${input.tools.allow.join(', ')}`);
  if (input.tools?.deny) lines.push(`**deny** ${input.tools.deny.join(', ')}`);
  if (input.history?.length) lines.push(`**history** ${input.history.length} prior messages`);
  return lines.join('\n');
}

/**
 * Starts one chat turn with its input as checked: a bad field throws `ChatTurnInputError`
 * naming it, and an id that cannot be a turn's (too long, or a conversation's turn id form
 * `…-turn-<n>`) `InvalidIdError`, before anything is started.
 */
export async function startChatTurn(
  client: Client,
  input: ChatTurnRequest,
  options: StartChatTurnOptions = {},
): Promise<WorkflowHandleWithStartDetails<typeof chatTurn>> {
  const params = parseChatTurnInput(withOutputSpec(input));
  const controls = requestControlProblems(params);
  if (controls.length) throw new ChatTurnInputError(controls);
  const workflowId = options.workflowId !== undefined ? checkId(TurnIdSchema, options.workflowId, 'workflowId') : newId('turn');
  return client.workflow.start<typeof chatTurn>('chatTurn', {
    taskQueue: taskQueueOf(client, options.taskQueue),
    workflowId,
    ...(options.workflowIdReusePolicy ? { workflowIdReusePolicy: options.workflowIdReusePolicy } : {}),
    // The checked input (its question trimmed) is what starts the turn.
    args: [params],
    staticSummary: oneLine(params.question, 120),
    staticDetails: staticDetails(params),
    typedSearchAttributes: turnStartSearchAttributes({ model: params.model, batch: options.batch, owner: options.owner?.key }),
    ...ownerStartOptions(options.owner, options.usageSlot),
    ...(options.eagerStart ? { requestEagerStart: true } : {}),
  });
}

/** How a caller follows a turn as it is written. */
export interface StreamOption {
  /** Called with every event of the turn's stream, in order, as it is written. */
  onEvent: (event: TurnStreamEvent) => void;
  /** Stream thinking too. @default false */
  reasoning?: boolean;
}

export interface ExecuteChatTurnOptions extends StartChatTurnOptions {
  /** Stream the turn (it sets the input's `stream`) and hand each event to `onEvent`. */
  stream?: StreamOption;
}

/** The input with streaming on as `stream` asks (an input that already asks keeps its own setting). */
export function streamedInput<T extends { stream?: ChatTurnInput['stream'] }>(input: T, stream: StreamOption | undefined): T {
  if (!stream || input.stream) return input;
  return { ...input, stream: stream.reasoning ? { reasoning: true } : true };
}

/**
 * Starts a turn and waits for its result; with `stream`, follows it as it is written. With
 * `output: { schema }` (a zod schema or JSON Schema), the result's `output` is typed from it.
 */
export async function executeChatTurn<S extends OutputSchema = OutputSchema>(
  client: Client,
  input: ChatTurnRequest<S>,
  options: ExecuteChatTurnOptions = {},
): Promise<TypedChatTurnResult<OutputOf<S>>> {
  const { stream, ...start } = options;
  const handle = await startChatTurn(client, streamedInput(input, stream), start);
  if (stream) await forEachEvent(subscribeTurn(client, handle.workflowId), stream.onEvent);
  return (await handle.result()) as TypedChatTurnResult<OutputOf<S>>;
}

/** Hands every event of `events` to `onEvent`, in order. */
export async function forEachEvent(events: AsyncIterable<TurnStreamEvent>, onEvent: (event: TurnStreamEvent) => void): Promise<void> {
  for await (const event of events) onEvent(event);
}

/** Live progress of a running (or finished) turn: phase, step, tool calls so far, usage so far. */
export async function getTurnProgress(handle: WorkflowHandle): Promise<TurnProgress> {
  return handle.query(turnProgressQuery);
}

/** Cancels a turn; activities in flight are cancelled through their heartbeats. */
export async function cancelTurn(handle: WorkflowHandle): Promise<void> {
  await handle.cancel();
}
