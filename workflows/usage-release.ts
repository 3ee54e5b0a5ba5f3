/**
 * A turn that holds a slot of its owner's usage ledger (its memo names it: `serve` admitted it
 * under a limit) releases it at its end, with the tokens it used (src/core/usage-ledger.ts). The
 * signal is waited for (the server delivers a workflow's signal only while that workflow runs):
 * one more workflow task at the end of a limited turn. A ledger that cannot be reached costs the
 * turn nothing (the ledger frees the slot itself).
 */
import { CancellationScope, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { SA_OWNER } from '../src/core/search-attributes';
import { USAGE_SLOT_MEMO, usageLedgerId } from '../src/core/usage-ledger';
import { releaseSlotSignal } from '../src/core/workflow-handlers';

export async function releaseUsageSlot(tokens: number): Promise<void> {
  const info = workflowInfo();
  const slot = info.memo?.[USAGE_SLOT_MEMO];
  const owner = info.typedSearchAttributes.get(SA_OWNER);
  if (typeof slot !== 'string' || owner === undefined) return;
  // Sent even from a cancelled turn: its end is an end too.
  await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(usageLedgerId(owner)).signal(releaseSlotSignal, { slot, tokens })).catch(() => undefined);
}
