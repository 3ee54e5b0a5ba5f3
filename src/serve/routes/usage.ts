/**
 * `GET /v1/usage`: the caller's own usage as their usage ledger counts it (src/core/usage-ledger.ts):
 * turns in flight and tokens used today (UTC), with the limits they are admitted under.
 */
import type { FastifyInstance } from 'fastify';
import { LedgerUnavailableError, usageOf } from '../../client/usage-ledger-client';
import { HttpError } from '../http-error';
import { utcDay } from '../../core/usage-ledger';
import { callerOfRequest } from '../request-guard';
import type { ServeContext } from '../serve-context';
import { Json } from './schemas';

export function usageRoutes(app: FastifyInstance, ctx: ServeContext): void {
  app.get(
    '/v1/usage',
    { schema: { summary: "The caller's turns in flight and tokens used today (UTC), and their limits", response: { 200: Json('{ day, tokensToday, inFlight, limits }') } } },
    async (request) => {
      const caller = callerOfRequest(request);
      let usage;
      try {
        usage = (await usageOf(ctx.client, caller.owner.key)) ?? { day: utcDay(Date.now()), tokensToday: 0, inFlight: 0 };
      } catch (err) {
        if (err instanceof LedgerUnavailableError) throw new HttpError(503, err.message);
        throw err;
      }
      return { ...usage, limits: (caller.admin ? ctx.limits?.admin : ctx.limits?.user) ?? {} };
    },
  );
}
