/**
 * mcp-turns as a team installs it: `npm pack` of the package as `npm test` built it (`prepare`, the
 * same build, runs in CI's `npm ci` of the clean clone), the tarball
 * installed from the registry's dependencies into an empty project, then in that project:
 * `npx mcp-turns demo`; a type check, with the installed declarations checked too (`skipLibCheck` off),
 * of the README's client example, small ESM and CommonJS programs, a workflow module and a tool
 * module written with `mcp-turns/tools`; a team's own worker, built with `McpTurnsPlugin`, whose
 * workflow runs `chatTurn` as a child and whose config loads that tool module; an ESM client and a
 * CommonJS client that load nothing of the worker; `mcp-turns/tools` loading nothing heavy. It packs a copy, so the `dist/` other
 * tests run from is never touched.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { freePort } from '../support/ports';
import { uniqueQueue } from '../support/temporal';
import { runProcess, type CliRun } from '../support/cli';
import { testTemporalCli } from '../support/temporal-cli';

// Its steps (an npm install from the registry among them) take 70–110 s alone and ~180 s with another
// test file running beside it on a loaded two-core machine.
jest.setTimeout(300_000);

const repo = path.resolve(__dirname, '..', '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-package-'));
const app = path.join(work, 'app');

/** npm settings a CI may pass in the environment; every other `npm_*` variable describes the test run's own npm (its project, its script). */
const NPM_SETTINGS = new Set(['npm_config_registry', 'npm_config_cache', 'npm_config_userconfig']);

