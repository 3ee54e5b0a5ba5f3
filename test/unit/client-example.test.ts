/**
 * The README's client example is examples/client.ts, which `tsc -p tsconfig.json` type-checks: the
 * README block between the markers must be that file, character for character, in a ```ts fence.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const OPEN = '<!-- client-example -->';
const CLOSE = '<!-- /client-example -->';

it('the README shows examples/client.ts as it is', () => {
  const example = fs.readFileSync(path.join(ROOT, 'examples', 'client.ts'), 'utf8');
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(OPEN);
  const end = readme.indexOf(CLOSE);
  if (start < 0 || end < start) {
    throw new Error(`README.md needs ${OPEN}, then a \`\`\`ts block with examples/client.ts, then ${CLOSE}`);
  }
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(readme.slice(start + OPEN.length, end));
  expect(block?.[1]).toBe(example);
});
