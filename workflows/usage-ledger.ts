/**
 * One owner's usage ledger (src/core/usage-ledger.ts has its rules and what they guarantee): it
 * admits turns (an update, decided at once, so at most a moment of Temporal's 10 updates in flight
 * is taken per request), counts the tokens of those that end (a signal from each), frees the slots of
 * turns that ended without saying so when someone is refused for them, and continues as new well
 * before a run's 2,000 updates. A day idle with nothing held, it ends; the next admission starts it
 * again.
 */
import { allHandlersFinished, condition, continueAsNew, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { UsageLedgerActivities } from '../activities/usage-ledger';
import { LEDGER_CONTINUING, UsageLedger, type LedgerState } from '../src/core/usage-ledger';
import { admitUpdate, releaseSlotSignal, usageQuery } from '../src/core/workflow-handlers';
import { workflowNow } from './workflow-clock';

export interface UsageLedgerInput {
  /** The owner whose turns it admits (src/client/owner.ts). */
  ownerKey: string;
  state?: LedgerState;
  /** A slot held this long may be freed when its turn is not running. @default 60 s */
  staleAfterMs?: number;
  /** Admissions per run before it continues as new. @default 1000 (a run takes 2,000 updates at most) */
  admissionsPerRun?: number;
}

const DEFAULT_STALE_AFTER_MS = 60_000;
/** Admissions per run before it continues as new: well under a run's 2,000 updates. */
const DEFAULT_ADMISSIONS_PER_RUN = 1000;
const IDLE_MS = 24 * 60 * 60_000;

const { runningUsageSlots } = proxyLocalActivities<UsageLedgerActivities>({
  summary: "the owner's running turns",
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

export async function usageLedger(input: UsageLedgerInput): Promise<void> {
  const staleAfterMs = input.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  const admissionsPerRun = input.admissionsPerRun ?? DEFAULT_ADMISSIONS_PER_RUN;
  const ledger = new UsageLedger(input.state, workflowNow());
  let admissions = 0;
  let repairWanted = false;
  let touched = false;

  setHandler(
    admitUpdate,
    (request) => {
      admissions++;
      touched = true;
      const admission = ledger.admit(request, workflowNow());
      if (!admission.admitted && admission.limit === 'turnsInFlight' && ledger.staleSlots(workflowNow(), staleAfterMs).length) repairWanted = true;
      return admission;
    },
    {
      validator: (request) => {
        if (typeof request?.slot !== 'string' || !request.slot) throw new Error('admit: slot must be a non-empty string');
        if (admissions >= admissionsPerRun) throw new Error(LEDGER_CONTINUING);
      },
    },
  );
  setHandler(releaseSlotSignal, (release) => {
    touched = true;
    ledger.release(release, workflowNow());
  });
  setHandler(usageQuery, () => ledger.summary(workflowNow()));

  const dueToContinue = () => admissions >= admissionsPerRun || workflowInfo().continueAsNewSuggested;
  for (;;) {
    touched = false;
    const woke = await condition(() => repairWanted || dueToContinue(), IDLE_MS);
    if (!woke && !touched) {
      if (ledger.inFlight === 0) break;
      repairWanted = true; // a day without a word, yet slots held: their turns may have ended unseen
    }
    if (repairWanted) {
      repairWanted = false;
      const stale = ledger.staleSlots(workflowNow(), staleAfterMs);
      const running = new Set(await runningUsageSlots(input.ownerKey));
      ledger.free(stale.filter((slot) => !running.has(slot)));
    }
    if (dueToContinue()) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof usageLedger>({ ...input, state: ledger.state() });
    }
  }
  await condition(allHandlersFinished);
}
