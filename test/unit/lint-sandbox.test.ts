/**
 * Lint guards the workflow sandbox: the project's ESLint config refuses zod and Node built-ins in
 * src/core/ and workflows/, and value imports of other modules, while type-only imports of
 * src/schemas/ pass. Linted in memory, as files placed at those paths.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');

// ESLint loads eslint.config.mjs with a dynamic import, which Jest's module sandbox refuses, so the
// Node API runs in a child process. The sandbox rules need no type information; without it a file
// that is not on disk can be linted.
const LINT_IN_MEMORY = `
  import { ESLint } from 'eslint';
  const files = JSON.parse(process.argv[1]);
  const eslint = new ESLint({
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false } },
      rules: { '@typescript-eslint/no-floating-promises': 'off' },
    },
  });
  const out = [];
  for (const { file, code } of files) {
    const [result] = await eslint.lintText(code, { filePath: file });
    out.push(result.messages.map((m) => ({ rule: m.ruleId, message: m.message })));
  }
  process.stdout.write(JSON.stringify(out));
`;

type Problem = { rule: string | null; message: string };

/** Lints each code as if it were the file at that path (relative to the repository). */
function lint(files: Array<{ file: string; code: string }>): Problem[][] {
  const input = JSON.stringify(files.map(({ file, code }) => ({ file: path.join(root, file), code })));
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', LINT_IN_MEMORY, input], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out) as Problem[][];
}

const NO_ZOD = 'No zod in the workflow sandbox: schemas live in src/schemas (import their types only).';
const NO_NODE = 'Workflow code runs in a deterministic sandbox.';
const CORE_ONLY = 'Sandbox code imports values only from src/core (sandbox-safe); other modules as types only.';

jest.setTimeout(60_000);

const refused: Array<[file: string, code: string, message: string]> = [
  ['src/core/probe.ts', "import { z } from 'zod';\nexport const s = z.string();\n", `'zod' import is restricted from being used. ${NO_ZOD}`],
  ['workflows/probe.ts', "import { z } from 'zod';\nexport const s = z.string();\n", `'zod' import is restricted from being used. ${NO_ZOD}`],
  ['src/core/probe.ts', "import type { z } from 'zod';\nexport type S = z.ZodString;\n", `'zod' import is restricted from being used. ${NO_ZOD}`],
  ['src/core/probe.ts', "import { z } from 'zod/mini';\nexport const s = z.string();\n", `'zod/mini' import is restricted from being used by a pattern. ${NO_ZOD}`],
  ['src/core/probe.ts', "import fs from 'node:fs';\nexport const read = fs.readFileSync;\n", `'node:fs' import is restricted from being used. ${NO_NODE}`],
  ['workflows/probe.ts', "import { createHash } from 'crypto';\nexport const h = createHash;\n", `'crypto' import is restricted from being used. ${NO_NODE}`],
  [
    'src/core/probe.ts',
    "import { parseChatTurnInput } from '../schemas/turn-input';\nexport const p = parseChatTurnInput;\n",
    `'../schemas/turn-input' import is restricted from being used by a pattern. ${CORE_ONLY}`,
  ],
  [
    'workflows/probe.ts',
    "import { ChatTurnInputSchema } from '../src/schemas/turn-input';\nexport const s = ChatTurnInputSchema;\n",
    `'../src/schemas/turn-input' import is restricted from being used by a pattern. ${CORE_ONLY}`,
  ],
];

const cleanCore = [
  "import type { ChatTurnInput } from '../schemas/turn-input';",
  "import { DEFAULT_MODEL } from './turn-defaults';",
  'export const modelOf = (input: ChatTurnInput): string => input.model ?? DEFAULT_MODEL;',
  '',
].join('\n');
const cleanWorkflow = [
  "import type { ChatTurnInput } from '../src/schemas/turn-input';",
  "import { claudeTaskQueue } from '../src/core/task-queues';",
  'export const queueOf = (input: ChatTurnInput, queue: string): string => (input.model ? claudeTaskQueue(queue) : queue);',
  '',
].join('\n');
const outsideSandbox = "import fs from 'node:fs';\nimport { z } from 'zod';\nexport const both = [fs, z];\n";

let results: Problem[][];
beforeAll(() => {
  results = lint([
    ...refused.map(([file, code]) => ({ file, code })),
    { file: 'src/core/probe.ts', code: cleanCore },
    { file: 'workflows/probe.ts', code: cleanWorkflow },
    { file: 'src/schemas/probe.ts', code: outsideSandbox },
  ]);
});

describe('src/core/ and workflows/ are sandbox-safe', () => {
  it.each(refused.map((c, i) => [...c, i] as const))('%s: %j is reported', (_file, _code, message, i) => {
    expect(results[i]).toEqual([{ rule: 'no-restricted-imports', message }]);
  });

  it('passes a core module importing core values and schema types only', () => {
    expect(results[refused.length]).toEqual([]);
  });

  it('passes a workflow module importing core values and schema types only', () => {
    expect(results[refused.length + 1]).toEqual([]);
  });

  it('leaves zod and Node built-ins to modules outside the sandbox', () => {
    expect(results[refused.length + 2]).toEqual([]);
  });
});
