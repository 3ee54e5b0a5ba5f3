/** Transcript segments grouped like a counter (src/core/segment-groups.ts). */
import { compactSegments } from '../../src/core/compaction';
import { appendTurn, MAX_STEP_SEGMENTS, stepSegments, STEPS_PER_GROUP, UNITS_PER_GROUP } from '../../src/core/segment-groups';
import type { MessageParam } from '../../src/core/contracts';
import type { TranscriptSegment } from '../../src/core/transcript-segment';

const turn = (n: number): MessageParam[] => [
  { role: 'user', content: `q${n}` },
  { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}`, name: 'kb__search', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: [{ type: 'text', text: `result ${n}` }] }] },
  { role: 'assistant', content: `a${n}` },
];
const grow = (turns: number, from: TranscriptSegment[] = [], first = 0): TranscriptSegment[] => {
  let history = from;
  for (let i = first; i < first + turns; i++) history = appendTurn(history, turn(i));
  return history;
};
const questions = (h: TranscriptSegment[]) => h.flatMap((s) => s.transcriptSegment).filter((m) => typeof m.content === 'string' && m.role === 'user').map((m) => m.content);

it('groups turns like the digits of a counter in base UNITS_PER_GROUP, keeping every message in order', () => {
  expect(UNITS_PER_GROUP).toBe(8);
  expect(grow(7)).toHaveLength(7);
  expect(grow(8)).toHaveLength(1);
  expect(grow(9)).toHaveLength(2);
  // 100 = 1 x 64 + 4 x 8 + 4
  const hundred = grow(100);
  expect(hundred.map((s) => s.transcriptSegment.length / 4)).toEqual([64, 8, 8, 8, 8, 1, 1, 1, 1]);
  expect(questions(hundred)).toEqual(Array.from({ length: 100 }, (_, i) => `q${i}`));
  // Never more than 7 segments a level: 14 up to 100 turns, 21 up to 1,000.
  let history: TranscriptSegment[] = [];
  let most = 0;
  for (let i = 0; i < 1000; i++) {
    history = appendTurn(history, turn(i));
    if (i + 1 <= 100) most = Math.max(most, history.length);
    expect(history.length).toBeLessThanOrEqual(21);
  }
  expect(most).toBe(14);
});

it('a formed group is the same segment while the conversation goes on', () => {
  const at8 = grow(8);
  const at20 = grow(12, at8, 8);
  expect(at20[0]).toBe(at8[0]);
});

it('goes on grouping after compaction dropped turns from the start', () => {
  const history = grow(20);
  // Drop the two oldest groups' worth: what is left keeps its boundaries.
  let compacted = history;
  for (let i = 0; i < 3; i++) compacted = compactSegments(compacted, { keepRecentTurns: 4 })!.segments;
  const after = grow(16, compacted, 20);
  expect(questions(after)).toEqual([...questions(compacted), ...Array.from({ length: 16 }, (_, i) => `q${20 + i}`)]);
  expect(after.length).toBeLessThanOrEqual(compacted.length + 2);
});

it("groups a turn's steps the same way; a call's grouping extends the previous call's, so its groups are the same segments", () => {
  const steps: MessageParam[][] = [[{ role: 'user', content: 'question' }], ...Array.from({ length: 19 }, (_, i) => turn(i).slice(1, 3))];
  expect([STEPS_PER_GROUP, MAX_STEP_SEGMENTS]).toEqual([2, 3]);
  const units = (n: number): number[] => stepSegments(steps.slice(0, n)).map((s) => s.transcriptSegment.length);
  // Units grouped like the bits of the step count; past the third segment, one segment of the rest;
  // fewer than three groups, the newest splits back into its parts.
  expect(units(7)).toEqual([1 + 3 * 2, 2 * 2, 2]);
  expect(units(8)).toEqual([1 + 3 * 2, 2 * 2, 2 * 2]);
  expect(units(9)).toEqual([1 + 3 * 2, 4 * 2, 2]);
  expect(units(15)).toEqual([1 + 7 * 2, 4 * 2, 3 * 2]);
  expect(units(17)).toEqual([1 + 7 * 2, 8 * 2, 2]);
  const twenty = stepSegments(steps);
  expect(twenty.map((s) => s.transcriptSegment.length)).toEqual([1 + 15 * 2, 2 * 2, 2 * 2]);
  expect(twenty.flatMap((s) => s.transcriptSegment)).toEqual(steps.flat());
  expect(stepSegments(steps.slice(0, 19))[0]).toEqual(twenty[0]);
  // Every call from the third is sent exactly three, and all but the last are segments an earlier call sent.
  for (let n = 1; n <= steps.length; n++) expect(units(n).length).toBe(Math.min(n, MAX_STEP_SEGMENTS));
  const sent = new Set<string>();
  for (let n = 1; n <= steps.length; n++) {
    const segments = stepSegments(steps.slice(0, n)).map((s) => JSON.stringify(s.transcriptSegment));
    if (n > 2) expect(segments.slice(0, -1).filter((s) => !sent.has(s)).length).toBeLessThanOrEqual(1);
    for (const s of segments) sent.add(s);
  }
  // With eights and no limit, as a conversation's turns.
  expect(stepSegments(steps, 8, Infinity).map((s) => s.transcriptSegment.length)).toEqual([1 + 7 * 2, 16, 2, 2, 2, 2]);
});
