import { oneLine } from '../../src/core/text';

describe('oneLine', () => {
  it('joins lines and runs of whitespace with one space, and trims the ends', () => {
    expect(oneLine('  What is\n\tin   /tmp? \n', 120)).toBe('What is in /tmp?');
  });

  it('keeps text of exactly max characters whole', () => {
    const text = 'a'.repeat(120);
    expect(oneLine(text, 120)).toBe(text);
  });

  it('cuts longer text to max characters, the last one …', () => {
    const cut = oneLine(`${'a'.repeat(119)}bc`, 120);
    expect(cut).toBe(`${'a'.repeat(119)}…`);
    expect(cut).toHaveLength(120);
  });

  it('counts a longer ellipsis within max', () => {
    expect(oneLine('abcdefghij', 8, '...')).toBe('abcde...');
    expect(oneLine('abcdefgh', 8, '...')).toBe('abcdefgh');
  });

  it('measures the text after flattening it', () => {
    expect(oneLine('a\n\n\nb', 3)).toBe('a b');
  });
});
