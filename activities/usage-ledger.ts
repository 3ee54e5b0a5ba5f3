/**
 * The usage ledger's one activity (src/core/usage-ledger.ts): the slots an owner's running turns
 * hold, read from visibility (one list call over the owner's running turns, each turn's slot from
 * its memo), so the ledger can free the slots of turns that ended without releasing them.
 * Visibility trails the turns by a moment: the ledger asks only about slots older than that.
 */
import { Context } from '@temporalio/activity';
import { SA_OWNER } from '../src/core/search-attributes';
import { USAGE_SLOT_MEMO } from '../src/core/usage-ledger';

export function makeUsageLedgerActivities() {
  return {
    async runningUsageSlots(ownerKey: string): Promise<string[]> {
      const slots: string[] = [];
      const query = `WorkflowType = "chatTurn" AND ExecutionStatus = "Running" AND ${SA_OWNER.name} = ${JSON.stringify(ownerKey)}`;
      for await (const execution of Context.current().client.workflow.list({ query })) {
        const slot = execution.memo?.[USAGE_SLOT_MEMO];
        if (typeof slot === 'string') slots.push(slot);
      }
      return slots;
    },
  };
}

export type UsageLedgerActivities = ReturnType<typeof makeUsageLedgerActivities>;
