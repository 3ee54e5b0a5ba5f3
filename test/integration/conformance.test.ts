/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the project's MCP
 * client (test/conformance/client.ts: McpPool, ServerConnection, `mcp-turns auth`'s flow, the config
 * parser and the token file), at both protocol revisions the client speaks: 2025-11-25 (the suite's
 * default, a stateful server with `initialize`) and 2026-07-28 (`--spec-version 2026-07-28`, the
 * stateless server with `server/discover`). The client negotiates the era as a worker does
 * (`protocol: auto`) and fails when it lands in the wrong one. One test per claimed scenario and
 * revision; each runs the suite's CLI, which plays the server (and the authorization servers), runs
 * the client and judges every check. A scenario passes when the CLI exits 0, it ran at least one
 * check, and every check is a success or an INFO. A SKIPPED check is accepted only where the
 * scenario's claim names it below, with the reason. A 2025-only scenario run at 2026-07-28 exits 0
 * with no checks, and the checks guard catches it.
 *
 * Not claimed (test/README.md, "MCP conformance", says why for each): the legacy era's
 * `elicitation-sep1034-client-defaults` (it checks defaults a client fills into a form it answers
 * itself; a worker asks a person); private_key_jwt and the other extension grants (only
 * client-secret client credentials are configurable).
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

type Revision = '2025-11-25' | '2026-07-28';

/** One claimed scenario at one revision. */
interface Claim {
  scenario: string;
  revision: Revision;
  /** More flags for the suite's CLI. */
  flags?: string[];
  /** The server's `protocol` setting, when not the default (auto). */
  protocol?: 'legacy';
  /**
   * SKIPPED checks accepted: check id, then check name (several checks share an id), then why.
   * Any other SKIPPED check fails the test.
   */
  skipped?: Record<string, Record<string, string>>;
}

/** Scenarios whose flows are the same at both revisions (only the MCP endpoint's wire differs). */
const AUTH_BOTH = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
];

/**
 * 2026-07-28 `request-metadata`: each client capability is checked only when declared. A worker
 * declares elicitation (it asks a person durably), never these.
 */
const NOT_DECLARED = {
  'sep-2575-client-declares-roots-capability': {
    ClientDeclaresRootsCapability: 'roots: deprecated in 2026-07-28; a worker offers no roots',
  },
  'sep-2575-client-declares-sampling-capability': {
    ClientDeclaresSamplingCapability: 'sampling: deprecated in 2026-07-28; a worker offers no sampling',
  },
};

/**
 * 2026-07-28 `http-standard-headers` checks the headers of each method, one check per method, all
 * under one id. These are methods a tools-only client never sends.
 */
const NEVER_SENT = {
  ClientMcpMethodHeader_initialize: 'initialize: not part of the 2026-07-28 wire',
  ClientMcpMethodHeader_notifications_initialized:
    'notifications/initialized: not part of the 2026-07-28 wire',
  ClientMcpMethodHeader_resources_list: 'resources/list: a worker uses tools only',
  ClientMcpMethodHeader_resources_read: 'resources/read: a worker uses tools only',
  ClientMcpNameHeader_resources_read: 'resources/read: a worker uses tools only',
  ClientMcpMethodHeader_prompts_list: 'prompts/list: a worker uses tools only',
  ClientMcpMethodHeader_prompts_get: 'prompts/get: a worker uses tools only',
  ClientMcpNameHeader_prompts_get: 'prompts/get: a worker uses tools only',
};

/** Claimed at 2025-11-25: the suite's default revision (no `--spec-version`). */
const LEGACY: Array<Omit<Claim, 'revision'>> = [
  { scenario: 'initialize' },
  { scenario: 'tools_call' },
  { scenario: 'sse-retry' },
  { scenario: 'json-schema-2020-12-preservation' },
  // Tagged for 2026-07-28 only; its rule (never fetch a network $ref) holds at 2025-11-25 too. Its
  // server answers `server/discover` at any revision, where auto would go modern: the setting pins legacy.
  {
    scenario: 'json-schema-ref-no-deref',
    flags: ['--spec-version', '2025-11-25', '--force'],
    protocol: 'legacy',
  },
  ...AUTH_BOTH.map((scenario) => ({ scenario })),
  { scenario: 'auth/client-credentials-basic' },
  { scenario: 'auth/2025-03-26-oauth-metadata-backcompat' },
  { scenario: 'auth/2025-03-26-oauth-endpoint-fallback' },
];

