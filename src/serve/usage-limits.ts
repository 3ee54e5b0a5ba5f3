/**
 * Per-caller limits on what `serve` starts: each turn (a turn, or a conversation message's turn) is
 * admitted by its caller's usage ledger before it starts (src/core/usage-ledger.ts says what the
 * limits guarantee); over a limit, 429 with `Retry-After` and the one line naming the limit. A
 * caller whose role has no limits is not counted. A turn that does not start after its admission
 * gives its slot back.
 */
import { admitTurn, LedgerBusyError, LedgerUnavailableError, releaseUnusedSlot } from '../client/usage-ledger-client';
import type { Caller } from './caller';
import { HttpError } from './http-error';
import type { ServeContext } from './serve-context';

/** An admitted turn's slot (none when the caller is not limited), and how to give it back unused. */
export interface AdmittedSlot {
  /** The slot the turn holds: its memo names it, and the turn releases it at its end. */
  slot?: string;
  /** Gives the slot back: the turn it was for did not start (a no-op without a fresh slot). */
  giveBack(): Promise<void>;
}

const UNLIMITED: AdmittedSlot = { giveBack: async () => {} };

/** Admits `caller`'s turn at `slot` under their role's limits, or throws a 429. */
export async function admitCallerTurn(ctx: ServeContext, caller: Caller, slot: string): Promise<AdmittedSlot> {
  const limits = caller.admin ? ctx.limits?.admin : ctx.limits?.user;
  if (!limits || (limits.turnsInFlight === undefined && limits.tokensPerDay === undefined)) return UNLIMITED;
  let admission;
  try {
    admission = await admitTurn(ctx.client, { ownerKey: caller.owner.key, slot, limits, taskQueue: ctx.taskQueue });
  } catch (err) {
    if (err instanceof LedgerBusyError) throw new HttpError(429, err.message, { 'retry-after': '1' });
    if (err instanceof LedgerUnavailableError) throw new HttpError(503, `limits cannot be checked: ${err.message}`);
    throw err;
  }
  if (!admission.admitted) throw new HttpError(429, admission.message, { 'retry-after': String(admission.retryAfterSeconds) });
  const fresh = admission.fresh;
  return {
    slot,
    giveBack: async () => {
      if (!fresh) return;
      await releaseUnusedSlot(ctx.client, caller.owner.key, slot).catch((err: unknown) => ctx.log(`serve: slot ${slot} could not be given back: ${(err as Error).message}`));
    },
  };
}
