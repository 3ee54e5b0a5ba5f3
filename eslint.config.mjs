// Lint is where the house rules live: the workflow sandbox and promise hygiene are enforced here,
// not kept in prose.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Code that runs inside the Temporal workflow sandbox (or is imported by it: workflows/ and src/core/)
// must be deterministic and light: no Node built-ins, no zod (the sandbox evaluates every module of
// the bundle again for each run; schemas live in src/schemas/, imported here as types only), no
// worker/client/activity SDK packages, no clocks or randomness.
const sandboxRules = {
  'no-restricted-imports': [
    'error',
    {
      paths: [
        ...nodeBuiltins.map((name) => ({ name, message: 'Workflow code runs in a deterministic sandbox.' })),
        { name: 'zod', message: 'No zod in the workflow sandbox: schemas live in src/schemas (import their types only).' },
        { name: '@temporalio/activity', message: 'Workflows import activities as types only.' },
        { name: '@temporalio/client', message: 'Not available in the workflow sandbox.' },
        { name: '@temporalio/worker', message: 'Not available in the workflow sandbox.' },
        { name: '@anthropic-ai/sdk', message: 'I/O belongs in activities.', allowTypeImports: true },
        { name: '@modelcontextprotocol/sdk', message: 'I/O belongs in activities.', allowTypeImports: true },
        { name: '@modelcontextprotocol/client', message: 'I/O belongs in activities.', allowTypeImports: true },
        { name: '@modelcontextprotocol/core', message: 'I/O belongs in activities.', allowTypeImports: true },
      ],
      patterns: [
        { group: ['zod/*'], message: 'No zod in the workflow sandbox: schemas live in src/schemas (import their types only).' },
        // Any relative import leaving workflows/ or src/core/, except into src/core/ (activities: below).
        {
          regex: '^(\\.\\./)+(?!\\.\\./|src/core/|activities(/|$))',
          message: 'Sandbox code imports values only from src/core (sandbox-safe); other modules as types only.',
          allowTypeImports: true,
        },
        { group: ['../activities', '../activities/**'], message: 'Import activities as types only.', allowTypeImports: true },
        {
          group: ['@anthropic-ai/sdk/**', '@modelcontextprotocol/sdk/**', '@modelcontextprotocol/client/**', '@modelcontextprotocol/core/**'],
          message: 'I/O belongs in activities.',
          allowTypeImports: true,
        },
      ],
    },
  ],
  'no-restricted-globals': [
    'error',
    { name: 'console', message: 'Use log from @temporalio/workflow.' },
    { name: 'process', message: 'Not deterministic.' },
    { name: 'setTimeout', message: 'Use sleep from @temporalio/workflow.' },
  ],
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: 'Use workflow time only via the SDK.' },
    { object: 'Math', property: 'random', message: 'Not deterministic.' },
  ],
};

// Settings are read once, where the program starts, and passed down as values: nothing in src/ writes
// process.env (no assignment to it or to one of its variables, no delete, no Object.assign onto it).
// A CLI flag reaches what it sets as a parameter (src/cli/cli-settings.ts), never as a variable.
const PROCESS_ENV = "[object.name='process'][property.name='env']";
const noProcessEnvWrites = {
  'no-restricted-syntax': [
    'error',
    ...[
      `AssignmentExpression > MemberExpression.left${PROCESS_ENV}`,
      `AssignmentExpression > MemberExpression.left > MemberExpression.object${PROCESS_ENV}`,
      `UpdateExpression > MemberExpression.argument > MemberExpression.object${PROCESS_ENV}`,
      `UnaryExpression[operator='delete'] > MemberExpression.argument > MemberExpression.object${PROCESS_ENV}`,
      `CallExpression[callee.object.name='Object'][callee.property.name='assign'] > MemberExpression.arguments:first-child${PROCESS_ENV}`,
    ].map((selector) => ({ selector, message: 'Do not write process.env: resolve settings once at the entry point and pass them down (src/cli/cli-settings.ts).' })),
  ],
};

