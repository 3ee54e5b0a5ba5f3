/**
 * Conversations over HTTP: `GET /v1/conversations` lists them (newest first, as visibility has
 * them: a conversation a few seconds old may not be listed yet), `GET /v1/conversations/{id}` reads
 * one (its status, its turns' ids, its transcript), `POST /v1/conversations/{id}/messages` sends one
 * message (creating the conversation with it) and streams its answer's turn as it is written.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ConversationEndedError, getConversation, messageTurnEvents, messageTurnId, sendOrFindMessage, type SentOrFound } from '../../client/conversation-client';
import { newId } from '../../client/ids';
import { NoWorkerError, requireWorker, runHealth, runHealthLines } from '../../client/run-health';
import { getConversationSummary } from '../../client/conversation-summary';
import { listWorkflows } from '../../client/workflow-list';
import { WorkflowKindError } from '../../client/workflow-kind';
import { ConversationIdSchema, MessageIdSchema } from '../../schemas/ids';
import { runStatusOf } from '../../client/run-status';
import { conversationTurnId, type ConversationStatus, type TurnOptions } from '../../core/conversation';
import type { TurnStreamEvent } from '../../core/stream-events';
import { subscribeTurn } from '../../client/subscribe';
import { withCaller } from '../caller-context';
import { admitCallerTurn, type AdmittedSlot } from '../usage-limits';
import { messageSlot } from '../../core/usage-ledger';
import { viewerOf, type Caller } from '../caller';
import { callerOfRequest } from '../request-guard';
import { NotFoundError } from '../../client/not-found';
import { visibleTo } from '../../client/owner';
import { asFieldRefusal, HttpError, notFound } from '../http-error';
import { uiLink, type ServeContext } from '../serve-context';
import { SseStream, wantsEventStream } from '../sse';
import { pipeTurnEvents } from '../turn-event-stream';
import { ErrorBody, IdParams, Json, TurnOptionsBody } from './schemas';

const MessageBody = z.object({
  text: z.string().trim().min(1, 'the message is empty'),
  messageId: MessageIdSchema.optional()
    .describe('Unique in the conversation: the same message sent again is answered once (its turn is streamed again).'),
  options: TurnOptionsBody.optional(),
});

const ListQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).optional() });

export function conversationRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/v1/conversations', { schema: { summary: "List the caller's conversations (an admin's: everyone's, each with its owner), newest first", querystring: ListQuery } }, async (request) => {
    const viewer = viewerOf(callerOfRequest(request));
    const rows = await listWorkflows(ctx.client, { kind: 'conversation', limit: request.query.limit ?? 50, viewer });
    return { conversations: rows.map(({ type: _type, ...row }) => row) };
  });

  r.get(
    '/v1/conversations/:id',
    { schema: { summary: 'A conversation: status, turns and transcript', params: IdParams, response: { 200: Json('{ id, status, state, turns, queued, currentTurnId?, turnIds, transcript }; while no worker can run it: { id, status, blocked, turns, turnIds } at once'), 404: ErrorBody } } },
    async (request) => readConversation(ctx, callerOfRequest(request), request.params.id),
  );

  r.post(
    '/v1/conversations/:id/messages',
    {
      schema: {
        summary: 'Send one message and stream its answer',
        description:
          "Creates the conversation with its first message. Streams the message's turn as server-sent events (as GET /v1/turns/{id}/events does); with Accept: application/json, answers 202 with the turn's id instead.",
        params: z.object({ id: ConversationIdSchema }),
        body: MessageBody,
        response: { 202: Json('{ conversationId, messageId, turnId, links } (Accept: application/json)'), 400: ErrorBody, 409: ErrorBody },
      },
    },
    async (request, reply) => {
      const conversationId = request.params.id;
      const messageId = request.body.messageId ?? newId('msg');
      const sent = await sendOrFindTurn(ctx, callerOfRequest(request), conversationId, request.body.text, messageId, request.body.options);
      if (!wantsEventStream(request) && /json/.test(request.headers.accept ?? '')) {
        const turnId = sent.turnId ?? (await messageTurnId(ctx.client, conversationId, messageId));
        const links = turnId ? { events: `/v1/turns/${encodeURIComponent(turnId)}/events`, ui: uiLink(ctx, turnId) } : {};
        return reply.code(202).send({ conversationId, messageId, ...(turnId ? { turnId } : {}), links });
      }
      const stop = new AbortController();
      await pipeTurnEvents(new SseStream(reply), sentTurnEvents(ctx, conversationId, sent, stop.signal), stop, ctx);
      return reply;
    },
  );
}

/**
 * Sends message `messageId` for `caller` (its turn's `context.user`) with streaming on, creating
 * the conversation (theirs) if needed; a message sent before with that id is not asked again: its
 * turn is named instead. A conversation that is someone else's is 404, unless the caller is an admin.
 */
