/**
 * A call's approval for the terminal, on one line: who decided, when, how long the call waited and
 * why; for a timeout, after how long; for a call still waiting, since when.
 */
import type { ApprovalRecord } from '../core/approvals';

/** `7.2 s`, `30 s`, `4.5 min`, `3.1 h`: how long a call waited for a person. */
export function waitLength(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  const [value, unit] = s < 60 ? [s, 's'] : s < 3600 ? [s / 60, 'min'] : [s / 3600, 'h'];
  return `${Number(value.toFixed(1))} ${unit}`;
}

/** What a decided call's outcome reads as: a call that waited for input was answered (or done) or declined. */
function outcomeWord(r: ApprovalRecord): string {
  if (r.kind !== 'input') return r.outcome ?? 'waiting';
  return r.outcome === 'approved' ? (r.answer !== undefined ? 'answered' : 'done') : r.outcome === 'denied' ? 'declined' : (r.outcome ?? 'waiting');
}

/**
 * `step 1 · files__write_file · approved by alice at 2026-…Z (waited 7.2 s) · reason "ok"`; a
 * decision without an identity is "by a person"; `now` times a call still waiting. A call that
 * waited for input (the server's questions) says `input` and is answered, done or declined.
 */
export function approvalLine(r: ApprovalRecord, now = Date.now()): string {
  const requested = Date.parse(r.requestedAt);
  const input = r.kind === 'input';
  let how: string;
  if (!r.outcome || r.decidedAt === undefined) {
    const limit = r.timeoutMs !== undefined ? `, ${input ? 'declined' : 'denied'} after ${waitLength(r.timeoutMs)}` : '';
    how = `${input ? 'waiting for input' : 'waiting'} since ${r.requestedAt} (${waitLength(now - requested)} so far${limit})`;
  } else if (r.outcome === 'timed_out') {
    how = `timed out after ${waitLength(r.timeoutMs ?? Date.parse(r.decidedAt) - requested)} at ${r.decidedAt}, ${input ? 'no answer: declined' : 'no decision'}`;
  } else {
    const reason = r.reason !== undefined ? ` · reason ${JSON.stringify(r.reason)}` : '';
    how = `${outcomeWord(r)} by ${r.decidedBy ?? 'a person'} at ${r.decidedAt} (waited ${waitLength(Date.parse(r.decidedAt) - requested)})${reason}`;
  }
  return `step ${r.step} · ${r.name}${input ? ` · input${r.round !== undefined && r.round > 1 ? ` (round ${r.round})` : ''}` : ''} · ${how}`;
}

/** One line per decided call: `answered modern__book_table (call toolu_1) of turn T as alice`. */
export function decidedLine(turnId: string, r: ApprovalRecord): string {
  return `${outcomeWord(r)} ${r.name} (call ${r.callId}) of turn ${turnId}${r.decidedBy ? ` as ${r.decidedBy}` : ''}`;
}

/** A turn's approvals as a block: a heading and one line per call; none when no call waited. */
export function approvalBlock(records: readonly ApprovalRecord[], now = Date.now()): string[] {
  return records.length
    ? [`Approvals (${records.length}):`, ...records.map((r) => `  ${approvalLine(r, now)}`)]
    : [];
}
