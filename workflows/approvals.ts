/**
 * A turn's approvals: the calls that waited or wait for a person's decision. A record is never
 * changed once kept: a decision or a timeout replaces it with the decided record.
 */
import { decisionProblem, type ApprovalDecision, type ApprovalRecord } from '../src/core/approvals';
import type { ToolApproval } from '../src/core/contracts';

/** A call that waits for a person (an approval, or answers to a server's questions), as the tool round asks for it. */
export type ApprovalRequest = Omit<ApprovalRecord, 'requestedAt' | 'outcome' | 'timeoutMs' | 'answer'>;

export class Approvals {
  private readonly kept: ApprovalRecord[] = [];

  /** Every call that needed approval, in the order asked, decided or still waiting. */
  get records(): readonly ApprovalRecord[] {
    return this.kept;
  }

  pending(): ApprovalRecord[] {
    return this.kept.filter((r) => !r.outcome);
  }

  /** Why `decision` cannot be applied (the `decide` update's validator), or undefined. */
  problem(decision: ApprovalDecision): string | undefined {
    return decisionProblem(this.kept, decision);
  }

  /** Keeps a call as waiting from `now` (ISO time). */
  add(call: ApprovalRequest, approval: ToolApproval, now: string): ApprovalRecord {
    const record: ApprovalRecord = { ...call, requestedAt: now, ...(approval.timeoutMs !== undefined ? { timeoutMs: approval.timeoutMs } : {}) };
    this.kept.push(record);
    return record;
  }

  /** The latest record of `callId` as it stands. */
  current(callId: string): ApprovalRecord | undefined {
    return [...this.kept].reverse().find((r) => r.callId === callId);
  }

  /** Applies a person's decision to the call it names (or every waiting call); answers the decided records. */
  decide(decision: ApprovalDecision, now: string): ApprovalRecord[] {
    const chosen = this.pending().filter((r) => decision.callId === undefined || r.callId === decision.callId);
    const answer = decision.input;
    return chosen.map((r) =>
      this.replace({
        ...r,
        outcome: decision.approve ? 'approved' : 'denied',
        ...(decision.approve && r.kind === 'input' && answer ? { answer } : {}),
        decidedAt: now,
        ...(decision.identity ? { decidedBy: decision.identity } : {}),
        ...(decision.reason ? { reason: decision.reason } : {}),
      }),
    );
  }

  /** Ends a call's wait without a decision: it is denied as timed out. */
  timeOut(callId: string, now: string): ApprovalRecord {
    const record = this.current(callId);
    if (!record) throw new Error(`no approval record for call ${callId}`);
    return record.outcome ? record : this.replace({ ...record, outcome: 'timed_out', decidedAt: now });
  }

  /** Replaces the call's waiting record (a call waits for one thing at a time). */
  private replace(decided: ApprovalRecord): ApprovalRecord {
    const at = this.kept.map((r) => r.callId).lastIndexOf(decided.callId);
    this.kept[at] = decided;
    return decided;
  }
}
