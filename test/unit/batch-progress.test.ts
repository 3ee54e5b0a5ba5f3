/** The progress line a batch prints without a terminal. */
import { progressLine } from '../../src/cli/batch-progress';
import { formatDuration } from '../../src/cli/duration';

it('says what is done, failed and running, the rate and the time left', () => {
  const standing = { total: 40, done: 12, failed: 1, running: 10, waitingApproval: 0, ratePerSecond: 0.8 };
  expect(progressLine('q', standing)).toBe('batch q: 12/40 done · 1 failed · 10 running · 0.8/s · ETA 35 s');
  expect(progressLine('q', { ...standing, waitingApproval: 2, ratePerSecond: 0.1 })).toBe(
    'batch q: 12/40 done · 1 failed · 10 running · 2 waiting for approval · 0.1/s · ETA 4 min 40 s',
  );
  // Before the batch workflow answered and before a first result: no running count, no ETA.
  expect(progressLine('q', { total: 3, done: 0, failed: 0, waitingApproval: 0, ratePerSecond: 0 })).toBe(
    'batch q: 0/3 done · 0 failed · 0.0/s',
  );
  expect(formatDuration(7530)).toBe('2 h 5 min');
});
