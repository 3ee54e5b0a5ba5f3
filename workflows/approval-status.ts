/**
 * What a turn tells the world about its waiting calls: while any call waits, the turn's status
 * search attribute is `waiting-approval`, its memo lists the waiting calls (so one visibility query
 * lists them across turns; arguments over a size limit shortened, src/core/approvals.ts) and, in a
 * batch, the batch is told so it does not count the turn against its window.
 */
import { getExternalWorkflowHandle, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { WAITING_APPROVAL_STATUS } from '../src/core/run-status';
import { PENDING_APPROVALS_MEMO, pendingApprovalMemo, type ApprovalRecord } from '../src/core/approvals';
import { SA_STATUS } from '../src/core/search-attributes';
import { turnWaitingSignal } from '../src/core/workflow-handlers';

/**
 * Publishes the calls waiting now; `wasWaiting` is whether any waited when last published. Answers
 * whether any waits now.
 */
export function publishWaitingApprovals(pending: readonly ApprovalRecord[], wasWaiting: boolean): boolean {
  const waiting = pending.length > 0;
  upsertMemo({
    [PENDING_APPROVALS_MEMO]: pending.map(pendingApprovalMemo),
  });
  if (waiting !== wasWaiting) {
    upsertSearchAttributes([{ key: SA_STATUS, value: waiting ? WAITING_APPROVAL_STATUS : 'running' }]);
    tellBatchParent({ waiting });
  }
  return waiting;
}

/** Tells the turn's batch parent that it waits for approval (or no longer does); a turn without one tells nobody. */
function tellBatchParent({ waiting }: { waiting: boolean }): void {
  const parent = workflowInfo().parent;
  if (!parent) return;
  void getExternalWorkflowHandle(parent.workflowId, parent.runId)
    .signal(turnWaitingSignal, { workflowId: workflowInfo().workflowId, waiting, for: 'approval' })
    .catch(() => undefined); // a parent without the handler (not a batch) or already closed
}