/** This process's environment without the test run's npm variables and mcp-turns settings. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.toLowerCase().startsWith('npm_') || NPM_SETTINGS.has(k.toLowerCase()),
    ),
  );
  for (const k of [
    'MCP_TURNS_HOME',
    'MCP_TURNS_CONFIG',
    'MCP_TURNS_TASK_QUEUE',
    'MCP_TURNS_UI_URL',
    'TEMPORAL_ADDRESS',
    'INIT_CWD',
  ])
    delete env[k];
  return { ...env, ...extra };
}

/** A command run with the clean environment unless `env` is given. */
function run(command: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliRun> {
  return runProcess(command, args, { ...opts, env: opts.env ?? cleanEnv() });
}

function expectOk(r: CliRun, what: string): void {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

/** What `npm pack` packs (package.json's `files`, README, LICENSE), as built: run `npm run build` first when running this file alone. */
function copyPackage(to: string): void {
  for (const entry of ['package.json', 'README.md', 'LICENSE', 'bin', 'docs', 'dist']) {
    fs.cpSync(path.join(repo, entry), path.join(to, entry), { recursive: true });
  }
}

const TEAM_SCENARIOS = {
  team: {
    steps: [
      { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
      { content: [{ type: 'text', text: 'done' }] },
    ],
    formatter: { conversation: [{ type: 'text', content: 'team answer: {{toolResults}}' }] },
  },
  // The team's own tool module (tools.mjs, named `notes` in mcp.json).
  tools: {
    steps: [{ content: [{ type: 'tool_use', name: 'notes__add', input: { a: 2, b: 3 } }] }, { content: [{ type: 'text', text: 'done' }] }],
    formatter: { conversation: [{ type: 'text', content: 'tool answer: {{toolResults}}' }] },
  },
};

/** Module paths of the worker package or the bundler among those loaded. */
const WORKER_MODULES = String.raw`/[\\/]node_modules[\\/](@temporalio[\\/]worker|webpack)[\\/]/`;

const PROGRAMS: Record<string, string> = {
  'team-workflows.ts': `
import { executeChild, workflowInfo } from '@temporalio/workflow';
import { chatTurn, type ChatTurnResult } from 'mcp-turns/workflows';

/** The team's own workflow: asks mcp-turns for an answer as a child workflow. */
export async function teamWorkflow(question: string): Promise<string> {
  const result: ChatTurnResult = await executeChild(chatTurn, {
    args: [{ question, model: 'team', servers: ['everything'] }],
    workflowId: workflowInfo().workflowId + '-turn',
  });
  return 'team got: ' + result.response.conversation + ' (' + result.stopReason + ')';
}
`,
  'team-worker.cjs': `// @ts-check
const path = require('node:path');
const { NativeConnection, Worker } = require('@temporalio/worker');
const { McpTurnsPlugin } = require('mcp-turns/worker');
const { startStubModel } = require('mcp-turns/stub');

async function main() {
  const stub = await startStubModel({ scenarios: JSON.parse(process.env.TEAM_SCENARIOS ?? '{}') });
  process.env.ANTHROPIC_BASE_URL = stub.url;
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env.TEAM_QUEUE ?? 'team',
    workflowsPath: require.resolve('./team-workflows.ts'),
    plugins: [new McpTurnsPlugin({ config: path.join(__dirname, 'mcp.json') })],
  });
  console.log('team worker ready');
  await worker.run();
  await connection.close();
  await stub.close();
  console.log('team worker stopped');
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
`,
  // A tool module written with mcp-turns/tools and zod: the worker loads it from mcp.json's toolModules.
  'tools.mjs': `// @ts-check
import { z } from 'zod';
import { defineTool } from 'mcp-turns/tools';

export const tools = [
  defineTool({
    name: 'add',
    description: 'Adds two numbers',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    /** The input's type comes from the schema: a and b are numbers. */
    execute: async ({ a, b }, ctx) => ({ sum: a + b, turn: ctx.turnId.startsWith('tools-') }),
  }),
];
`,
  // mcp-turns/tools is light: what a tool module imports loads no worker, Temporal, SDK or schema library.
  'tools-light.cjs': `// @ts-check
const { defineTool } = require('mcp-turns/tools');
const heavy = Object.keys(require.cache).filter((f) => /[\\/]node_modules[\\/](@temporalio|@anthropic-ai|@modelcontextprotocol|@ai-sdk|zod|ajv)[\\/]/.test(f));
console.log(JSON.stringify({ defineTool: typeof defineTool, heavy }));
`,
  'client.mjs': `// @ts-check
import { createRequire } from 'node:module';
import { connectClient, executeChatTurn, parseChatTurnInput, resolveTurn } from 'mcp-turns';

const require = createRequire(import.meta.url);
const workerModules = Object.keys(require.cache).filter((f) => ${WORKER_MODULES}.test(f));
const taskQueue = process.env.TEAM_QUEUE ?? 'team';
const question = 'direct from ESM';
const input = resolveTurn(parseChatTurnInput({ question, model: 'team', servers: ['everything'] }), {});
const client = await connectClient({ address: process.env.TEMPORAL_ADDRESS });
try {
  const direct = await executeChatTurn(client, { question, model: 'team', servers: ['everything'] }, { taskQueue });
  /** @type {string} */
  const team = await client.workflow.execute('teamWorkflow', { taskQueue, workflowId: 'team-' + Date.now(), args: ['child from ESM'] });
  const tool = await executeChatTurn(client, { question: 'two and three', model: 'tools', servers: ['notes'] }, { taskQueue, workflowId: 'tools-' + Date.now() });
  console.log(JSON.stringify({ workerModules, maxSteps: input.maxSteps, direct: direct.response.conversation, team, tool: tool.response.conversation }));
} finally {
  await client.connection.close();
}
`,
  'client.cjs': `// @ts-check
const { connectClient, executeChatTurn, getTurnView, workflowUrl, DEFAULT_TASK_QUEUE } = require('mcp-turns');

const workerModules = Object.keys(require.cache).filter((f) => ${WORKER_MODULES}.test(f));
/** @type {string | undefined} */
let internal;
const internalModule = 'mcp-turns/dist/src/worker/turn-worker.js'; // not in the exports map
try {
  require(internalModule);
} catch (err) {
  internal = /** @type {NodeJS.ErrnoException} */ (err).code;
}

async function main() {
  const taskQueue = process.env.TEAM_QUEUE ?? DEFAULT_TASK_QUEUE;
  const workflowId = 'cjs-' + Date.now();
  const client = await connectClient({ address: process.env.TEMPORAL_ADDRESS });
  try {
    const result = await executeChatTurn(client, { question: 'from CommonJS', model: 'team', servers: ['everything'] }, { taskQueue, workflowId });
    const turn = await getTurnView(client, workflowId);
    const link = workflowUrl('127.0.0.1:7233', 'default', workflowId);
    console.log(JSON.stringify({ workerModules, internal, answer: result.response.conversation, status: turn.status, link }));
  } finally {
    await client.connection.close();
  }
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
`,
  // Types are real, not any: a wrong field type and a worker name on the client entry are errors.
  'wrong.mjs': `// @ts-check
import { startChatTurn, McpTurnsPlugin } from 'mcp-turns';
/** @type {import('mcp-turns').ChatTurnHandle | undefined} */
export const handle = await startChatTurn(/** @type {any} */ (null), { question: 42 });
export const plugin = McpTurnsPlugin;
`,
};

/** The TypeScript block between the README's client-example markers. */
function readmeClientExample(): string {
  const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8');
  const block = /<!-- client-example -->\s*```ts\n([\s\S]*?)```\s*<!-- \/client-example -->/.exec(readme);
  if (!block) throw new Error('README.md has no client example between <!-- client-example --> markers');
  return block[1]!;
}

/**
 * A user's tsconfig: the installed declarations are checked too (`skipLibCheck` off, its default), and
 * every type package comes from the project's own node_modules, so the types mcp-turns publishes must
 * bring what they need (`@types/node`, `@types/ms` for `@temporalio/common`) through its dependencies.
 */
function tsconfig(files: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      strict: true,
      allowJs: true,
      checkJs: true,
      noEmit: true,
      skipLibCheck: false,
    },
    files,
  });
}

