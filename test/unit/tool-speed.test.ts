/** Which tools run as local activities (src/mcp/tool-speed.ts). */
import { QUICK_CALL_MS, QUICK_CALLS, ToolSpeed } from '../../src/mcp/tool-speed';

it(`a tool runs locally once its last ${QUICK_CALLS} calls were each quick, and no longer after a slow one`, () => {
  const speed = new ToolSpeed();
  const local = (): string[] => speed.localTools(['echo', 'slow', 'unseen'], 'auto');
  for (let i = 0; i < QUICK_CALLS - 1; i++) speed.record('echo', 5);
  expect(local()).toEqual([]);
  speed.record('echo', QUICK_CALL_MS);
  expect(local()).toEqual(['echo']);
  speed.record('slow', 10);
  speed.record('slow', 10);
  speed.record('slow', QUICK_CALL_MS + 1);
  expect(local()).toEqual(['echo']);
  // A slow call sends the tool back to its own activities until enough quick calls pass it.
  speed.record('echo', 30_000);
  expect(local()).toEqual([]);
  for (let i = 0; i < QUICK_CALLS - 1; i++) speed.record('echo', 5);
  expect(local()).toEqual([]);
  speed.record('echo', 5);
  expect(local()).toEqual(['echo']);
});

it('the server setting true or false overrides what was seen', () => {
  const speed = new ToolSpeed();
  expect(speed.localTools(['a', 'b'], true)).toEqual(['a', 'b']);
  for (let i = 0; i < QUICK_CALLS; i++) speed.record('a', 1);
  expect(speed.localTools(['a', 'b'], false)).toEqual([]);
  expect(speed.localTools(['a', 'b'], 'auto')).toEqual(['a']);
});

it('under auto, a tool never called is unseen (a batch turn runs it locally); once called, it is not', () => {
  const speed = new ToolSpeed();
  expect(speed.unseenTools(['a', 'b'], 'auto')).toEqual(['a', 'b']);
  speed.record('a', 30_000);
  expect(speed.unseenTools(['a', 'b'], 'auto')).toEqual(['b']);
  expect(speed.unseenTools(['a', 'b'], false)).toEqual([]);
  expect(speed.unseenTools(['a', 'b'], true)).toEqual([]);
});
