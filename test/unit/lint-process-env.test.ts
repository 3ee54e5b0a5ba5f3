/**
 * Lint refuses writes to process.env in src/ (eslint.config.mjs): settings are resolved once at the
 * entry point and passed down (src/cli/cli-settings.ts). Reading it stays allowed. The probes are
 * linted in memory, as a file placed in src/.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');

// ESLint loads eslint.config.mjs with a dynamic import, which Jest's module sandbox refuses, so the
// Node API runs in a child process; without type information a file that is not on disk can be linted.
const LINT_IN_MEMORY = `
  import { ESLint } from 'eslint';
  const { file, codes } = JSON.parse(process.argv[1]);
  const eslint = new ESLint({
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false } },
      rules: { '@typescript-eslint/no-floating-promises': 'off' },
    },
  });
  const out = [];
  for (const code of codes) {
    const [result] = await eslint.lintText(code, { filePath: file });
    out.push(result.messages.filter((m) => m.ruleId === 'no-restricted-syntax').length);
  }
  process.stdout.write(JSON.stringify(out));
`;

function restrictedCounts(codes: string[]): number[] {
  const file = path.join(root, 'src', 'cli', 'env-probe.ts');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', LINT_IN_MEMORY, JSON.stringify({ file, codes })], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out) as number[];
}

jest.setTimeout(60_000);

it('refuses every way of writing process.env in src/, and allows reading it', () => {
  const writes = [
    "process.env.MCP_TURNS_HOME = '/x';",
    "process.env['MCP_TURNS_CONFIG'] = '/x';",
    "process.env.PATH += ':/x';",
    'delete process.env.MCP_TURNS_HOME;',
    "Object.assign(process.env, { A: '1' });",
    'process.env = {};',
  ];
  const reads = ['export const home = process.env.MCP_TURNS_HOME;', 'export const env = { ...process.env };'];
  expect(restrictedCounts([...writes, ...reads])).toEqual([...writes.map(() => 1), ...reads.map(() => 0)]);
});
