/**
 * `POST /api/chat` speaks the AI SDK's UI message stream protocol, so `useChat` and
 * `DefaultChatTransport` work unchanged; the chat id is the conversation id. Only what is new in
 * the posted messages is used (src/serve/chat-request.ts): a user message is sent to the
 * conversation and its turn streams as one assistant message (its id is the turn id); an assistant
 * message carrying approval responses has them applied, and the same turn's stream continues from
 * where that message's stream paused.
 *
 * A stream pauses (ends with finish reason `tool-calls`) once calls wait for approval and nothing
 * more comes for {@link APPROVAL_PAUSE_MS}: the client answers them and posts again.
 * `GET /api/chat/{id}/stream` is useChat's resume: the running turn's stream from its start, or
 * 204 when nothing runs.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { newId } from '../../client/ids';
import { describeId } from '../../client/describe-id';
import type { TurnStreamEvent } from '../../core/stream-events';
import { oneLine } from '../../core/text';
import { conversationStatusQuery } from '../../core/workflow-handlers';
import { subscribeTurn } from '../../client/subscribe';
import { chatActionOf, chatRequestSchema, ChatRequestError, type ChatAction } from '../chat-request';
import { HttpError, notFound } from '../http-error';
import { requireVisible } from '../access';
import { approverOf, viewerOf, type Caller } from '../caller';
import { callerOfRequest } from '../request-guard';
import { visibleTo } from '../../client/owner';
import type { ServeContext } from '../serve-context';
import { SseStream } from '../sse';
import { UiMessageStream, type UiChunk } from '../ui-message-stream';
import { applyDecision } from './approvals';
import { sendOrFindTurn, sentTurnEvents } from './conversations';
import { ErrorBody, IdParams, TurnOptionsBody } from './schemas';

/** How long a stream with calls waiting for approval waits for more before it pauses. */
export const APPROVAL_PAUSE_MS = 400;

const UI_STREAM_HEADERS = { 'x-vercel-ai-ui-message-stream': 'v1' };

const ChatBody = chatRequestSchema
  .extend({ options: TurnOptionsBody.optional() })
  .describe("useChat's request body (UI messages; the chat id is the conversation id); only the newest message is read.");

export function chatRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/api/chat',
    {
      schema: {
        summary: 'useChat: send a message or approval responses, stream the answer (UI message stream)',
        body: ChatBody,
        response: { 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      let action: ChatAction;
      try {
        action = chatActionOf(request.body);
      } catch (err) {
        if (err instanceof ChatRequestError) throw new HttpError(400, err.message);
        throw err;
      }
      const stop = new AbortController();
      const caller = callerOfRequest(request);
      if (action.kind === 'message') {
        // A regenerated answer is a message of its own (the same text asked again).
        const messageId = action.regenerate ? newId('msg') : action.messageId;
        const sent = await sendOrFindTurn(ctx, caller, action.chatId, action.text, messageId, request.body.options);
        return pipeUiMessage(reply, sentTurnEvents(ctx, action.chatId, sent, stop.signal), stop, ctx, true);
      }
      for (const d of action.decisions) {
        try {
          await applyDecision(ctx, d.turnId, d.callId, d, caller);
          ctx.log(`serve: ${approverOf(caller)} ${d.approved ? 'approved' : 'denied'} call ${d.callId} of turn ${d.turnId}`);
        } catch (err) {
          // Decided already (here or elsewhere) or timed out: the stream shows what happened.
          if (!(err instanceof HttpError) || err.statusCode !== 409) throw err;
          ctx.log(`serve: a decision on call ${d.callId} of turn ${d.turnId} was not applied: ${err.message}`);
        }
      }
      const turnId = action.resume?.turnId ?? action.decisions[0]!.turnId;
      await requireVisible(ctx, caller, turnId, 'turn');
      const events = subscribeTurn(ctx.client, turnId, { fromOffset: action.resume?.offset ?? 0, signal: stop.signal });
      const calls = new Set(action.decisions.map((d) => d.callId));
      return pipeUiMessage(reply, action.resume ? events : afterWaits(events, calls), stop, ctx, false);
    },
  );

  r.get(
    '/api/chat/:id/stream',
    { schema: { summary: "useChat's resume: the running answer's stream from its start, or 204", params: IdParams } },
    async (request, reply) => {
      const turnId = await runningTurnOf(ctx, callerOfRequest(request), request.params.id);
      if (!turnId) return reply.code(204).send();
      const stop = new AbortController();
      return pipeUiMessage(reply, subscribeTurn(ctx.client, turnId, { signal: stop.signal }), stop, ctx, true);
    },
  );
}