export async function sendOrFindTurn(
  ctx: ServeContext,
  caller: Caller,
  conversationId: string,
  text: string,
  messageId: string,
  options: TurnOptions = {},
): Promise<SentOrFound> {
  let admitted: AdmittedSlot | undefined;
  try {
    // A message is accepted only by a worker running the conversation: with none, the request would hang.
    await requireWorker(ctx.client, ctx.taskQueue);
    admitted = await admitCallerTurn(ctx, caller, messageSlot(conversationId, messageId));
    const sent = await sendOrFindMessage(ctx.client, conversationId, text, {
      messageId,
      options: withCaller({ stream: true, ...options }, caller),
      // A conversation this message creates is titled by it (submitMessage's rule).
      conversation: { taskQueue: ctx.taskQueue },
      sender: { owner: caller.owner, admin: caller.admin },
      ...(admitted.slot ? { usageSlot: admitted.slot } : {}),
    });
    // Sent before (its turn is named): the slot taken now for it holds nothing.
    if (sent.turnId !== undefined) await admitted.giveBack();
    return sent;
  } catch (err) {
    await admitted?.giveBack();
    if (err instanceof NotFoundError) throw notFound(`conversation ${conversationId}`);
    if (err instanceof NoWorkerError) throw new HttpError(503, err.message);
    if (err instanceof WorkflowUpdateFailedError) throw new HttpError(409, err.cause?.message ?? err.message);
    if (err instanceof WorkflowKindError || err instanceof ConversationEndedError) throw new HttpError(409, err.message);
    throw asFieldRefusal(err, 'body.options');
  }
}

/** The events of the turn that answers a sent (or found) message. */
export function sentTurnEvents(ctx: ServeContext, conversationId: string, sent: SentOrFound, signal: AbortSignal): AsyncIterable<TurnStreamEvent> {
  if (sent.turnId !== undefined) return subscribeTurn(ctx.client, sent.turnId, { waitForStart: true, signal });
  const s = sent.sent;
  // The outcome only names the turn when the conversation cannot: its wait ends with the request.
  const outcome = ctx.client.withAbortSignal(signal, () => s.outcome());
  return messageTurnEvents(ctx.client, conversationId, s.messageId, outcome, signal);
}

async function readConversation(ctx: ServeContext, caller: Caller, id: string) {
  const handle = ctx.client.workflow.getHandle(id);
  let described;
  try {
    described = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw notFound(`conversation ${id}`);
    throw err;
  }
  if (!visibleTo(viewerOf(caller), described.typedSearchAttributes)) throw notFound(`conversation ${id}`);
  if (described.type !== 'conversation') throw new HttpError(404, `${id} is not a conversation (it is a ${described.type} workflow)`);
  const status = runStatusOf(described.status.name);
  // A running conversation no worker can run answers no query: what its turns record, and why.
  const health = described.status.name === 'RUNNING' ? await runHealth(ctx.client, described) : undefined;
  if (health && (health.noWorker || health.failingTask)) {
    const summary = await getConversationSummary(ctx.client, id);
    const turnIds = summary.turns.map((t) => t.turnId);
    return { id, status, blocked: runHealthLines(health, id), turns: turnIds.length, queued: 0, turnIds, links: { ui: uiLink(ctx, id) } };
  }
  try {
    const view = await getConversation(ctx.client, id);
    return { id, status, ...conversationFields(id, view.status), transcript: view.transcript, links: { ui: uiLink(ctx, id) } };
  } catch (err) {
    // A closed conversation whose queries no worker answers: its turns are still readable one by one.
    ctx.log(`serve: conversation ${id} did not answer its queries: ${(err as Error).message}`);
    return { id, status, turns: 0, queued: 0, turnIds: [], links: { ui: uiLink(ctx, id) } };
  }
}

function conversationFields(id: string, status: ConversationStatus) {
  const turnIds = Array.from({ length: status.turns }, (_, i) => conversationTurnId(id, i));
  if (status.currentTurnId && !turnIds.includes(status.currentTurnId)) turnIds.push(status.currentTurnId);
  return {
    state: status.state,
    turns: status.turns,
    queued: status.queued,
    ...(status.currentTurnId ? { currentTurnId: status.currentTurnId } : {}),
    turnIds,
  };
}
