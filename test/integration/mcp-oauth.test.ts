/**
 * OAuth 2.1 against a real OAuth-protected MCP server (test/support/oauth-mcp-server.ts) whose access
 * tokens live 1 second: `mcp-turns auth` (the real CLI, its browser played by fetch) stores tokens
 * in a 0600 file; workers refresh them mid-batch without a failed call; client credentials renew
 * themselves; a worker with no authorization says who must act; and no token reaches a workflow
 * history, a turn result or a log line. All of it against both eras of MCP endpoint: a 2025 one and
 * a 2026-07-28-only one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { McpPool } from '../../src/mcp';
import { parseConfig } from '../../src/config/config-file';
import { testStateDir } from '../support/settings';
import { runBatch, type BatchItemOutcome } from '../../src/client/batch-client';
import { batchWorkflowId } from '../../src/core/batch';
import { authorizeServer } from '../../src/mcp/oauth-authorization';
import type { Scenario } from '../../src/stub';
import { BIN } from '../support/cli';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server';
import { startTurnHarness } from '../support/turn-harness';
import { recordingLogger, textOf } from './mcp-fixtures';

jest.setTimeout(120_000);

const ACCESS_TTL_S = 1;
const MACHINE = { id: 'machine-client', secret: 'machine-secret-8d41c7e2' };

/** Plays the person's browser: opens the authorization URL and follows its redirect to the CLI. */
async function approveInBrowser(authorizationUrl: string): Promise<void> {
  const consent = await fetch(authorizationUrl, { redirect: 'manual' });
  const back = consent.headers.get('location');
  if (!back) throw new Error(`the authorization server did not redirect (${consent.status})`);
  const landed = await fetch(back);
  if (!landed.ok) throw new Error(`the redirect listener answered ${landed.status}: ${await landed.text()}`);
}

/** Runs `mcp-turns auth <server>` and approves the URL it prints. */
async function runAuthCommand(
  config: string,
  name: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [
    BIN,
    'auth',
    name,
    '--config',
    config,
    '--no-browser',
    '--timeout',
    '30',
  ]);
  let stdout = '';
  let stderr = '';
  let approving: Promise<void> | undefined;
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    const url = /^\s+(http\S+)$/m.exec(stdout)?.[1];
    if (url && !approving) approving = approveInBrowser(url);
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  await approving;
  return { code, stdout, stderr };
}

function poolOf(servers: Record<string, unknown>, log = recordingLogger()): McpPool {
  return new McpPool(
    parseConfig(JSON.stringify({ mcp_servers: servers }), 'json', process.env, 'test', testStateDir())
      .servers,
    log.logger,
  );
}