it('packs, installs into an empty project, runs the demo, type-checks and runs ESM and CommonJS programs, and a team worker with the plugin runs chatTurn as a child', async () => {
  const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  const temporalCli = testTemporalCli().path;
  const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
  const timings: string[] = [];

  // 1. npm pack of a copy of the built package (prepare, the same build, is not run again).
  const source = path.join(work, 'source');
  fs.mkdirSync(source);
  copyPackage(source);
  const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work, '--loglevel=error'], {
    cwd: source,
    timeoutMs: 150_000,
  });
  expectOk(packed, 'npm pack');
  timings.push(`pack ${(packed.ms / 1000).toFixed(1)} s`);
  const tarball = path.join(
    work,
    fs.readdirSync(work).find((f) => f.endsWith('.tgz'))!,
  );
  const listed = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8' }).stdout.trim().split('\n');
  expect(listed).toContain('package/dist/workflow-bundle.js');
  expect(listed).toContain('package/dist/src/entry/worker.d.ts');
  expect(listed).toContain('package/LICENSE');
  expect(listed).toContain('package/docs/stub-scenarios.md');
  expect(
    listed.filter((f) =>
      /\.map$|\.test\.|^package\/(test|bench|src|workflows|activities)\/|\/dist\/(test|bench)\//.test(f),
    ),
  ).toEqual([]);

  // 2. An empty project installs the tarball and the SDK packages its own workflow and worker use.
  fs.mkdirSync(app);
  fs.writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'team-app', version: '1.0.0', private: true }),
  );
  const installed = await run(
    'npm',
    [
      'install',
      tarball,
      '@temporalio/worker@1.24.0',
      '@temporalio/workflow@1.24.0',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
    ],
    { cwd: app, timeoutMs: 150_000 },
  );
  expectOk(installed, 'npm install');
  timings.push(`install ${(installed.ms / 1000).toFixed(1)} s`);

  // 3. npx mcp-turns demo: its own dev server, state in the per-user directory, not in node_modules.
  const xdg = path.join(work, 'xdg-state');
  const demoPort = await freePort();
  const demo = await run('npx', ['--no', 'mcp-turns', 'demo', '--port', String(demoPort)], {
    cwd: app,
    env: cleanEnv({ XDG_STATE_HOME: xdg, TEMPORAL_CLI_PATH: temporalCli, ANTHROPIC_API_KEY: '' }),
    timeoutMs: 90_000,
  });
  expectOk(demo, 'npx mcp-turns demo');
  timings.push(`demo ${(demo.ms / 1000).toFixed(1)} s`);
  expect(demo.stdout).toContain('Echo: hello from mcp-turns');
  expect(demo.stdout).toMatch(
    new RegExp(`Temporal UI: http://127\\.0\\.0\\.1:${demoPort + 1000}/namespaces/default/workflows/demo-`),
  );
  expect(fs.existsSync(path.join(xdg, 'mcp-turns', 'temporal.db'))).toBe(true);
  expect(fs.existsSync(path.join(app, 'node_modules', 'mcp-turns', '.mcp-turns'))).toBe(false);

  // 4. The programs type-check against the installed types; wrong uses do not.
  for (const [name, text] of Object.entries(PROGRAMS)) fs.writeFileSync(path.join(app, name), text);
  // The README's client example, as a user copies it into their project.
  fs.writeFileSync(path.join(app, 'readme-client.ts'), readmeClientExample());
  const everything = path.join(
    app,
    'node_modules',
    '@modelcontextprotocol',
    'server-everything',
    'dist',
    'index.js',
  );
  fs.writeFileSync(
    path.join(app, 'mcp.json'),
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } },
      toolModules: { notes: './tools.mjs' },
    }),
  );
  fs.writeFileSync(
    path.join(app, 'tsconfig.json'),
    tsconfig(['team-workflows.ts', 'team-worker.cjs', 'client.mjs', 'client.cjs', 'readme-client.ts', 'tools.mjs', 'tools-light.cjs']),
  );
  fs.writeFileSync(path.join(app, 'tsconfig.wrong.json'), tsconfig(['wrong.mjs']));
  const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app });
  expectOk(checked, 'tsc');
  timings.push(`type check ${(checked.ms / 1000).toFixed(1)} s`);
  const wrong = await run(process.execPath, [tsc, '-p', 'tsconfig.wrong.json'], { cwd: app });
  expect(wrong.code).not.toBe(0);
  expect(wrong.stdout).toMatch(
    /wrong\.mjs.*error TS2305: Module '"mcp-turns"' has no exported member 'McpTurnsPlugin'/,
  );
  expect(wrong.stdout).toMatch(/wrong\.mjs.*error TS2322: Type 'number' is not assignable to type 'string'/);

  // 5. The team's worker (plugin) and the two clients against the test server.
  const taskQueue = uniqueQueue('team');
  const env = cleanEnv({
    XDG_STATE_HOME: xdg,
    TEMPORAL_ADDRESS: address,
    TEAM_QUEUE: taskQueue,
    TEAM_SCENARIOS: JSON.stringify(TEAM_SCENARIOS),
  });
  const worker = spawn(process.execPath, ['team-worker.cjs'], { cwd: app, env });
  let workerOut = '';
  worker.stdout.on('data', (d: Buffer) => (workerOut += d.toString()));
  worker.stderr.on('data', (d: Buffer) => (workerOut += d.toString()));
  const workerExited = new Promise<number | null>((r) => worker.once('exit', r));
  try {
    const t0 = Date.now();
    const readyBy = Date.now() + 60_000;
    while (!workerOut.includes('team worker ready')) {
      if (worker.exitCode !== null || Date.now() > readyBy)
        throw new Error(`team worker not ready:\n${workerOut}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    timings.push(`team worker ready ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const esm = await run(process.execPath, ['client.mjs'], { cwd: app, env });
    expectOk(esm, 'client.mjs');
    const esmOut = JSON.parse(esm.stdout) as {
      workerModules: string[];
      maxSteps: number;
      direct: string;
      team: string;
      tool: string;
    };
    expect(esmOut).toEqual({
      workerModules: [],
      maxSteps: 5,
      direct: 'team answer: Echo: direct from ESM',
      team: 'team got: team answer: Echo: child from ESM (completed)',
      tool: 'tool answer: {"sum":5,"turn":true}',
    });
    const light = await run(process.execPath, ['tools-light.cjs'], { cwd: app, env });
    expectOk(light, 'tools-light.cjs');
    expect(JSON.parse(light.stdout)).toEqual({ defineTool: 'function', heavy: [] });

    const cjs = await run(process.execPath, ['client.cjs'], { cwd: app, env });
    expectOk(cjs, 'client.cjs');
    const cjsOut = JSON.parse(cjs.stdout) as Record<string, unknown>;
    expect(cjsOut).toMatchObject({
      workerModules: [],
      internal: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      answer: 'team answer: Echo: from CommonJS',
      status: 'completed',
      link: expect.stringMatching(/^http:\/\/127\.0\.0\.1:8233\/namespaces\/default\/workflows\/cjs-/),
    });
    timings.push(`clients ${((esm.ms + cjs.ms) / 1000).toFixed(1)} s`);
  } finally {
    worker.kill('SIGTERM');
  }
  expect(await workerExited).toBe(0);
  expect(workerOut).toContain('team worker stopped');
  console.log(`package install test: ${timings.join('; ')}; tarball ${listed.length} files`);
});
