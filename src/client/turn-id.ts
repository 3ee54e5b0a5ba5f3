import { randomBytes } from 'node:crypto';

/**
 * `turn-<time-sortable id>`: milliseconds in fixed-width base 36, then random bits, so ids sort by
 * start time in lists and never collide between concurrent callers.
 */
export function newTurnId(now = Date.now()): string {
  return `turn-${now.toString(36).padStart(9, '0')}-${randomBytes(5).toString('hex')}`;
}
