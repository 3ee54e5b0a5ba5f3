/** The exit code of `mcp-turns batch`: each query's code as for `run`, skipped lines 2, the worst wins. */
import { countsOf } from '../../src/cli/batch-counts';
import { batchExitCode } from '../../src/cli/batch-exit-code';
import type { ResultLine } from '../../src/client/result-line';

const line = (id: string, exitCode: 0 | 1 | 3 | 4): ResultLine => ({
  id,
  status: exitCode === 1 ? 'failed' : 'completed',
  exitCode,
  ...(exitCode === 3 ? { stopReason: 'refusal' as const } : {}),
  workflowId: `b-${id}`,
});
const codeOf = (codes: Array<0 | 1 | 3 | 4>, skipped = 0): number => batchExitCode(countsOf(codes.map((c, i) => line(String(i), c))), skipped);

it('is 0 only when every line ran and every query was answered in full', () => {
  expect(codeOf([0, 0, 0])).toBe(0);
  expect(codeOf([0, 0, 0], 1)).toBe(2);
});

it('follows the worst outcome: failed, then not approved, then partial, then skipped lines', () => {
  expect(codeOf([0, 3], 4)).toBe(3);
  expect(codeOf([0, 3, 4], 4)).toBe(4);
  expect(codeOf([1, 3, 4], 4)).toBe(1);
  expect(codeOf([1, 0])).toBe(1);
  expect(codeOf([4, 0])).toBe(4);
  expect(codeOf([3, 0])).toBe(3);
});
