/**
 * A turn's approvals: a call that needs a person's approval is recorded as pending and waits for
 * the `decide` update (or its timeout, a durable timer), holding no worker slot — a waiting turn
 * can be evicted from the worker's cache and comes back on the decision. While any call waits, the
 * turn's status search attribute is `waiting-approval`, its memo lists the waiting calls (so one
 * visibility query lists them across turns) and, in a batch, the batch is told so it does not count
 * the turn against its window.
 */
import {
  condition,
  getExternalWorkflowHandle,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  decisionProblem,
  PENDING_APPROVALS_MEMO,
  WAITING_APPROVAL_STATUS,
  type ApprovalDecision,
  type ApprovalRecord,
  type PendingApprovalMemo,
  type ToolApproval,
} from '../src/core/approvals';
import { SA_STATUS } from '../src/core/search-attributes';
import { oneLine } from '../src/core/text';
import { decideUpdate, pendingApprovalsQuery, turnWaitingSignal } from '../src/core/workflow-handlers';

/** Arguments shown per waiting call in the memo. */
const MEMO_INPUT_CHARS = 300;

export class Approvals {
  readonly records: ApprovalRecord[] = [];
  private waitingReported = false;

  /** Registers the `decide` update and the pending-approvals query; call before the turn awaits anything. */
  constructor(private readonly onChange: () => void) {
    setHandler(decideUpdate, (decision) => this.decide(decision), {
      validator: (decision) => {
        const problem = decisionProblem(this.records, decision);
        if (problem) throw new Error(problem);
      },
    });
    setHandler(pendingApprovalsQuery, () => this.pending());
  }

  pending(): ApprovalRecord[] {
    return this.records.filter((r) => !r.outcome);
  }

  /** Records a pending approval and waits for its decision or timeout; answers the decided record. */
  async request(call: Omit<ApprovalRecord, 'requestedAt' | 'outcome' | 'timeoutMs'>, approval: ToolApproval): Promise<ApprovalRecord> {
    const record: ApprovalRecord = {
      ...call,
      requestedAt: workflowTime(),
      ...(approval.timeoutMs !== undefined ? { timeoutMs: approval.timeoutMs } : {}),
    };
    this.records.push(record);
    this.changed();
    if (approval.timeoutMs !== undefined) {
      const decided = await condition(() => record.outcome !== undefined, approval.timeoutMs);
      if (!decided) Object.assign(record, { outcome: 'timed_out', decidedAt: workflowTime() });
    } else {
      await condition(() => record.outcome !== undefined);
    }
    this.changed();
    return record;
  }

  private decide(decision: ApprovalDecision): ApprovalRecord[] {
    const chosen = this.pending().filter((r) => decision.callId === undefined || r.callId === decision.callId);
    for (const record of chosen) {
      Object.assign(record, {
        outcome: decision.approve ? 'approved' : 'denied',
        decidedAt: workflowTime(),
        ...(decision.identity ? { decidedBy: decision.identity } : {}),
        ...(decision.reason ? { reason: decision.reason } : {}),
      });
    }
    return chosen;
  }

  /** Status, memo, the batch and the UI follow the set of waiting calls. */
  private changed(): void {
    const pending = this.pending();
    const waiting = pending.length > 0;
    upsertMemo({
      [PENDING_APPROVALS_MEMO]: pending.map((r): PendingApprovalMemo => ({ ...r, input: oneLine(JSON.stringify(r.input ?? {}), MEMO_INPUT_CHARS) })),
    });
    if (waiting !== this.waitingReported) {
      this.waitingReported = waiting;
      upsertSearchAttributes([{ key: SA_STATUS, value: waiting ? WAITING_APPROVAL_STATUS : 'running' }]);
      const parent = workflowInfo().parent;
      if (parent) {
        void getExternalWorkflowHandle(parent.workflowId, parent.runId)
          .signal(turnWaitingSignal, { workflowId: workflowInfo().workflowId, waiting })
          .catch(() => undefined); // a parent without the handler (not a batch) or already closed
      }
    }
    this.onChange();
  }
}

/** Workflow time as ISO 8601: deterministic on replay. */
function workflowTime(): string {
  return new Date().toISOString();
}