/** The turn conversation `id` is answering now, if any; 404 when it is someone else's. */
async function runningTurnOf(ctx: ServeContext, caller: Caller, id: string): Promise<string | undefined> {
  const named = await describeId(ctx.client, id);
  if (named && !visibleTo(viewerOf(caller), named.searchAttributes)) throw notFound(`conversation ${id}`);
  if (named?.kind !== 'conversation' || !named.running) return undefined;
  try {
    return (await ctx.client.workflow.getHandle(id).query(conversationStatusQuery)).currentTurnId;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/**
 * A turn's events after the waits for approval of `calls` were announced: where a client that
 * did not send its message's offset back paused.
 */
async function* afterWaits(events: AsyncIterable<TurnStreamEvent>, calls: ReadonlySet<string>): AsyncGenerator<TurnStreamEvent> {
  const seen = new Set<string>();
  for await (const e of events) {
    if (seen.size < calls.size) {
      if (e.type === 'data-approval' && e.state === 'waiting' && calls.has(e.toolCallId)) seen.add(e.toolCallId);
      continue;
    }
    yield e;
  }
}

/**
 * Writes a turn's events as one assistant message of the UI message stream: a new message (its id
 * the turn id) or the continuation of the client's last one; see the file comment for the pause.
 */
async function pipeUiMessage(
  reply: FastifyReply,
  events: AsyncIterable<TurnStreamEvent>,
  stop: AbortController,
  ctx: ServeContext,
  newMessage: boolean,
): Promise<FastifyReply> {
  const sse = new SseStream(reply, UI_STREAM_HEADERS);
  sse.signal.addEventListener('abort', () => stop.abort(), { once: true });
  const write = async (chunks: UiChunk[]): Promise<void> => {
    for (const c of chunks) await sse.send(JSON.stringify(c));
  };
  const it = events[Symbol.asyncIterator]();
  let ui: UiMessageStream | undefined;
  try {
    let pending = it.next();
    for (;;) {
      let next: IteratorResult<TurnStreamEvent> | 'pause';
      if (ui && ui.waitingApprovals > 0) {
        let timer: NodeJS.Timeout | undefined;
        const pause = new Promise<'pause'>((resolve) => (timer = setTimeout(() => resolve('pause'), APPROVAL_PAUSE_MS)));
        next = await Promise.race([pending, pause]);
        clearTimeout(timer);
      } else next = await pending;
      if (next === 'pause') {
        await write(ui!.end('approval'));
        break;
      }
      if (next.done) {
        if (ui) await write(ui.end('aborted'));
        else if (!sse.signal.aborted) await write([{ type: 'error', errorText: 'nothing was answered: the turn did not start' }]);
        break;
      }
      pending = it.next();
      if (!ui) {
        ui = new UiMessageStream({ turnId: next.value.turnId, ...(newMessage ? { messageId: next.value.turnId } : {}) });
        await write(ui.start());
      }
      await write(ui.push(next.value));
      if (ui.finished) {
        await write(ui.end('finished'));
        break;
      }
    }
  } catch (err) {
    const line = oneLine((err as Error).message, 300);
    ctx.log(`serve: a chat stream failed: ${line}`);
    await write([{ type: 'error', errorText: `the stream could not be read: ${line}` }]);
  } finally {
    stop.abort();
    void it.return?.(undefined);
    await sse.send('[DONE]');
    sse.end();
  }
  return reply;
}
