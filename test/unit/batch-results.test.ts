/** The batch results file: what an earlier run left in it, the start line and the closing summary. */
import type { BatchItemOutcome } from '../../src/client/batch-client';
import type { ChatTurnResult } from '../../src/core/turn-result';
import {
  batchSummary,
  defaultBatchName,
  defaultResultsFile,
  earlierResults,
  otherBatchIn,
  startLine,
} from '../../src/cli/batch-results';
import { resultLine, type ResultLine } from '../../src/client/result-line';

const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const completed = (id: string, durationMs: number): ResultLine => ({
  id,
  status: 'completed',
  answer: `A ${id}`,
  usage,
  costUsd: 0.001,
  durationMs,
  workflowId: `b-${id}`,
});
const failed = (id: string): ResultLine => ({ id, status: 'failed', error: 'Claude API 400', durationMs: 5, workflowId: `b-${id}` });

it('the summary leaves failed turns out of the turn time and ends with the failed count and how to retry', () => {
  const lines = [completed('a', 1000), failed('b'), completed('c', 3000), completed('d', 2000), failed('e')];
  expect(batchSummary(lines, 'q.results.jsonl').split('\n')).toEqual([
    '5 results in q.results.jsonl: 3 answered, 2 failed',
    'tokens: 30 in, 15 out, 0 cache read, 0 cache write · cost $0.0030',
    'turn time (3 completed turns): p50 2.00 s, p95 3.00 s',
    '2 of 5 queries failed: see q.results.jsonl (status "failed") — run the same command again to retry them',
  ]);
});

it('with no completed turn there is no turn time; with none failed no failure line; approvals come before the failure line', () => {
  expect(batchSummary([failed('a')], 'o.jsonl').split('\n').slice(2)).toEqual([
    'turn time: no completed turn',
    '1 of 1 query failed: see o.jsonl (status "failed") — run the same command again to retry them',
  ]);
  expect(batchSummary([completed('a', 1500)], 'o.jsonl').split('\n').slice(2)).toEqual([
    'turn time (1 completed turn): p50 1.50 s, p95 1.50 s',
  ]);
  const approvals = { approved: 2, denied: 1, timed_out: 0 };
  expect(batchSummary([completed('a', 1500), failed('b')], 'o.jsonl', approvals).split('\n').slice(3)).toEqual([
    'approvals: 3 call(s) waited: 2 approved, 1 denied, 0 timed out',
    '1 of 2 queries failed: see o.jsonl (status "failed") — run the same command again to retry them',
  ]);
});

it('an earlier run keeps one completed line per query of this file and counts the queries that only failed', () => {
  const earlier = earlierResults(
    [completed('a', 1), completed('a', 2), failed('b'), failed('b'), failed('c'), completed('c', 3), completed('gone', 4), failed('gone2')],
    new Set(['a', 'b', 'c', 'd', 'e']),
  );
  expect(earlier.kept.map((l) => [l.id, l.durationMs])).toEqual([
    ['a', 1],
    ['c', 3],
  ]);
  expect(earlier.failedBefore).toBe(1);
  expect(startLine({ name: 'q', total: 5, earlier, out: 'q.results.jsonl', concurrency: 10 })).toBe(
    'batch q: 5 queries; 2 already completed in q.results.jsonl (kept), 1 failed before (run again), 2 to run; concurrency 10',
  );
  expect(startLine({ name: 'q', total: 5, earlier: { kept: [], failedBefore: 0 }, out: 'q.results.jsonl', concurrency: 3 })).toBe(
    'batch q: 5 queries to run; concurrency 3; results in q.results.jsonl',
  );
  const allDone = earlierResults([completed('a', 1)], new Set(['a']));
  expect(startLine({ name: 'q', total: 1, earlier: allDone, out: 'o', concurrency: 1 })).toBe(
    'batch q: 1 query; 1 already completed in o (kept), 0 to run; concurrency 1',
  );
});

it('a batch through Message Batches says so when it starts, with its deadline, and that its cost is at half price', () => {
  const none = { kept: [], failedBefore: 0 };
  expect(startLine({ name: 'q', total: 5, earlier: none, out: 'o', concurrency: 3, messageBatches: {} })).toBe(
    'batch q: 5 queries to run; concurrency 3; results in o; through Message Batches (half price, deadline 24 h)',
  );
  expect(startLine({ name: 'q', total: 5, earlier: none, out: 'o', concurrency: 3, messageBatches: { deadlineMs: 90_000 } })).toBe(
    'batch q: 5 queries to run; concurrency 3; results in o; through Message Batches (half price, deadline 1 min 30 s)',
  );
  const rerun = earlierResults([completed('a', 1)], new Set(['a', 'b']));
  expect(startLine({ name: 'q', total: 2, earlier: rerun, out: 'o', concurrency: 1, messageBatches: { deadlineMs: 30 * 60_000 } })).toBe(
    'batch q: 2 queries; 1 already completed in o (kept), 1 to run; concurrency 1; through Message Batches (half price, deadline 30 min)',
  );
  expect(batchSummary([completed('a', 1500)], 'o.jsonl', undefined, { messageBatches: true }).split('\n')[1]).toBe(
    'tokens: 10 in, 5 out, 0 cache read, 0 cache write · cost $0.0010 (Message Batches: half the standard price)',
  );
  expect(batchSummary([completed('a', 1500)], 'o.jsonl', undefined, { messageBatches: false }).split('\n')[1]).toBe(
    'tokens: 10 in, 5 out, 0 cache read, 0 cache write · cost $0.0010',
  );
});