/** Claimed at 2026-07-28 (`--spec-version 2026-07-28`): every client scenario of the revision. */
const MODERN: Array<Omit<Claim, 'revision'>> = [
  { scenario: 'tools_call' },
  { scenario: 'request-metadata', skipped: NOT_DECLARED },
  { scenario: 'http-standard-headers', skipped: { 'sep-2243-client-includes-standard-headers': NEVER_SENT } },
  { scenario: 'http-custom-headers' },
  { scenario: 'http-invalid-tool-headers' },
  { scenario: 'json-schema-ref-no-deref' },
  { scenario: 'json-schema-2020-12-preservation' },
  // Input requests as a turn sends them again (declined: the test client has no person to ask).
  { scenario: 'sep-2322-client-request-state' },
  ...AUTH_BOTH.map((scenario) => ({ scenario })),
  { scenario: 'auth/resource-mismatch' },
  { scenario: 'auth/offline-access-scope' },
  { scenario: 'auth/offline-access-not-supported' },
  { scenario: 'auth/authorization-server-migration' },
  { scenario: 'auth/iss-supported' },
  { scenario: 'auth/iss-not-advertised' },
  { scenario: 'auth/iss-supported-missing' },
  { scenario: 'auth/iss-wrong-issuer' },
  { scenario: 'auth/iss-unexpected' },
  { scenario: 'auth/iss-normalized' },
  { scenario: 'auth/metadata-issuer-mismatch' },
  // An extension, not on the revision's timeline (skipped without --force): the one extension grant
  // a worker can be configured with, on the 2026-07-28 wire.
  { scenario: 'auth/client-credentials-basic', flags: ['--force'] },
];

/** Every client scenario the project claims, at each revision. */
const CLAIMED: Claim[] = [
  ...LEGACY.map((c) => ({ ...c, revision: '2025-11-25' as const })),
  ...MODERN.map((c) => ({
    ...c,
    revision: '2026-07-28' as const,
    flags: ['--spec-version', '2026-07-28', ...(c.flags ?? [])],
  })),
];

/** Scenarios run at once: each mostly waits (servers, timers), and every one has its own ports. */
const PARALLEL = 3;

interface Check {
  id: string;
  name: string;
  status: string;
  description?: string;
}

interface Verdict {
  code: number | null;
  checks: Check[];
  output: string;
  ms: number;
}

/** A claim's name in test titles and its verdict's key. */
const label = (c: Claim): string => `${c.revision} ${c.scenario}`;

let node: string;
let outDir: string;
const verdicts = new Map<string, Promise<Verdict>>();

function runScenario(claim: Claim): Promise<Verdict> {
  const out = path.join(outDir, label(claim).replace(/[/ ]/g, '_'));
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
        claim.scenario,
        '--timeout',
        '30000',
        '-o',
        out,
        ...(claim.flags ?? []),
      ],
      {
        cwd: ROOT,
        // The suite passes its environment on to the client.
        env: {
          ...process.env,
          ...(claim.protocol ? { MCP_TURNS_CONFORMANCE_PROTOCOL: claim.protocol } : {}),
        },
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
  for (const claim of CLAIMED) {
    const verdict = limited(() => runScenario(claim));
    verdict.catch(() => undefined); // reported by its test
    verdicts.set(label(claim), verdict);
  }
});

afterAll(() => {
  if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
});

it.each(CLAIMED.map((c) => [label(c), c] as const))('%s passes', async (name, claim) => {
  const verdict = await verdicts.get(name)!;
  const accepted = (c: Check): boolean =>
    c.status === 'SUCCESS' ||
    c.status === 'INFO' ||
    (c.status === 'SKIPPED' && claim.skipped?.[c.id]?.[c.name] !== undefined);
  const bad = verdict.checks.filter((c) => !accepted(c));
  if (verdict.code !== 0 || bad.length > 0 || verdict.checks.length === 0) {
    // The whole transcript, so a failure in CI says which check and why.
    throw new Error(
      `${name}: exit ${verdict.code}, ${bad.length} failed, warned or skipped checks\n${JSON.stringify(bad, null, 2)}\n${verdict.output}`,
    );
  }
  expect(verdict.checks.some((c) => c.status === 'SUCCESS')).toBe(true);
});