describe.each(['legacy', 'modern'] as const)('%s MCP endpoint', (era) => {
  let server: OAuthMcpServer;
  let dir: string;

  beforeAll(async () => {
    server = await startOAuthMcpServer({ era, accessTtlS: ACCESS_TTL_S, machineClient: MACHINE });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `mcp-turns-oauth-${era}-`));
  });
  afterAll(async () => {
    await server?.close();
  });

  /** The strings of `haystack` that contain any issued token (or the client secret). */
  function leaks(haystack: string): string[] {
    return [...server.issuedTokens(), MACHINE.secret].filter((t) => haystack.includes(t));
  }

  describe('authorization code: a person authorizes once, workers refresh', () => {
    const tokenFile = () => path.join(dir, 'tokens', 'remote.json');
    const entry = () => ({
      type: 'streamable-http',
      url: server.url,
      oauth: { redirect_port: 0, token_file: tokenFile() },
    });

    it('mcp-turns auth discovers, registers, authorizes with PKCE and stores the tokens in a 0600 file', async () => {
      const config = path.join(dir, 'mcp.json');
      // The .mcp.json shape: camelCase keys.
      fs.writeFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            remote: { type: 'http', url: server.url, oauth: { redirectPort: 0, tokenFile: tokenFile() } },
          },
        }),
      );
      const run = await runAuthCommand(config, 'remote');
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /remote authorized \(scope "mcp:tools"; access token valid 1 s; workers refresh it themselves\); 2 tools listed\./,
      );
      expect(run.stdout).toContain(`Tokens stored in ${tokenFile()} (mode 0600).`);
      expect(server.stats.registrations).toBe(1);
      expect(server.stats.codeGrants).toBe(1);
      expect(fs.statSync(tokenFile()).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(tokenFile())).mode & 0o777).toBe(0o700);
      const stored = JSON.parse(fs.readFileSync(tokenFile(), 'utf8')) as {
        url: string;
        tokens: { refresh_token: string };
      };
      expect(stored.url).toBe(server.url);
      expect(server.issuedTokens()).toContain(stored.tokens.refresh_token);
      expect(leaks(run.stdout)).toEqual([]);
    });

    it('100 tool calls across several expiries through McpPool: none fails, tokens are refreshed on the way', async () => {
      const log = recordingLogger();
      const pool = poolOf({ remote: entry() }, log);
      const before = { ...server.stats };
      const started = Date.now();
      try {
        const outputs = [];
        // Ten at a time for ~3 s: at least two expiries of the 1-second tokens.
        for (let i = 0; i < 100; i += 10) {
          const wave = Array.from({ length: 10 }, (_, j) =>
            pool.callTool({
              server: 'remote',
              tool: 'echo',
              arguments: { text: `m${i + j}` },
              toolUseId: `t${i + j}`,
            }),
          );
          outputs.push(...(await Promise.all(wave)));
          await new Promise((r) => setTimeout(r, 250));
        }
        expect(Date.now() - started).toBeGreaterThan(2 * ACCESS_TTL_S * 1000);
        expect(outputs.filter((o) => o.isError)).toEqual([]);
        expect(outputs.map(textOf)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`));
        expect(server.stats.refreshGrants - before.refreshGrants).toBeGreaterThanOrEqual(2);
        // Renewal is single-flight: a rotated refresh token is never presented twice.
        expect(server.stats.reusedRefreshTokens).toBe(0);
        expect(server.stats.codeGrants).toBe(before.codeGrants); // no person was needed again
        expect(
          log.lines.filter((l) => l.message === 'mcp oauth tokens renewed').length,
        ).toBeGreaterThanOrEqual(2);
        expect(leaks(log.all())).toEqual([]);
      } finally {
        await pool.close();
      }
    });

    it('a batch of turns refreshes mid-batch without a failed call; no token in histories, results or logs', async () => {
      const use = (name: string, input: Record<string, unknown>) => ({
        type: 'tool_use' as const,
        name,
        input,
      });
      const scenarios: Record<string, Scenario> = {
        oauth: {
          steps: [
            {
              content: [use('remote__echo', { text: 'first' }), use('remote__token_echo', {})],
              latencyMs: 400,
            },
            { content: [use('remote__echo', { text: 'second' })], latencyMs: 400 },
            { content: [{ type: 'text', text: 'done: {{toolResults}}' }] },
          ],
          formatter: { conversation: [{ type: 'text', content: '{{toolResults}}' }] },
        },
      };
      const log = recordingLogger();
      const h = await startTurnHarness({ scenarios, servers: { remote: entry() }, log: log.logger });
      const before = { ...server.stats };
      const name = `oauth-${Date.now()}`;
      const outcomes: BatchItemOutcome[] = [];
      try {
        await runBatch(h.client, {
          name,
          taskQueue: h.taskQueue,
          concurrency: 4,
          pollIntervalMs: 200,
          items: Array.from({ length: 12 }, (_, i) => ({
            id: `q${i}`,
            input: { question: `q${i}`, model: 'oauth', format: false },
          })),
          onResult: (o) => void outcomes.push(o),
        });
        expect(outcomes.map((o) => o.status)).toEqual(Array(12).fill('completed'));
        const calls = outcomes.flatMap((o) => o.result!.toolCalls);
        expect(calls).toHaveLength(36);
        expect(calls.filter((c) => c.isError)).toEqual([]);
        // Several token lifetimes passed while the batch ran, and the worker refreshed on its own.
        expect(server.stats.refreshGrants - before.refreshGrants).toBeGreaterThanOrEqual(2);
        expect(server.stats.reusedRefreshTokens).toBe(0);
        expect(server.stats.toolCalls - before.toolCalls).toBe(36);

        // The server echoed its token into a result: Claude saw it redacted.
        const echoed = h.stub.requests
          .flatMap((r) => JSON.stringify(r.body))
          .find((b) => b.includes('your token is'));
        expect(echoed).toContain('your token is [redacted]');

        const histories = await Promise.all(
          [batchWorkflowId(name), ...outcomes.map((o) => o.workflowId)].map((id) =>
            h.client.workflow.getHandle(id).fetchHistory(),
          ),
        );
        expect(leaks(JSON.stringify(histories))).toEqual([]);
        expect(leaks(JSON.stringify(outcomes))).toEqual([]);
        expect(leaks(JSON.stringify(h.stub.requests))).toEqual([]);
        expect(leaks(log.all())).toEqual([]);
      } finally {
        await h.close();
      }
    });
  });

  it('a server that ends tokens before their stated lifetime: the 401s of concurrent calls share one refresh', async () => {
    // Tokens said to live an hour die after one second: no renewal ahead of time, every expiry is a 401.
    const early = await startOAuthMcpServer({ era, accessTtlS: 1, advertisedTtlS: 3600 });
    const servers = parseConfig(
      JSON.stringify({
        mcp_servers: {
          early: { url: early.url, oauth: { redirect_port: 0, token_file: path.join(dir, 'early.json') } },
        },
      }),
      'json',
      process.env,
      'test',
      testStateDir(),
    ).servers;
    const pool = new McpPool(servers);
    try {
      await authorizeServer(servers[0]!, { openUrl: (url) => approveInBrowser(url.href) });
      const outputs = [];
      for (let wave = 0; wave < 3; wave++) {
        await new Promise((r) => setTimeout(r, 1100));
        outputs.push(
          ...(await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              pool.callTool({
                server: 'early',
                tool: 'echo',
                arguments: { text: `w${wave}-${i}` },
                toolUseId: `e${wave}${i}`,
              }),
            ),
          )),
        );
      }
      expect(outputs.filter((o) => o.isError)).toEqual([]);
      // Waves 2 and 3 were all refused once (wave 1 shared the connect's one refusal).
      expect(early.stats.expiredTokenRefusals).toBeGreaterThanOrEqual(21);
      expect(early.stats.refreshGrants).toBe(3);
      expect(early.stats.reusedRefreshTokens).toBe(0);
    } finally {
      await pool.close();
      await early.close();
    }
  });

  describe('client credentials: machine to machine', () => {
    it('fetches its own tokens, fetches new ones as they expire, and stores nothing', async () => {
      process.env.MCP_TURNS_TEST_MACHINE_SECRET = MACHINE.secret;
      const log = recordingLogger();
      const servers = parseConfig(
        JSON.stringify({
          mcp_servers: {
            m2m: {
              url: server.url,
              oauth: {
                grant: 'client_credentials',
                client_id: MACHINE.id,
                client_secret: '${MCP_TURNS_TEST_MACHINE_SECRET}',
                scope: 'mcp:tools',
                token_file: path.join(dir, 'never-written.json'),
              },
            },
          },
        }),
        'json',
        process.env,
        'test',
        testStateDir(),
      ).servers;
      const pool = new McpPool(servers, log.logger);
      const before = server.stats.clientCredentialGrants;
      try {
        const outputs = [];
        for (let i = 0; i < 10; i++) {
          outputs.push(
            await pool.callTool({ server: 'm2m', tool: 'token_echo', arguments: {}, toolUseId: `c${i}` }),
          );
          await new Promise((r) => setTimeout(r, 250));
        }
        expect(outputs.filter((o) => o.isError)).toEqual([]);
        expect(new Set(outputs.map(textOf))).toEqual(new Set(['your token is [redacted]']));
        expect(server.stats.clientCredentialGrants - before).toBeGreaterThanOrEqual(2);
        expect(fs.existsSync(path.join(dir, 'never-written.json'))).toBe(false);
        expect(leaks(log.all())).toEqual([]);
      } finally {
        await pool.close();
      }
    });
  });

  it('a worker never starts an authorization: with no stored tokens the server is unavailable, saying who must act', async () => {
    const pool = poolOf({ fresh: { url: server.url, oauth: { token_file: path.join(dir, 'none.json') } } });
    const registrations = server.stats.registrations;
    try {
      const listed = await pool.listTools();
      expect(listed.tools).toEqual([]);
      expect(JSON.stringify(listed.unavailable)).toContain(
        'server fresh needs a person to authorize it (it has no stored OAuth client): run `mcp-turns auth fresh` with the worker',
      );
      expect(server.stats.registrations).toBe(registrations);
    } finally {
      await pool.close();
    }
  });
});
