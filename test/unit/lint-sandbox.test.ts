/**
 * Lint guards the workflow sandbox and the module graph: the project's ESLint config refuses zod and
 * Node built-ins in src/core/ and workflows/, and value imports of other modules, while type-only
 * imports of src/schemas/ pass; and it refuses import cycles anywhere, type-only imports included.
 * The sandbox probes are linted in memory, as files placed at those paths; the cycle probes as
 * files in a temporary directory, since the rule reads the modules an import leads to from disk.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');

// ESLint loads eslint.config.mjs with a dynamic import, which Jest's module sandbox refuses, so the
// Node API runs in a child process. The rules probed here need no type information; without it a
// file that is not on disk can be linted. With a `cwd`, the files are linted under the project's
// config as if that directory were the project.
const LINT_IN_MEMORY = `
  import { ESLint } from 'eslint';
  const { cwd, configFile, files } = JSON.parse(process.argv[1]);
  const eslint = new ESLint({
    ...(cwd && { cwd, overrideConfigFile: configFile }),
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

function runLint(input: { cwd?: string; files: Array<{ file: string; code: string }> }): Problem[][] {
  const out = execFileSync(
    process.execPath,
    ['--input-type=module', '-e', LINT_IN_MEMORY, JSON.stringify({ ...input, configFile: path.join(root, 'eslint.config.mjs') })],
    { cwd: root, encoding: 'utf8' },
  );
  return JSON.parse(out) as Problem[][];
}

/** Lints each code as if it were the file at that path (relative to the repository). */
function lint(files: Array<{ file: string; code: string }>): Problem[][] {
  return runLint({ files: files.map(({ file, code }) => ({ file: path.join(root, file), code })) });
}

/** Writes the files (name → code) to a new directory and lints each there, in the order given. */
function lintOnDisk(files: Record<string, string>): Problem[][] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lint-probe-'));
  try {
    for (const [name, code] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), code);
    return runLint({ cwd: dir, files: Object.entries(files).map(([name, code]) => ({ file: path.join(dir, name), code })) });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
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

describe('import cycles are refused, type-only imports included', () => {
  const CYCLE = { rule: 'mcp-turns/no-cycle', message: 'Dependency cycle detected' };
  // Four probes side by side in one directory: [file, code], linted in this order.
  const probes: Array<[string, string]> = [
    // a cycle of value imports
    ['value-a.ts', "import { b } from './value-b';\nexport const a = (): number => b() + 1;\n"],
    ['value-b.ts', "import { a } from './value-a';\nexport const b = (): number => (Math.random() < 0.5 ? 0 : a());\n"],
    // a cycle of type-only imports
    ['type-a.ts', "import type { B } from './type-b';\nexport interface A { b?: B }\n"],
    ['type-b.ts', "import type { A } from './type-a';\nexport interface B { a?: A }\n"],
    // three modules, one a type re-export
    ['long-a.ts', "import type { B } from './long-b';\nexport type A = B[];\n"],
    ['long-b.ts', "export type { C as B } from './long-c';\n"],
    ['long-c.ts', "import type { A } from './long-a';\nexport type C = A | string;\n"],
    // no way back
    ['clean-a.ts', "import { b, type B } from './clean-b';\nexport const a: B = b;\n"],
    ['clean-b.ts', 'export type B = number;\nexport const b: B = 1;\n'],
  ];
  let found: Record<string, Problem[]>;
  beforeAll(() => {
    const results = lintOnDisk(Object.fromEntries(probes));
    found = Object.fromEntries(probes.map(([file], i) => [file, results[i]!]));
  });

  it('reports both imports of a cycle between two modules', () => {
    expect(found['value-a.ts']).toEqual([CYCLE]);
    expect(found['value-b.ts']).toEqual([CYCLE]);
  });

  it('reports a cycle of type-only imports', () => {
    expect(found['type-a.ts']).toEqual([CYCLE]);
    expect(found['type-b.ts']).toEqual([CYCLE]);
  });

  it('names the way back in a longer cycle, and counts type re-exports as edges', () => {
    expect(found['long-a.ts']).toEqual([{ rule: 'mcp-turns/no-cycle', message: 'Dependency cycle via "./long-c:1"' }]);
    expect(found['long-b.ts']).toEqual([{ rule: 'mcp-turns/no-cycle', message: 'Dependency cycle via "./long-a:1"' }]);
  });

  it('passes imports that lead nowhere back', () => {
    expect(found['clean-a.ts']).toEqual([]);
    expect(found['clean-b.ts']).toEqual([]);
  });
});