it('the summary shows the 1-hour share of the cache writes when there is one', () => {
  const writing = (id: string, cacheCreationInputTokens: number, cacheCreation1hInputTokens?: number): ResultLine => ({
    ...completed(id, 1000),
    usage: { ...usage, cacheCreationInputTokens, ...(cacheCreation1hInputTokens ? { cacheCreation1hInputTokens } : {}) },
  });
  expect(batchSummary([writing('a', 1000, 800), writing('b', 200)], 'o.jsonl').split('\n')[1]).toBe(
    'tokens: 20 in, 10 out, 0 cache read, 1200 cache write (1h 800) · cost $0.0020',
  );
});

const partial = (id: string, stopReason: ResultLine['stopReason']): ResultLine => ({ ...completed(id, 1000), stopReason, exitCode: 3 });

it('each line carries the exit code `run` gives the same result: a refusal 3, a denied call 4, a failure 1', () => {
  const result = (over: Partial<ChatTurnResult>): BatchItemOutcome => ({
    id: 'a',
    workflowId: 'b-a',
    status: 'completed',
    result: { response: { conversation: 'A' }, stopReason: 'completed', usage, costUsd: 0, toolCalls: [], ...over } as unknown as ChatTurnResult,
  });
  expect(resultLine(result({})).exitCode).toBe(0);
  expect(resultLine(result({ stopReason: 'refusal' }))).toMatchObject({ status: 'completed', stopReason: 'refusal', exitCode: 3 });
  expect(resultLine(result({ approvals: [{ outcome: 'denied' }] } as never)).exitCode).toBe(4);
  expect(resultLine({ id: 'a', workflowId: 'b-a', status: 'failed', error: 'boom' }).exitCode).toBe(1);
});

it('the summary names partial answers by stop reason, answers without an approved call, and skipped lines', () => {
  const lines = [completed('a', 1000), partial('b', 'refusal'), { ...completed('c', 1000), exitCode: 4 as const }, failed('d'), completed('e', 1000)];
  const summary = batchSummary(lines, 'o.jsonl', undefined, { skipped: { lines: 4, file: 'q.jsonl' } }).split('\n');
  expect(summary[0]).toBe('5 results in o.jsonl: 2 answered, 1 partial (refusal), 1 not approved, 1 failed; 4 lines of q.jsonl skipped');
  // What to do about skipped lines, then about failed queries (the worse, last).
  expect(summary.slice(-2)).toEqual([
    '4 lines of q.jsonl skipped (reported above by line number): fix them and run the same command again to run them',
    '1 of 5 queries failed: see o.jsonl (status "failed") — run the same command again to retry them',
  ]);
  expect(batchSummary([partial('a', 'refusal'), partial('b', 'max_steps'), partial('c', 'refusal')], 'o.jsonl').split('\n')[0]).toBe(
    '3 results in o.jsonl: 0 answered, 3 partial (2 refusal, 1 max_steps), 0 failed',
  );
  // A line written before lines had exit codes: read from its status and stop reason.
  const { exitCode: _, ...older } = partial('a', 'max_tokens');
  expect(batchSummary([older, completed('b', 1)], 'o.jsonl', undefined, { skipped: { lines: 1, file: 'q.jsonl' } }).split('\n')[0]).toBe(
    '2 results in o.jsonl: 1 answered, 1 partial (max_tokens), 0 failed; 1 line of q.jsonl skipped',
  );
  expect(batchSummary([completed('a', 1)], 'o.jsonl').split('\n')[0]).toBe('1 result in o.jsonl: 1 answered, 0 failed');
});

it('each batch name has a results file of its own; a results file of another batch is told apart', () => {
  expect(defaultBatchName('data/my queries.jsonl')).toBe('my-queries');
  expect(defaultResultsFile('data/q.jsonl', 'q')).toBe('data/q.results.jsonl');
  expect(defaultResultsFile('data/q.jsonl', 'nightly')).toBe('data/q.nightly.results.jsonl');
  expect(defaultResultsFile('data/q.jsonl', 'weekly')).toBe('data/q.weekly.results.jsonl');
  const lines = [completed('a', 1), failed('b')].map((l) => ({ ...l, workflowId: `nightly-${l.id}` }));
  expect(otherBatchIn(lines, 'nightly')).toBeUndefined();
  expect(otherBatchIn(lines, 'weekly')).toBe('nightly');
  expect(otherBatchIn([], 'weekly')).toBeUndefined();
});
