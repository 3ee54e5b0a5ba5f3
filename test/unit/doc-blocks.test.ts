/**
 * Every code block of the README and docs/ is checked: TypeScript is type-checked against the
 * package's own sources (a fragment's free names declared by the `<!-- check: … -->` comment above
 * it), configs are loaded by the settings loader, stub scenarios by the stub's parser, shell lines
 * name commands, flags and npm scripts that exist (and the search attributes the server needs), and
 * an output sample is marked `text`. A page that shows something the code no longer does fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { Command } from 'commander';
import { loadSettings } from '../../src/config/settings';
import { parseScenario } from '../../src/stub/scenario';
import { searchAttributeCreateArgs } from '../../src/core/search-attributes';
import { buildProgram } from '../../src/cli/main';
import { docBlocks, ROOT, type DocBlock } from '../support/doc-blocks';

jest.setTimeout(120_000);

const blocks = docBlocks();
const where = (b: DocBlock): string => `${b.file}:${b.line}`;
const of = (...langs: string[]): DocBlock[] => blocks.filter((b) => langs.includes(b.lang));

/** What a block's language says is done with it. */
const CHECKED = ['ts', 'tsx', 'yaml', 'json', 'sh', 'text', 'mermaid'];

it('labels every block with a language this test checks', () => {
  expect(blocks.length).toBeGreaterThan(20);
  expect(blocks.filter((b) => !CHECKED.includes(b.lang)).map((b) => `${where(b)} \`\`\`${b.lang}`)).toEqual([]);
});

describe('TypeScript', () => {
  it('type-checks every block against the package', () => {
    const dir = path.join(ROOT, 'test-artifacts', 'doc-blocks');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    // useChat comes from @ai-sdk/react, a React package this project does not install: its options are the ai package's.
    const shim = path.join(dir, 'ai-sdk-react.d.ts');
    fs.writeFileSync(
      shim,
      [
        "declare module '@ai-sdk/react' {",
        "  import type { AbstractChat, ChatAddToolApproveResponseFunction, ChatInit, UIMessage } from 'ai';",
        '  export function useChat(options: ChatInit<UIMessage> & { resume?: boolean }): {',
        "    messages: UIMessage[]; sendMessage: AbstractChat<UIMessage>['sendMessage']; addToolApprovalResponse: ChatAddToolApproveResponseFunction;",
        '  };',
        '}',
      ].join('\n'),
    );
    const files = new Map<string, DocBlock>();
    for (const [i, b] of of('ts', 'tsx').entries()) {
      const file = path.join(dir, `${path.basename(b.file, '.md')}-${i}.mts`);
      // Each block is a module of its own; its prelude's lines come first, on the block's own first line.
      fs.writeFileSync(file, `${b.prelude ? `${b.prelude} ` : ''}${b.body}\nexport {};\n`);
      files.set(file, b);
    }
    const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (f) => ts.sys.readFile(f));
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const program = ts.createProgram([...files.keys(), shim], {
      ...options,
      noEmit: true,
      baseUrl: ROOT,
      paths: {
        'mcp-turns': ['src/index.ts'],
        'mcp-turns/worker': ['src/entry/worker.ts'],
        'mcp-turns/workflows': ['src/entry/workflows.ts'],
      },
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && files.has(path.resolve(d.file.fileName)))
      .map((d) => {
        const block = files.get(path.resolve(d.file!.fileName))!;
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${block.file}:${block.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      });
    expect(files.size).toBeGreaterThanOrEqual(7);
    expect(problems).toEqual([]);
  });
});

/** Values for the `${VAR}`s a config block names. */
function variablesOf(text: string): NodeJS.ProcessEnv {
  return Object.fromEntries([...text.matchAll(/\$\{(\w+)\}/g)].map((m) => [m[1]!, `value-of-${m[1]}-long-enough`]));
}

describe('configs and scenarios', () => {
  it('loads every config block: its MCP servers, claude, worker and serve sections', () => {
    const configs = [...of('yaml'), ...of('json').filter((b) => /"mcpServers"|"mcp_servers"/.test(b.body))];
    expect(configs.length).toBeGreaterThanOrEqual(4);
    for (const b of configs) {
      const settings = loadSettings({
        env: variablesOf(b.body),
        stateDir: path.join(ROOT, 'test-artifacts', 'doc-blocks'),
        configDocument: { text: b.body, format: b.lang === 'yaml' ? 'yaml' : 'json', source: where(b) },
      });
      expect(() => settings.worker.get()).not.toThrow();
      expect(() => settings.serve.get()).not.toThrow();
    }
  });

  it('parses every stub scenario block', () => {
    const scenarios = of('json').filter((b) => b.file === 'docs/stub-scenarios.md' && !/"mcpServers"/.test(b.body));
    expect(scenarios.length).toBeGreaterThanOrEqual(3);
    for (const b of scenarios) expect(() => parseScenario(JSON.parse(b.body), where(b))).not.toThrow();
  });
});

/** A line's pipeline split into its commands; a `|` or `&&` inside quotes (a jq filter) is not a split. */
function pipelineOf(line: string): string[] {
  const quoted: string[] = [];
  const masked = line.replace(/'[^']*'|"[^"]*"/g, (q) => `\uE000${quoted.push(q) - 1}\uE000`);
  return masked.split(/\s*(?:\||&&)\s*/).map((command) => command.replace(/\uE000(\d+)\uE000/g, (_, i: string) => quoted[Number(i)]!));
}

/** Each command of a shell block: continued lines joined, comments and `VAR=value` prefixes left out, pipelines split. */
function commandsOf(body: string): string[][] {
  return body
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean)
    .flatMap(pipelineOf)
    .map((command) => (command.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).filter((w, i, all) => !(/^\w+=/.test(w) && all.slice(0, i).every((p) => /^\w+=/.test(p)))));
}

