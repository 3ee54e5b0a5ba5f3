/**
 * Approvals over HTTP: `GET /v1/approvals` lists the calls waiting (as visibility has them: a call
 * that started to wait a moment ago may not be listed yet), `POST /v1/approvals/{turn}/{call}`
 * approves or denies one with a reason. Who decides is the request's token's name.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApprovalDecisionError, approveToolCall, denyToolCall, listPendingApprovals } from '../../client/approvals';
import type { ApprovalRecord } from '../../core/approvals';
import { HttpError } from '../http-error';
import { requireVisible } from '../access';
import { approverOf, viewerOf, type Caller } from '../caller';
import { callerOfRequest } from '../request-guard';
import type { ServeContext } from '../serve-context';
import { IdSchema } from '../../schemas/ids';
import { ErrorBody, Json } from './schemas';

const Decision = z.object({
  approved: z.boolean().describe('true runs the call; false answers Claude that it was denied.'),
  reason: z.string().max(2000).optional().describe('Told to Claude with a denial; recorded with either decision.'),
});

const DecisionParams = z.object({ turn: IdSchema, call: IdSchema });

/**
 * Applies one decision as `caller`; a refusal is a 404 (no such turn, or not theirs) or a 409
 * (nothing to decide).
 */
export async function applyDecision(
  ctx: ServeContext,
  turnId: string,
  callId: string,
  decision: { approved: boolean; reason?: string | undefined },
  caller: Caller,
): Promise<ApprovalRecord[]> {
  await requireVisible(ctx, caller, turnId, 'turn');
  const options = { identity: approverOf(caller), ...(decision.reason ? { reason: decision.reason } : {}) };
  try {
    return await (decision.approved ? approveToolCall : denyToolCall)(ctx.client, turnId, callId, options);
  } catch (err) {
    if (err instanceof ApprovalDecisionError) throw new HttpError(err.message.startsWith('no turn') ? 404 : 409, err.message);
    throw err;
  }
}

export function approvalRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/approvals',
    { schema: { summary: "The tool calls waiting for the caller's approval (an admin's: everyone's, each with its owner)", querystring: z.object({ batch: IdSchema.optional() }) } },
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
        summary: 'Approve or deny a waiting call',
        params: DecisionParams,
        body: Decision,
        response: { 200: Json('{ decisions: the records decided }'), 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) => {
      const { turn, call } = request.params;
      const caller = callerOfRequest(request);
      const decisions = await applyDecision(ctx, turn, call, request.body, caller);
      ctx.log(`serve: ${approverOf(caller)} ${request.body.approved ? 'approved' : 'denied'} call ${call} of turn ${turn}`);
      return { decisions };
    },
  );
}
