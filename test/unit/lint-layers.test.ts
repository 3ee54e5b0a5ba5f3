/**
 * The parts of the code and what each may import (docs/architecture.md, "Parts", read by
 * eslint.config.mjs): lint refuses an import across the line, the table has no cycle, and every
 * folder of the code belongs to a part. The probes are linted in memory, as files placed in src/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');

interface Part {
  name: string;
  folders: string[];
  imports: Array<{ part: string; only: string[] }>;
}

// ESLint loads eslint.config.mjs with a dynamic import, which Jest's module sandbox refuses, so the
// Node API runs in a child process; without type information a file that is not on disk can be linted.
const LINT_IN_MEMORY = `
  import { ESLint } from 'eslint';
  const probes = JSON.parse(process.argv[1]);
  const eslint = new ESLint({
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false } },
      rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-unused-vars': 'off' },
    },
  });
  const out = [];
  for (const { file, code } of probes) {
    const [result] = await eslint.lintText(code, { filePath: file });
    out.push(result.messages.filter((m) => m.ruleId === 'import-x/no-restricted-paths').map((m) => m.message));
  }
  process.stdout.write(JSON.stringify(out));
`;

function layerErrors(probes: Array<{ file: string; code: string }>): string[][] {
  const input = probes.map((p) => ({ ...p, file: path.join(root, p.file) }));
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', LINT_IN_MEMORY, JSON.stringify(input)], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out) as string[][];
}

function parts(): Part[] {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', "const m = await import('./eslint.config.mjs'); process.stdout.write(JSON.stringify(m.PARTS));"], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out) as Part[];
}

jest.setTimeout(90_000);

it('refuses a front door importing a part below the application layer, and allows what its row names', () => {
  const errors = layerErrors([
    { file: 'src/cli/layer-probe.ts', code: "import { McpPool } from '../mcp/pool';\nexport const p = McpPool;" },
    { file: 'src/serve/layer-probe.ts', code: "import { createClaudeClient } from '../claude/client';\nexport const c = createClaudeClient;" },
    { file: 'src/cli/layer-probe.ts', code: "import { chatTurn } from '../../workflows/chat-turn';\nexport const w = chatTurn;" },
    { file: 'src/cli/layer-probe.ts', code: "import { storageConfigFromEnv } from '../storage/storage-config';\nexport const d = storageConfigFromEnv;" },
    { file: 'src/cli/layer-probe.ts', code: "import { createTurnWorkers } from '../worker/queue-registrations';\nexport const w = createTurnWorkers;" },
    // What the rows allow: the client, the settings, the worker assembly, an operator command's one file.
    { file: 'src/cli/layer-probe.ts', code: "import { startWorkers } from '../worker/turn-worker';\nexport const w = startWorkers;" },
    { file: 'src/cli/layer-probe.ts', code: "import { addNewKey } from '../encryption/keyring';\nexport const k = addNewKey;" },
    { file: 'src/serve/layer-probe.ts', code: "import { startChatTurn } from '../client/chat-turn-client';\nexport const s = startChatTurn;" },
  ]);
  expect(errors.slice(0, 5).map((e) => e.length)).toEqual([1, 1, 1, 1, 1]);
  expect(errors[0]![0]).toBe('Unexpected path "../mcp/pool" imported in restricted zone. cli may import mcp only through src/mcp/oauth-authorization.ts (docs/architecture.md, "Parts").');
  expect(errors[1]![0]).toMatch(/^Unexpected path "\.\.\/claude\/client" imported in restricted zone\. serve may import only core, client, config /);
  expect(errors[4]![0]).toMatch(/cli may import worker only through src\/worker\/turn-worker\.ts/);
  expect(errors.slice(5)).toEqual([[], [], []]);
});

it('keeps the sandbox to the core: a workflow importing the settings or the MCP pool is refused', () => {
  const errors = layerErrors([
    { file: 'workflows/layer-probe.ts', code: "import type { Settings } from '../src/config/settings';\nexport type S = Settings;" },
    { file: 'src/core/layer-probe.ts', code: "import type { McpPool } from '../mcp/pool';\nexport type P = McpPool;" },
  ]);
  expect(errors.map((e) => e.length)).toEqual([1, 1]);
});

it('has parts without a cycle among them, each import naming a part', () => {
  const all = parts();
  const byName = new Map(all.map((p) => [p.name, p]));
  for (const p of all) for (const i of p.imports) expect(byName.has(i.part) ? i.part : `${p.name} names unknown part ${i.part}`).toBe(i.part);
  // Depth-first search for a path back to where it started.
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (name: string, trail: string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(name)), name].join(' -> '));
      return;
    }
    state.set(name, 'open');
    for (const i of byName.get(name)!.imports) visit(i.part, [...trail, name]);
    state.set(name, 'done');
  };
  for (const p of all) visit(p.name, []);
  expect(cycles).toEqual([]);
});

it('puts every folder and top-level file of the code in a part', () => {
  const claimed = new Set(parts().flatMap((p) => p.folders));
  const code = [
    ...fs.readdirSync(path.join(root, 'src'), { withFileTypes: true }).map((d) => `src/${d.name}`),
    'workflows',
    'activities',
  ];
  expect(code.filter((entry) => !claimed.has(entry))).toEqual([]);
});