/** The `mcp-turns` command a word list names (`keys new` included), or a line saying why not. */
function cliCommand(words: string[]): { command: Command; args: string[] } | string {
  let command = buildProgram();
  let rest = words;
  for (;;) {
    const next = command.commands.find((c) => c.name() === rest[0]);
    if (!next) return { command, args: rest };
    command = next;
    rest = rest.slice(1);
  }
}

describe('shell', () => {
  const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const EXTERNAL = new Set(['open', 'curl', 'find', 'aws', 'export', 'echo', 'temporal', 'jq', 'xargs', 'sort', 'grep', 'tr']);

  it('names mcp-turns commands and flags that exist, and npm scripts that exist', () => {
    const problems: string[] = [];
    for (const b of of('sh')) {
      for (const words of commandsOf(b.body)) {
        const [head, ...rest] = words;
        const cli = head === 'npx' && rest[0] === 'mcp-turns' ? rest.slice(1) : head === 'mcp-turns' ? rest : undefined;
        if (cli) {
          const found = cliCommand(cli);
          if (typeof found === 'string') problems.push(`${where(b)}: ${found}`);
          else if (found.command.name() === 'mcp-turns') problems.push(`${where(b)}: mcp-turns ${cli[0]}: no such command`);
          else {
            const known = new Set(['--state-dir', '--help', ...found.command.options.flatMap((o) => [o.long, o.short].filter((f): f is string => !!f))]);
            for (const flag of found.args.filter((w) => w.startsWith('-') && w !== '-')) if (!known.has(flag.split('=')[0]!)) problems.push(`${where(b)}: mcp-turns ${found.command.name()} has no ${flag}`);
          }
        } else if (head === 'npm') {
          const script = rest[0] === 'run' ? rest[1] : ['test', 'install', 'ci'].includes(rest[0] ?? '') ? undefined : rest[0];
          if (rest[0] === 'run' && !packageJson.scripts[script!]) problems.push(`${where(b)}: no npm script ${script}`);
          if (!['run', 'test', 'install', 'ci'].includes(rest[0] ?? '')) problems.push(`${where(b)}: npm ${rest[0]}`);
        } else if (!EXTERNAL.has(head ?? '')) problems.push(`${where(b)}: ${head}: not a command this test knows`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('creates exactly the search attributes the server needs', () => {
    const create = of('sh').flatMap((b) => commandsOf(b.body)).filter((w) => w.slice(0, 4).join(' ') === 'temporal operator search-attribute create');
    expect(create).toHaveLength(1);
    const words = create[0]!;
    expect(words.slice(4)).toEqual(searchAttributeCreateArgs());
  });
});
