/** The progress a batch prints without a terminal: its line, and where its turns wait for Message Batches. */
import { BatchProgressView, progressLine, type BatchStanding } from '../../src/cli/batch-progress';
import { formatDuration } from '../../src/cli/duration';
import type { MessageBatchWait } from '../../src/client/message-batch-status';

it('says what is done, failed and running, the rate and the time left', () => {
  const standing = {
    total: 40,
    done: 12,
    failed: 1,
    running: 10,
    waitingApproval: 0,
    waitingMessageBatch: 0,
    ratePerSecond: 0.8,
  };
  expect(progressLine('q', standing)).toBe('batch q: 12/40 done · 1 failed · 10 running · 0.8/s · ETA 35 s');
  expect(progressLine('q', { ...standing, waitingApproval: 2, ratePerSecond: 0.1 })).toBe(
    'batch q: 12/40 done · 1 failed · 10 running · 2 waiting for approval · 0.1/s · ETA 4 min 40 s',
  );
  // Before the batch workflow answered and before a first result: no running count, no ETA.
  expect(
    progressLine('q', {
      total: 3,
      done: 0,
      failed: 0,
      waitingApproval: 0,
      waitingMessageBatch: 0,
      ratePerSecond: 0,
    }),
  ).toBe('batch q: 0/3 done · 0 failed · 0.0/s');
  expect(formatDuration(7530)).toBe('2 h 5 min');
});

it('counts the turns waiting for a Message Batch beside those waiting for approval', () => {
  const standing = {
    total: 2000,
    done: 12,
    failed: 0,
    running: 600,
    waitingApproval: 2,
    waitingMessageBatch: 412,
    ratePerSecond: 0,
  };
  expect(progressLine('q', standing)).toBe(
    'batch q: 12/2000 done · 0 failed · 600 running · 2 waiting for approval · 412 waiting for a Message Batch · 0.0/s',
  );
  expect(progressLine('q', { ...standing, waitingApproval: 0 })).toBe(
    'batch q: 12/2000 done · 0 failed · 600 running · 412 waiting for a Message Batch · 0.0/s',
  );
});

describe('BatchProgressView without a terminal', () => {
  const wait: MessageBatchWait = {
    batchId: 'msgbatch_01',
    model: 'm',
    turns: 412,
    requests: 2031,
    submittedAt: 0,
  };
  let printed: string[];
  let errorSpy: jest.SpyInstance;

  beforeEach(() => {
    jest.useFakeTimers({ now: 60_000 });
    printed = [];
    errorSpy = jest.spyOn(console, 'error').mockImplementation((line: string) => void printed.push(line));
  });
  afterEach(() => {
    errorSpy.mockRestore();
    jest.useRealTimers();
  });

  it('follows each progress line with the Message Batch waits, asked at most every 5 s and never waited for', async () => {
    const standing: BatchStanding = {
      total: 500,
      done: 0,
      failed: 0,
      running: 412,
      waitingApproval: 0,
      waitingMessageBatch: 412,
      ratePerSecond: 0,
    };
    let asks = 0;
    let answer: (waits: MessageBatchWait[]) => void = () => undefined;
    const view = new BatchProgressView('q', () => standing, {
      tty: false,
      messageBatchWaits: () => {
        asks++;
        return new Promise((resolve) => (answer = resolve));
      },
    });
    view.update();
    view.update();
    expect(asks).toBe(1); // the second poll, right after, does not ask again
    await jest.advanceTimersByTimeAsync(5_000);
    // The first ask has not answered: the progress line is printed alone, and no second ask starts.
    expect(printed).toEqual([
      'batch q: 0/500 done · 0 failed · 412 running · 412 waiting for a Message Batch · 0.0/s',
    ]);
    expect(asks).toBe(1);
    answer([wait]);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(printed.slice(1)).toEqual([
      'batch q: 0/500 done · 0 failed · 412 running · 412 waiting for a Message Batch · 0.0/s',
      'batch q: 412 turns waiting for Claude batch msgbatch_01 (2,031 requests, submitted 1 min ago)',
    ]);
    expect(asks).toBe(2);
    // Once no turn waits, an older answer is not shown.
    standing.waitingMessageBatch = 0;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(printed.slice(3)).toEqual(['batch q: 0/500 done · 0 failed · 412 running · 0.0/s']);
    view.stop();
  });
});

describe('BatchProgressView on a terminal', () => {
  let writeSpy: jest.SpyInstance;
  beforeEach(() => (writeSpy = jest.spyOn(process.stderr, 'write').mockImplementation(() => true)));
  afterEach(() => {
    writeSpy.mockRestore();
    jest.useRealTimers();
  });

  it('prints the Message Batch waits above the bar when a count or a Message Batch changes, not as they age', async () => {
    jest.useFakeTimers({ now: 60_000 });
    const standing: BatchStanding = {
      total: 500,
      done: 0,
      failed: 0,
      running: 412,
      waitingApproval: 0,
      waitingMessageBatch: 412,
      ratePerSecond: 0,
    };
    const answers: MessageBatchWait[][] = [
      [{ batchId: 'msgbatch_01', model: 'm', turns: 412, requests: 2031, submittedAt: 0 }],
      [{ batchId: 'msgbatch_01', model: 'm', turns: 412, requests: 2031, submittedAt: 0 }],
      [{ batchId: 'msgbatch_01', model: 'm', turns: 400, requests: 2031, submittedAt: 0 }],
    ];
    const view = new BatchProgressView('q', () => standing, {
      tty: true,
      messageBatchWaits: async () => answers.shift() ?? [],
    });
    const logged: string[] = [];
    jest.spyOn(view, 'log').mockImplementation((line) => void logged.push(line));
    for (let i = 0; i < 3; i++) {
      view.update();
      await jest.advanceTimersByTimeAsync(5_000);
    }
    view.stop();
    expect(logged).toEqual([
      'batch q: 412 turns waiting for Claude batch msgbatch_01 (2,031 requests, submitted 1 min ago)',
      'batch q: 400 turns waiting for Claude batch msgbatch_01 (2,031 requests, submitted 1 min ago)',
    ]);
  });
});
