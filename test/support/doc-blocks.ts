/**
 * The fenced code blocks of the README, test/README.md and docs/*.md, each with where it is, its language, and
 * what the comments right above its fence say about it:
 * - `<!-- block: NAME -->` names it, for a test that reads that block (never by slicing a page at a heading);
 * - `<!-- check: CODE -->` is TypeScript put before it when it is type-checked (the declarations a
 *   fragment leaves to its reader, e.g. `declare const client: Client;`).
 */
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.join(__dirname, '..', '..');

export interface DocBlock {
  /** Relative to the repository, e.g. `docs/cli.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  body: string;
  name?: string;
  prelude?: string;
}

/** The Markdown pages whose blocks are checked: the README and every page of docs/. */
export function docPages(): string[] {
  return ['README.md', 'test/README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
}

export function docBlocks(files: readonly string[] = docPages()): DocBlock[] {
  return files.flatMap((file) => {
    const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
    const blocks: DocBlock[] = [];
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\S*)\s*$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
      if (end < 0) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
      const notes: Record<string, string> = {};
      for (let j = i - 1; j >= 0 && /^<!-- \w[\w-]*: .* -->$/.test(lines[j]!); j--) {
        const [, key, value] = /^<!-- (\w[\w-]*): (.*) -->$/.exec(lines[j]!)!;
        notes[key!] = notes[key!] ? `${value}\n${notes[key!]}` : value!;
      }
      blocks.push({
        file,
        line: i + 1,
        lang: open[1]!,
        body: lines.slice(i + 1, end).join('\n'),
        ...(notes.block ? { name: notes.block } : {}),
        ...(notes.check ? { prelude: notes.check } : {}),
      });
      i = end;
    }
    return blocks;
  });
}

/** The block named `name` in `file`. */
export function docBlock(file: string, name: string): DocBlock {
  const block = docBlocks([file]).find((b) => b.name === name);
  if (!block) throw new Error(`${file} has no block named ${name} (<!-- block: ${name} --> above its fence)`);
  return block;
}
