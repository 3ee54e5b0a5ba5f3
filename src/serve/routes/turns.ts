/**
 * Turns over HTTP: `POST /v1/turns` starts one (answering its id, or its stream with `Accept:
 * text/event-stream`), `GET /v1/turns/{id}` reads its status or result, `GET /v1/turns/{id}/events`
 * streams its events after `Last-Event-ID` (or `?after=`). A conversation's id streams the
 * conversation's turns one after the other.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { startChatTurn } from '../../client/chat-turn-client';
import { newId } from '../../client/ids';
import { getTurnView } from '../../client/turn-view';
import { kindPhrase, WorkflowKindError } from '../../client/workflow-kind';
import { TurnIdSchema } from '../../schemas/ids';
import { ChatTurnInputSchema, type ChatTurnInput } from '../../schemas/turn-input';
import { subscribe } from '../../client/subscribe';
import { withCaller } from '../caller-context';
import { requireVisible } from '../access';
import { admitCallerTurn } from '../usage-limits';
import { callerOfRequest } from '../request-guard';
import { HttpError, notFound } from '../http-error';
import { uiLink, type ServeContext } from '../serve-context';
import { pipeTurnEvents } from '../turn-event-stream';
import { resumeOffset } from '../resume-offset';
import { SseStream, wantsEventStream } from '../sse';
import { ErrorBody, IdParams, Json } from './schemas';

const TurnBody = ChatTurnInputSchema.extend({
  id: TurnIdSchema.optional().describe("The turn id (workflow id); default turn-<time-sortable id>. Ids ending -turn-<n> are conversations' own."),
}).describe("A turn's input; streaming is on unless stream is false.");

const Started = z.object({
  id: z.string(),
  links: z.object({ self: z.string(), events: z.string(), ui: z.string() }),
});

// Loose: a `from` is refused by name (src/serve/resume-offset.ts), not dropped unseen.
const EventsQuery = z.looseObject({
  after: z
    .string()
    .regex(/^\d{1,15}$/, 'an offset: decimal digits')
    .optional()
    .describe('The offset of the last event received: the stream resumes after it, as with Last-Event-ID (the header wins). Without either, it starts at offset 0.'),
});

function links(ctx: ServeContext, id: string) {
  const path = `/v1/turns/${encodeURIComponent(id)}`;
  return { self: path, events: `${path}/events`, ui: uiLink(ctx, id) };
}

export function turnRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v1/turns',
    {
      schema: {
        summary: 'Start a turn',
        description: 'Answers its id (202), or with Accept: text/event-stream its events as they are written.',
        body: TurnBody,
        response: { 202: Started, 400: ErrorBody, 409: ErrorBody },
      },
    },
    async (request, reply) => {
      const { id, ...fields } = request.body;
      const caller = callerOfRequest(request);
      const input: ChatTurnInput = withCaller({ stream: true, ...fields }, caller);
      if (input.stream === false) delete input.stream;
      const workflowId = id ?? newId('turn');
      const admitted = await admitCallerTurn(ctx, caller, workflowId);
      try {
        await startChatTurn(ctx.client, input, {
          workflowId,
          taskQueue: ctx.taskQueue,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          eagerStart: ctx.inProcessWorker === true,
          owner: caller.owner,
          ...(admitted.slot ? { usageSlot: admitted.slot } : {}),
        });
      } catch (err) {
        await admitted.giveBack();
        if (err instanceof WorkflowExecutionAlreadyStartedError) throw new HttpError(409, `turn ${workflowId} already exists: choose another id`);
        throw err;
      }
      if (!wantsEventStream(request)) return reply.code(202).send({ id: workflowId, links: links(ctx, workflowId) });
      const stop = new AbortController();
      const events = await subscribe(ctx.client, workflowId, { signal: stop.signal });
      await pipeTurnEvents(new SseStream(reply), events, stop, ctx);
      return reply;
    },
  );

  r.get(
    '/v1/turns/:id',
    { schema: { summary: "A turn's status, and its result once it has one", params: IdParams, response: { 200: Json('{ id, status, question, startTime, closeTime?, result? | progress? | error?, links }: result is the whole turn result (with output and outputReport for a turn with output)'), 404: ErrorBody } } },
    async (request) => {
      const { id } = request.params;
      await requireVisible(ctx, callerOfRequest(request), id, 'turn');
      try {
        const view = await getTurnView(ctx.client, id);
        const { input: _input, workflowId, ...rest } = view;
        return { id: workflowId, ...rest, links: links(ctx, id) };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw notFound(`turn ${id}`);
        if (err instanceof WorkflowKindError) throw notFound(`turn ${id}: it is ${kindPhrase(err.type)}`);
        throw err;
      }
    },
  );

  r.get(
    '/v1/turns/:id/events',
    {
      schema: {
        summary: "A turn's (or a conversation's) events as server-sent events",
        description: 'Each event carries its offset as its SSE id; reconnecting with Last-Event-ID (or ?after=) resumes after it, with no gap and no duplicate. Ends after the turn\'s finish.',
        params: IdParams,
        querystring: EventsQuery,
        response: { 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const fromOffset = resumeOffset(request);
      await requireVisible(ctx, callerOfRequest(request), id, 'turn');
      const stop = new AbortController();
      let events;
      try {
        events = await subscribe(ctx.client, id, { fromOffset, signal: stop.signal });
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw notFound(`turn ${id}`);
        if (err instanceof WorkflowKindError) throw notFound(`turn or conversation ${id}: it is ${kindPhrase(err.type)}`);
        throw err;
      }
      await pipeTurnEvents(new SseStream(reply), events, stop, ctx);
      return reply;
    },
  );
}
