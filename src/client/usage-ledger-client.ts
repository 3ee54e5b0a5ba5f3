/**
 * Per-owner limits from code: admitting a turn through its owner's usage ledger (one workflow per
 * owner, started by the first admission: src/core/usage-ledger.ts has the rules and what they
 * guarantee), releasing a slot whose turn never started, and reading an owner's usage.
 *
 * An admission is an update decided at once. A ledger continuing as new refuses it for a moment,
 * and more than 10 at once for one owner exceed Temporal's updates in flight: both are asked again,
 * with backoff, for up to {@link ADMIT_PATIENCE_MS}, then {@link LedgerBusyError}. A ledger that
 * does not answer in {@link LEDGER_ANSWER_MS} (no worker polls its task queue) is
 * {@link LedgerUnavailableError}: nothing waits on it without end.
 */
import { WithStartWorkflowOperation, WorkflowIdConflictPolicy, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { usageLedger } from '../../workflows/usage-ledger';
import { LEDGER_CONTINUING, USAGE_LEDGER_WORKFLOW, usageLedgerId, type Admission, type UsageLimits, type UsageSummary } from '../core/usage-ledger';
import { admitUpdate, releaseSlotSignal, usageQuery } from '../core/workflow-handlers';
import { taskQueueOf } from './client-task-queue';

/** How long an admission is asked again while the ledger is busy. */
const ADMIT_PATIENCE_MS = 5000;
/** How long the ledger has to answer one admission or query. */
const LEDGER_ANSWER_MS = 5000;

/** The owner's ledger could not take the admission in time (too many at once). */
export class LedgerBusyError extends Error {
  override name = 'LedgerBusyError';
}

/** The owner's ledger did not answer: no worker runs it (its task queue is named). */
export class LedgerUnavailableError extends Error {
  override name = 'LedgerUnavailableError';
  constructor(ledgerId: string, taskQueue: string | undefined) {
    super(`the usage ledger ${ledgerId} did not answer in ${LEDGER_ANSWER_MS / 1000} s: is a worker polling task queue ${taskQueue ?? '(its own)'}?`);
  }
}

/** `fn`, given at most {@link LEDGER_ANSWER_MS}; past it, {@link LedgerUnavailableError}. */
async function answeredInTime<T>(client: Client, ledgerId: string, taskQueue: string | undefined, fn: () => Promise<T>): Promise<T> {
  const signal = AbortSignal.timeout(LEDGER_ANSWER_MS);
  try {
    return await client.withAbortSignal(signal, fn);
  } catch (err) {
    if (signal.aborted) throw new LedgerUnavailableError(ledgerId, taskQueue);
    throw err;
  }
}

/** Whether `err` (or its cause) is the server's refusal of one more update in flight, or the ledger's of one while it continues as new. */
function askAgain(err: unknown): boolean {
  if (err instanceof WorkflowUpdateFailedError && err.cause?.message === LEDGER_CONTINUING) return true;
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === 8 || /in-flight updates|RESOURCE_EXHAUSTED/i.test(e.message)) return true;
  }
  return false;
}

export interface AdmitOptions {
  /** The owner's key (src/client/owner.ts). */
  ownerKey: string;
  /** The turn's slot: its workflow id, or `messageSlot(conversation, message)`. */
  slot: string;
  limits: UsageLimits;
  /** The queue the ledger runs on (the turns' queue). */
  taskQueue?: string;
}

/** Asks the owner's ledger (starting it if needed) to admit one turn. Throws {@link LedgerBusyError}. */
export async function admitTurn(client: Client, { ownerKey, slot, limits, taskQueue }: AdmitOptions): Promise<Admission> {
  const deadline = Date.now() + ADMIT_PATIENCE_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await answeredInTime(client, usageLedgerId(ownerKey), taskQueue, () =>
        client.workflow.executeUpdateWithStart(admitUpdate, {
          args: [{ slot, limits }],
          startWorkflowOperation: new WithStartWorkflowOperation<typeof usageLedger>(USAGE_LEDGER_WORKFLOW, {
            workflowId: usageLedgerId(ownerKey),
            taskQueue: taskQueueOf(client, taskQueue),
            args: [{ ownerKey }],
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            staticSummary: 'usage ledger',
          }),
        }),
      );
    } catch (err) {
      if (!askAgain(err)) throw err;
      if (Date.now() >= deadline) throw new LedgerBusyError('too many turns asked for at once: retry in a moment');
      await new Promise((r) => setTimeout(r, Math.min(500, 20 * 2 ** attempt) * (0.5 + Math.random())));
    }
  }
}

/** Frees a slot whose turn never started (its start or message was refused after the admission). */
export async function releaseUnusedSlot(client: Client, ownerKey: string, slot: string): Promise<void> {
  try {
    await client.workflow.getHandle(usageLedgerId(ownerKey)).signal(releaseSlotSignal, { slot, tokens: 0 });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/** The owner's usage today and turns in flight; undefined while they have no ledger. Throws {@link LedgerUnavailableError}. */
export async function usageOf(client: Client, ownerKey: string): Promise<UsageSummary | undefined> {
  try {
    return await answeredInTime(client, usageLedgerId(ownerKey), undefined, () => client.workflow.getHandle(usageLedgerId(ownerKey)).query(usageQuery));
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}
