/** Compaction of prior history to fit the context window (src/core/compaction.ts), stage by stage. */
import { compactHistory, compactSegments, replayCompaction, toolResultMarker, turnStarts } from '../../src/core/compaction';
import { segment } from '../../src/core/transcript-segment';
import type { MessageParam } from '../../src/core/contracts';

const toolTurn = (n: number): MessageParam[] => [
  { role: 'user', content: `q${n}` },
  { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}`, name: 'kb__search', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: [{ type: 'text', text: `result ${n}` }] }] },
  { role: 'assistant', content: `a${n}` },
];
const history = [...toolTurn(1), ...toolTurn(2), ...toolTurn(3)];
const resultTexts = (h: MessageParam[]) =>
  h.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.flatMap((b) => (b.type === 'tool_result' && Array.isArray(b.content) ? b.content.map((c) => (c.type === 'text' ? c.text : '')) : []))));

it('finds turn starts: user messages without a tool_result', () => {
  expect(turnStarts(history)).toEqual([0, 4, 8]);
});

it('runs its stages in order until nothing is left: older results, older turns, recent results, then one turn at a time', () => {
  const one = compactHistory(history)!;
  expect(one.report).toEqual({ toolResultsReplaced: 1, messagesDropped: 0, stages: 1 });
  expect(resultTexts(one.history)).toEqual([toolResultMarker(8), 'result 2', 'result 3']);

  const two = compactHistory(one.history)!;
  expect(two.report).toEqual({ toolResultsReplaced: 0, messagesDropped: 4, stages: 1 });
  expect(two.history).toEqual(history.slice(4));

  const three = compactHistory(two.history)!;
  expect(three.report).toEqual({ toolResultsReplaced: 2, messagesDropped: 0, stages: 1 });
  expect(resultTexts(three.history)).toEqual([toolResultMarker(8), toolResultMarker(8)]);

  const four = compactHistory(three.history)!;
  expect(four.report).toEqual({ toolResultsReplaced: 0, messagesDropped: 4, stages: 1 });
  expect(four.history[0]).toEqual({ role: 'user', content: 'q3' });
  const five = compactHistory(four.history)!;
  expect(five).toEqual({ history: [], report: { toolResultsReplaced: 0, messagesDropped: 4, stages: 1 } });
  expect(compactHistory(five.history)).toBeUndefined();
});

it('never cuts between a tool_use and its tool_result', () => {
  const dropped = compactHistory(compactHistory(history)!.history)!.history;
  expect(dropped[0]).toEqual({ role: 'user', content: 'q2' });
});

it('keepRecentTurns and replaceToolResults shape the stages', () => {
  expect(compactHistory(history, { keepRecentTurns: 0 })!.report).toEqual({ toolResultsReplaced: 3, messagesDropped: 0, stages: 1 });
  expect(compactHistory(history, { keepRecentTurns: 1, replaceToolResults: false })!).toEqual({
    history: history.slice(8),
    report: { toolResultsReplaced: 0, messagesDropped: 8, stages: 1 },
  });
});

it('does nothing to an empty history', () => {
  expect(compactHistory([])).toBeUndefined();
});

it('compacts a history given as segments, keeping their boundaries: a segment left as it was is the same segment', () => {
  // Two turns in one segment, the third alone.
  const given = [segment(history.slice(0, 8)), segment(history.slice(8))];
  const one = compactSegments(given)!;
  expect(one.report).toEqual({ toolResultsReplaced: 1, messagesDropped: 0, stages: 1 });
  expect(one.segments.map((s) => s.transcriptSegment.length)).toEqual([8, 4]);
  expect(resultTexts(one.segments[0]!.transcriptSegment)).toEqual([toolResultMarker(8), 'result 2']);
  expect(one.segments[1]).toBe(given[1]);
  // Dropping the oldest turn cuts into the first segment; what is left of it is a segment of its own.
  const two = compactSegments(one.segments)!;
  expect(two.report).toEqual({ toolResultsReplaced: 0, messagesDropped: 4, stages: 1 });
  expect(two.segments).toEqual([segment(toolTurn(2)), given[1]]);
  expect(two.segments[1]).toBe(given[1]);
  // Dropping whole segments removes them.
  expect(compactSegments([segment(toolTurn(1)), segment(toolTurn(2)), segment(toolTurn(3))], { replaceToolResults: false })!.segments).toEqual([
    segment(toolTurn(2)),
    segment(toolTurn(3)),
  ]);
});

it('replays a turn\'s stages on the history: the conversation carries the history its turn compacted to', () => {
  const given = [segment(toolTurn(1)), segment(toolTurn(2)), segment(toolTurn(3))];
  let asTheTurnDid = given;
  for (let i = 0; i < 3; i++) asTheTurnDid = compactSegments(asTheTurnDid, { keepRecentTurns: 1 })!.segments;
  expect(replayCompaction(given, { keepRecentTurns: 1 }, 3)).toEqual(asTheTurnDid);
  expect(replayCompaction(given, {}, 0)).toEqual(given);
  // Stages beyond what is left leave an empty history.
  expect(replayCompaction(given, {}, 99)).toEqual([]);
});
