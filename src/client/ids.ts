import { randomBytes } from 'node:crypto';

/**
 * `<kind>-<time-sortable id>`: milliseconds in fixed-width base 36, then random bits, so ids sort by
 * creation time in lists and never collide between concurrent callers. The one id format of turns
 * (`turn-`), conversations (`conv-`) and messages (`msg-`).
 */
export function newId(kind: 'turn' | 'conv' | 'msg', now = Date.now()): string {
  return `${kind}-${now.toString(36).padStart(9, '0')}-${randomBytes(5).toString('hex')}`;
}
