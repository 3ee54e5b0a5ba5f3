/**
 * Against a server whose namespace lacks mcp-turns' search attributes, `run` and `batch` print the
 * cause and the exact command that fixes it, and that command does fix it. UI links follow the
 * server in use: `demo --port P` reusing a server not started by mcp-turns links to port P + 1000
 * (the Temporal CLI's pairing), never to 8233. A demo that fails stops the dev server it started.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { portIsOpen, startDevServer, type DevServer } from '../../src/temporal/dev-server';
import { startStubModel, type StubModel } from '../../src/stub';
import { runCli } from '../support/cli';
import { freePort } from '../support/ports';
import { testTemporalCli } from '../support/temporal-cli';

jest.setTimeout(120_000);

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-errors-'));
const cli = testTemporalCli().path;
let server: DevServer;
let stub: StubModel;
let port: number;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  port = await freePort();
  server = await startDevServer({ port, searchAttributes: false, cliPath: cli });
  stub = await startStubModel({
    scenarios: {
      broken: {
        steps: [{ content: [{ type: 'text', text: 'x' }] }],
        faults: [{ step: 0, status: 400, times: -1, message: 'refused' }],
      },
      plain: {
        steps: [{ content: [{ type: 'text', text: 'plain answer' }] }],
        formatter: { conversation: [{ type: 'text', content: 'plain answer' }] },
      },
    },
  });
  env = {
    MCP_TURNS_HOME: path.join(home, 'state'),
    TEMPORAL_CLI_PATH: cli,
    ANTHROPIC_API_KEY: '',
    ANTHROPIC_BASE_URL: stub.url,
  };
});

afterAll(async () => {
  await server?.stop();
  await stub?.close();
});

it('run and batch print the missing search attribute and the command that registers it; run as printed it fixes the namespace; demo links to the server in use', async () => {
  const address = server.address;
  const fix =
    `temporal operator search-attribute create --address ${address} --namespace default ` +
    '--name McpTurnsBatch --type Keyword --name McpTurnsStatus --type Keyword --name McpTurnsStopReason --type Keyword ' +
    '--name McpTurnsModel --type Keyword --name McpTurnsToolCalls --type Int --name McpTurnsInputTokens --type Int ' +
    '--name McpTurnsOutputTokens --type Int --name McpTurnsCostUsd --type Double --name McpTurnsOwner --type Keyword';

  const run = await runCli(['run', 'anything', '--address', address, '--model', 'plain'], { env });
  expect(run.code).toBe(1);
  const runLines = run.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('mcp-turns:') || l.startsWith('  fix:'));
  // The turn starts with two of them (status and model); the server names whichever it checks
  // first, and its order is not fixed.
  expect(runLines).toHaveLength(2);
  expect(runLines[0]).toMatch(
    /^mcp-turns: cannot start the turn: Failed to start Workflow: Namespace default has no mapping defined for search attribute McpTurns(Status|Model)$/,
  );
  expect(runLines[1]).toBe(`  fix: ${fix}`);

  const input = path.join(home, 'one.jsonl');
  fs.writeFileSync(input, JSON.stringify({ question: 'q', model: 'plain' }));
  const batch = await runCli(['batch', input, '--address', address], { env });
  expect(batch.code).toBe(1);
  expect(batch.stderr).toContain(
    'mcp-turns: cannot start batch one: Failed to start Workflow: Namespace default has no mapping defined for search attribute McpTurnsBatch\n',
  );
  expect(batch.stderr).toContain(`  fix: ${fix}\n`);

  // The printed command, run as printed (the temporal CLI from the same resolution), fixes it.
  const created = spawnSync(cli, fix.split(' ').slice(1), { encoding: 'utf8' });
  expect(created.status).toBe(0);
  const again = await runCli(['run', 'anything', '--address', address, '--model', 'plain', '--json'], {
    env,
  });
  expect(again.code).toBe(0);
  expect(JSON.parse(again.stdout).response.conversation).toBe('plain answer');

  // The server was started without mcp-turns' help (no record): the link is port + 1000, as the Temporal CLI pairs them.
  const demo = await runCli(['demo', '--port', String(port)], { env, timeoutMs: 90_000 });
  expect(demo.code).toBe(0);
  expect(demo.stdout).toContain(`Reusing the Temporal server on 127.0.0.1:${port}.`);
  expect(demo.stdout).toContain('Echo: hello from mcp-turns');
  expect(demo.stdout).toMatch(
    new RegExp(`Temporal UI: http://127\\.0\\.0\\.1:${port + 1000}/namespaces/default/workflows/demo-`),
  );
  expect(demo.stdout).not.toContain(':8233');
});

it('a demo whose turn fails stops the dev server it started', async () => {
  // The demo's UI listens on its port + 1000: a port whose pair is free too.
  let demoPort = await freePort();
  while (await portIsOpen('127.0.0.1', demoPort + 1000)) demoPort = await freePort();
  const demo = await runCli(['demo', '--port', String(demoPort), '--model', 'broken'], {
    env: { ...env, ANTHROPIC_API_KEY: 'test' },
    timeoutMs: 90_000,
  });
  expect(demo.code).toBe(1);
  expect(demo.stdout).toContain(`Temporal dev server on 127.0.0.1:${demoPort}`);
  expect(demo.stderr).toMatch(/^mcp-turns: .*Claude API 400 invalid_request_error: refused/m);
  expect(await portIsOpen('127.0.0.1', demoPort)).toBe(false);
  expect(await portIsOpen('127.0.0.1', demoPort + 1000)).toBe(false);
});
