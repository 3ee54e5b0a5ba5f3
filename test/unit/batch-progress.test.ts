/** The progress a batch prints without a terminal: its line, and where its turns wait for Message Batches. */
import { BatchProgressView, progressLine, rateEtaSeconds, type BatchStanding } from '../../src/cli/batch-progress';
import { formatDuration } from '../../src/cli/duration';
import type { MessageBatchWait } from '../../src/client/message-batch-status';

it('says what is done, failed and running, the rate and the time left', () => {
  const standing = {
    total: 40,
    done: 12,
    partial: 0,
    notApproved: 0,
    failed: 1,
    running: 10,
    waitingApproval: 0,
    waitingMessageBatch: 0,
    ratePerSecond: 0.8,
  };
  expect(progressLine('q', standing, rateEtaSeconds(standing))).toBe('batch q: 12/40 done · 1 failed · 10 running · 0.8/s · ETA 35 s');
  const slower = { ...standing, waitingApproval: 2, ratePerSecond: 0.1 };
  expect(progressLine('q', slower, rateEtaSeconds(slower))).toBe(
    'batch q: 12/40 done · 1 failed · 10 running · 2 waiting for approval · 0.1/s · ETA 4 min 40 s',
  );
  // Before the batch workflow answered and before a first result: no running count, no ETA.
  const before: BatchStanding = {
    total: 3,
    done: 0,
    partial: 0,
    notApproved: 0,
    failed: 0,
    waitingApproval: 0,
    waitingMessageBatch: 0,
    ratePerSecond: 0,
  };
  expect(rateEtaSeconds(before)).toBeUndefined();
  expect(progressLine('q', before, undefined)).toBe('batch q: 0/3 done · 0 failed · 0.0/s');
  expect(formatDuration(7530)).toBe('2 h 5 min');
});

it('names partial and not-approved answers beside the failed ones, as the results file counts them', () => {
  const standing: BatchStanding = {
    total: 10,
    done: 10,
    partial: 1,
    notApproved: 2,
    failed: 0,
    running: 0,
    waitingApproval: 0,
    waitingMessageBatch: 0,
    ratePerSecond: 2,
  };
  expect(progressLine('q', standing, rateEtaSeconds(standing))).toBe('batch q: 10/10 done · 1 partial · 2 not approved · 0 failed · 0 running · 2.0/s');
});

it('counts the turns waiting for a Message Batch beside those waiting for approval', () => {
  const standing = {
    total: 2000,
    done: 12,
    partial: 0,
    notApproved: 0,
    failed: 0,
    running: 600,
    waitingApproval: 2,
    waitingMessageBatch: 412,
    ratePerSecond: 0,
  };
  expect(progressLine('q', standing, rateEtaSeconds(standing))).toBe(
    'batch q: 12/2000 done · 0 failed · 600 running · 2 waiting for approval · 412 waiting for a Message Batch · 0.0/s',
  );
  expect(progressLine('q', { ...standing, waitingApproval: 0 }, undefined)).toBe(
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
      partial: 0,
      notApproved: 0,
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

  it('through Message Batches, takes the ETA from the Message Batches\' progress, not from the rate of results', async () => {
    const standing: BatchStanding = {
      total: 500,
      done: 10,
      partial: 0,
      notApproved: 0,
      failed: 0,
      running: 490,
      waitingApproval: 0,
      waitingMessageBatch: 490,
      // 10 results in the first 100 s: at that rate the 490 left would take 81 min 40 s.
      ratePerSecond: 0.1,
    };
    // At the first line the Message Batch was submitted 65 s before and has answered 1,300 of its
    // 2,000 requests: the 700 left take 35 s at that pace.
    const waits: MessageBatchWait[] = [
      { ...wait, turns: 490, requests: 2000, counts: { processing: 700, succeeded: 1290, errored: 10, canceled: 0, expired: 0 } },
    ];
    const view = new BatchProgressView('q', () => standing, { tty: false, messageBatchWaits: async () => waits });
    view.update();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(printed[0]).toBe('batch q: 10/500 done · 0 failed · 490 running · 490 waiting for a Message Batch · 0.1/s · ETA 35 s');
    // Before a Message Batch has answered a request there is no ETA (the rate of results would mislead).
    waits[0] = { ...waits[0]!, counts: { processing: 2000, succeeded: 0, errored: 0, canceled: 0, expired: 0 } };
    await jest.advanceTimersByTimeAsync(5_000);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(printed.at(-2)).toBe('batch q: 10/500 done · 0 failed · 490 running · 490 waiting for a Message Batch · 0.1/s');
    view.stop();
  });

  it('ends with a last progress line counting every result written', () => {
    const standing: BatchStanding = { total: 2, done: 1, partial: 0, notApproved: 0, failed: 0, running: 1, waitingApproval: 0, waitingMessageBatch: 0, ratePerSecond: 0 };
    const view = new BatchProgressView('q', () => standing, { tty: false });
    Object.assign(standing, { done: 2, partial: 1, running: 0 });
    view.stop();
    expect(printed).toEqual(['batch q: 2/2 done · 1 partial · 0 failed · 0 running · 0.0/s']);
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
      partial: 0,
      notApproved: 0,
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