// No import cycles, type-only imports included: a cycle of types still ties two modules into one.
// import-x's no-cycle passes over `import type` / `export type` (in the file linted and in every module
// it follows), so the rule below runs it on a view of the code where every import is a value import:
// the file's own import declarations are handed to it as value imports, and the modules it follows
// are parsed by a parser that erases the `type` marks. Dynamic `import()` counts as an edge too.
const asValueEdge = (node) => ({
  ...node,
  ...('importKind' in node && { importKind: 'value' }),
  ...('exportKind' in node && { exportKind: 'value' }),
  ...(node.specifiers && { specifiers: node.specifiers.map((s) => asValueEdge(s)) }),
});
const MODULE_EDGES = ['ImportDeclaration', 'ExportNamedDeclaration', 'ExportAllDeclaration', 'TSImportEqualsDeclaration'];
const valueEdgesParser = {
  meta: { name: 'mcp-turns/type-imports-as-value-edges' },
  parseForESLint(code, options) {
    const parsed = tseslint.parser.parseForESLint(code, options);
    parsed.ast.body = parsed.ast.body.map((n) => (MODULE_EDGES.includes(n.type) ? asValueEdge(n) : n));
    return parsed;
  },
};
const importXNoCycle = importX.rules['no-cycle'];
const noCycle = {
  meta: importXNoCycle.meta,
  create(context) {
    const view = Object.create(context, {
      languageOptions: { value: { ...context.languageOptions, parser: valueEdgesParser } },
    });
    const listeners = importXNoCycle.create(view);
    for (const type of MODULE_EDGES) {
      const listener = listeners[type];
      if (listener) listeners[type] = (node) => listener(asValueEdge(node));
    }
    return listeners;
  },
};

// The parts of the code and what each may import: the table in docs/architecture.md, read here.
// A row: | part | `folder`, `folder` | part, part (types), part (`only/this/file.ts`) |
// "(types)" marks a part the sandbox imports as types only (the sandbox rules above refuse values).
function readParts(file) {
  const text = fs.readFileSync(file, 'utf8');
  const table = /<!-- parts: [^>]*-->\n([\s\S]*?)<!-- \/parts -->/.exec(text);
  if (!table) throw new Error(`${file}: no parts table`);
  const rows = table[1].split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| part '));
  return rows.map((row) => {
    const [name, folders, imports] = row.split('|').slice(1, 4).map((cell) => cell.trim());
    return {
      name,
      folders: [...folders.matchAll(/`([^`]+)`/g)].map((m) => m[1]),
      imports: imports
        ? imports.split(/,(?![^(]*\))/).map((item) => {
            const [, part, detail = ''] = /^\s*([\w-]+)\s*(?:\((.*)\))?\s*$/.exec(item) ?? [];
            if (!part) throw new Error(`${file}: cannot read "${item}" in the row of ${name}`);
            return { part, only: [...detail.matchAll(/`([^`]+)`/g)].map((m) => m[1]) };
          })
        : [],
    };
  });
}

// One zone per folder of each part: it may not import from the folders of parts its row does not
// name, nor from files of a part named with "(only these files)" other than those files.
function partZones(parts) {
  const byName = new Map(parts.map((p) => [p.name, p]));
  const NOTE = '(docs/architecture.md, "Parts").';
  return parts.flatMap((part) => {
    const named = new Map(part.imports.map((i) => [i.part, i.only]));
    const unnamed = parts.filter((other) => other !== part && !named.has(other.name)).flatMap((other) => other.folders);
    const allowed = part.imports.map((i) => (i.only.length ? `${i.part} (${i.only.join(', ')})` : i.part)).join(', ') || 'within itself';
    // A part named with its only files: the part's folders, those files excepted.
    const limited = [...named].filter(([, only]) => only.length).flatMap(([name, only]) =>
      byName.get(name).folders.map((folder) => ({
        from: folder,
        except: only.filter((file) => file.startsWith(`${folder}/`)).map((file) => `./${path.relative(folder, file)}`),
        message: `${part.name} may import ${name} only through ${only.join(', ')} ${NOTE}`,
      })),
    );
    return part.folders.flatMap((target) => [
      { target, from: unnamed, message: `${part.name} may import only ${allowed} ${NOTE}` },
      ...limited.map((zone) => ({ target, ...zone })),
    ]);
  });
}

export const PARTS = readParts(new URL('./docs/architecture.md', import.meta.url));

export default tseslint.config(
  { ignores: ['dist/**', '**/node_modules/**', '.mcp-turns/**', 'coverage/**', 'bin/**', 'test-artifacts/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['**/*.ts'],
    plugins: { 'mcp-turns': { rules: { 'no-cycle': noCycle } } },
    settings: {
      'import-x/extensions': ['.ts'],
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
    },
    rules: { 'mcp-turns/no-cycle': 'error' },
  },
  { files: ['workflows/**/*.ts', 'src/core/**/*.ts'], rules: sandboxRules },
  { files: ['src/**/*.ts'], rules: noProcessEnvWrites },
  {
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    plugins: { 'import-x': importX },
    rules: { 'import-x/no-restricted-paths': ['error', { zones: partZones(PARTS) }] },
  },
);
