/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the project's MCP
 * client (test/conformance/client.ts: McpPool, ServerConnection, `mcp-turns auth`'s flow, the config
 * parser and the token file). One test per scenario the project claims; each runs the suite's CLI,
 * which plays the server (and the authorization server), runs the client and judges every check.
 * A scenario passes when the CLI exits 0 and none of its checks is a failure or a warning.
 *
 * Out of scope (test/README.md, "MCP conformance"): elicitation (a worker is headless and offers no
 * elicitation), private_key_jwt and other extension grants (only client_secret client credentials
 * are configurable), and the draft revision's scenarios (stateless lifecycle, issuer checks,
 * offline access: the v1 SDK speaks 2025-11-25).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { node22 } from '../support/node22';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..', '..');
const SUITE = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const CLIENT = `"${process.execPath}" "${path.join(ROOT, 'test', 'conformance', 'run-client.js')}"`;

/** Every client scenario the project claims, with the flags it runs under. */
const CLAIMED_SCENARIOS: Array<{ scenario: string; flags?: string[] }> = [
  { scenario: 'initialize' },
  { scenario: 'tools_call' },
  { scenario: 'sse-retry' },
  { scenario: 'json-schema-2020-12-preservation' },
  // Tagged for the draft revision only; its rule (never fetch a network $ref) holds at 2025-11-25 too.
  { scenario: 'json-schema-ref-no-deref', flags: ['--spec-version', '2025-11-25', '--force'] },
  { scenario: 'auth/metadata-default' },
  { scenario: 'auth/metadata-var1' },
  { scenario: 'auth/metadata-var2' },
  { scenario: 'auth/metadata-var3' },
  { scenario: 'auth/basic-cimd' },
  { scenario: 'auth/scope-from-www-authenticate' },
  { scenario: 'auth/scope-from-scopes-supported' },
  { scenario: 'auth/scope-omitted-when-undefined' },
  { scenario: 'auth/scope-step-up' },
  { scenario: 'auth/scope-retry-limit' },
  { scenario: 'auth/token-endpoint-auth-basic' },
  { scenario: 'auth/token-endpoint-auth-post' },
  { scenario: 'auth/token-endpoint-auth-none' },
  { scenario: 'auth/pre-registration' },
  { scenario: 'auth/client-credentials-basic' },
  { scenario: 'auth/2025-03-26-oauth-metadata-backcompat' },
  { scenario: 'auth/2025-03-26-oauth-endpoint-fallback' },
];

/** Scenarios run at once: each mostly waits (servers, timers), and every one has its own ports. */
const PARALLEL = 3;

interface Check {
  id: string;
  status: string;
  description?: string;
}

interface Verdict {
  code: number | null;
  checks: Check[];
  output: string;
  ms: number;
}

let node: string;
let outDir: string;
const verdicts = new Map<string, Promise<Verdict>>();

function runScenario(scenario: string, flags: string[] = []): Promise<Verdict> {
  const out = path.join(outDir, scenario.replace(/\//g, '_'));
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      node,
      [
        SUITE,
        'client',
        '--command',
        CLIENT,
        '--scenario',
        scenario,
        '--timeout',
        '30000',
        '-o',
        out,
        ...flags,
      ],
      {
        cwd: ROOT,
      },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const found = fs
        .readdirSync(out, { recursive: true, encoding: 'utf8' })
        .find((f) => f.endsWith('checks.json'));
      const checks = found ? (JSON.parse(fs.readFileSync(path.join(out, found), 'utf8')) as Check[]) : [];
      resolve({ code, checks, output, ms: Date.now() - started });
    });
  });
}

/** Runs `task` when fewer than {@link PARALLEL} others run. */
function limited<T>(task: () => Promise<T>): Promise<T> {
  const run = async (): Promise<T> => {
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
  if (running < PARALLEL) return run();
  return new Promise<void>((resolve) => waiting.push(resolve)).then(run);
}
let running = 0;
const waiting: Array<() => void> = [];

beforeAll(() => {
  node = node22();
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-conformance-'));
  // All start now, PARALLEL at a time; each test below awaits its own verdict.
  for (const { scenario, flags } of CLAIMED_SCENARIOS) {
    const verdict = limited(() => runScenario(scenario, flags));
    verdict.catch(() => undefined); // reported by its test
    verdicts.set(scenario, verdict);
  }
});

afterAll(() => {
  if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
});

it.each(CLAIMED_SCENARIOS.map((s) => s.scenario))('%s passes', async (scenario) => {
  const verdict = await verdicts.get(scenario)!;
  const bad = verdict.checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
  if (verdict.code !== 0 || bad.length > 0 || verdict.checks.length === 0) {
    // The whole transcript, so a failure in CI says which check and why.
    throw new Error(
      `${scenario}: exit ${verdict.code}, ${bad.length} failed or warned checks\n${JSON.stringify(bad, null, 2)}\n${verdict.output}`,
    );
  }
  expect(verdict.checks.some((c) => c.status === 'SUCCESS')).toBe(true);
});
