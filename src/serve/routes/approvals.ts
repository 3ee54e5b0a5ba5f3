/**
 * Approvals over HTTP: `GET /v1/approvals` lists the calls waiting (as visibility has them: a call
 * that started to wait a moment ago may not be listed yet), for approval or (kind `input`) for
 * answers to a server's questions; `POST /v1/approvals/{turn}/{call}` approves or denies one with a
 * reason, answers one (`input`, checked against the server's schema by the client API: a bad answer
 * is a 400 naming the field), or declines it. Who decides is the request's token's name.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApprovalDecisionError, InvalidAnswerError, answerToolCall, approveToolCall, denyToolCall, listPendingApprovals } from '../../client/approvals';
import type { ApprovalRecord } from '../../core/approvals';
import { HttpError } from '../http-error';
import { requireVisible } from '../access';
import { approverOf, viewerOf, type Caller } from '../caller';
import { callerOfRequest } from '../request-guard';
import type { ServeContext } from '../serve-context';
import { IdSchema } from '../../schemas/ids';
import { ErrorBody, Json } from './schemas';

const Decision = z
  .object({
    approved: z
      .boolean()
      .describe(
        "true runs a call waiting for approval, or says done to a call waiting for a visit to a URL; false denies a call (Claude is told) or declines a server's questions (the server is told). Optional with `input`.",
      )
      .optional(),
    input: z
      .record(z.string(), z.unknown())
      .describe(
        "Answers a call waiting for input: one form's fields (`{ \"guests\": 4 }`), or, when the server asked several forms, each form's by its key. Checked against the server's schema: a bad answer is a 400 naming the field.",
      )
      .optional(),
    reason: z.string().max(2000).describe('Told to Claude with a denial; recorded with any decision.').optional(),
  })
  .describe('A decision: `{ approved }`, or an answer `{ input }`; `reason` with either.');

const DecisionParams = z.object({ turn: IdSchema, call: IdSchema });

/** A decision as the routes take it: approve or deny, or answer a call waiting for input (`input`). */
export interface DecisionBody {
  approved?: boolean | undefined;
  input?: Record<string, unknown> | undefined;
  reason?: string | undefined;
}

/** What a decision does, in the log's words. */
export function decisionVerb(decision: DecisionBody): string {
  return decision.input !== undefined ? 'answered' : decision.approved ? 'approved' : 'denied';
}

/**
 * Applies one decision as `caller`; a refusal is a 400 (an answer that does not fit the call: its
 * schema, or a call waiting for approval), a 404 (no such turn, or not theirs) or a 409 (nothing to
 * decide).
 */
export async function applyDecision(ctx: ServeContext, turnId: string, callId: string, decision: DecisionBody, caller: Caller): Promise<ApprovalRecord[]> {
  if (decision.input !== undefined && decision.approved === false) throw new HttpError(400, 'body: a decline takes no input (send { "approved": false } alone)');
  if (decision.input === undefined && decision.approved === undefined) throw new HttpError(400, 'body: give "approved" (true or false) or "input" (an answer)');
  await requireVisible(ctx, caller, turnId, 'turn');
  const options = { identity: approverOf(caller), ...(decision.reason ? { reason: decision.reason } : {}) };
  try {
    if (decision.input !== undefined) return await answerToolCall(ctx.client, turnId, callId, decision.input, options);
    return await (decision.approved ? approveToolCall : denyToolCall)(ctx.client, turnId, callId, options);
  } catch (err) {
    if (err instanceof InvalidAnswerError) throw new HttpError(400, err.message);
    if (err instanceof ApprovalDecisionError) throw new HttpError(err.message.startsWith('no turn') ? 404 : 409, err.message);
    throw err;
  }
}

export function approvalRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/approvals',
    {
      schema: {
        summary:
          "The tool calls waiting for the caller (an admin's: everyone's, each with its owner): for approval, or (kind: input) for answers to the server's questions (requests: each a message with a requestedSchema or a url)",
        querystring: z.object({ batch: IdSchema.optional() }),
      },
    },
    async (request) => ({
      approvals: await listPendingApprovals(ctx.client, {
        viewer: viewerOf(callerOfRequest(request)),
        ...(request.query.batch ? { batch: request.query.batch } : {}),
      }),
    }),
  );

  r.post(
    '/v1/approvals/:turn/:call',
    {
      schema: {
        summary: "Approve or deny a waiting call; answer a call waiting for input ({ input }), say done to a URL question ({ approved: true }), or decline ({ approved: false })",
        params: DecisionParams,
        body: Decision,
        response: { 200: Json('{ decisions: the records decided }'), 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) => {
      const { turn, call } = request.params;
      const caller = callerOfRequest(request);
      const decisions = await applyDecision(ctx, turn, call, request.body, caller);
      ctx.log(`serve: ${approverOf(caller)} ${decisionVerb(request.body)} call ${call} of turn ${turn}`);
      return { decisions };
    },
  );
}
