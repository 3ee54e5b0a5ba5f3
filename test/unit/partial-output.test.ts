/**
 * The answer's object as its JSON is written: parsed as far as it goes, yielded only when it
 * changes, read from its first `{`, and started again after a reset.
 */
import { PartialOutput } from '../../src/stream/partial-output';

const feed = (p: PartialOutput, deltas: string[]): unknown[] => deltas.flatMap((d) => {
  const got = p.add(d);
  return got ? [got.value] : [];
});

test('yields the object so far, once per change', () => {
  expect(feed(new PartialOutput(), ['{"ci', 'ty": "Pa', 'ris"', ', ', '"days": [1', ', 2]}'])).toEqual([
    {},
    { city: 'Pa' },
    { city: 'Paris' },
    { city: 'Paris', days: [1] },
    { city: 'Paris', days: [1, 2] },
  ]);
});

test('text before the object (a fence, a word) is skipped; text that never parses yields nothing', () => {
  expect(feed(new PartialOutput(), ['```json\n', '{"a": 1}', '\n```'])).toEqual([{ a: 1 }]);
  expect(feed(new PartialOutput(), ['', '   ', 'no object here'])).toEqual([]);
});

test('a reset starts again: the same object is yielded anew', () => {
  const p = new PartialOutput();
  expect(feed(p, ['{"a": 1'])).toEqual([{ a: 1 }]);
  p.reset();
  expect(feed(p, ['{"a": 1'])).toEqual([{ a: 1 }]);
});
