/**
 * The pool over HTTP: pagination, list changes, sessions the server forgets (404), protocol errors,
 * tool-level errors, cancellation reaching the server, the legacy SSE fallback, hung and dead servers,
 * and the circuit breaker opening, half-opening and closing against a server that comes back. Our
 * test server runs in each protocol era; where the eras differ (how long a tool list is kept, how a
 * list change is seen, how a call is cancelled, sessions) each era's behaviour is asserted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpPool } from '../../src/mcp';
import { parseConfig } from '../../src/config/config-file';
import { testStateDir } from '../support/settings';
import { freePort } from '../support/ports';
import { MCP_ERAS, type McpEra } from '../support/mcp-servers';
import {
  recordingLogger,
  sleep,
  startEverythingHttp,
  startTestServer,
  stopChild,
  textOf,
  type TestServer,
} from './mcp-fixtures';

jest.setTimeout(60_000);

function poolOf(servers: Record<string, unknown>, log = recordingLogger()): McpPool {
  return new McpPool(
    parseConfig(JSON.stringify({ mcp_servers: servers }), 'json', process.env, 'test', testStateDir()).servers,
    log.logger,
  );
}

describe.each(MCP_ERAS)('against a steerable in-process server (%s era)', (era) => {
  let server: TestServer;
  let pool: McpPool;
  const log = recordingLogger();

  beforeAll(async () => {
    server = await startTestServer({ pageSize: 2, era });
    pool = poolOf(
      {
        api: {
          type: 'streamable-http',
          url: server.url,
          breaker: { failure_threshold: 1 },
          authorization: 'api-token-3f9a0b',
        },
      },
      log,
    );
  });
  afterAll(async () => {
    await pool?.close();
    await server?.close();
  });

  const ALL_TOOLS = ['t1', 't2', 't3', 't4', 't5', 'echo_args', 'refuse', 'crash', 'fails', 'slow'];

  it('follows tools/list pagination; a call looks its tool up in the kept list', async () => {
    const listed = await pool.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual(ALL_TOOLS);
    expect(server.listRequests).toHaveLength(5);
    expect(server.listRequests[0]).toEqual({});
    expect(server.listRequests.slice(1).every((r) => typeof r.cursor === 'string')).toBe(true);
    await pool.callTool({ server: 'api', tool: 't1', arguments: {}, toolUseId: 'p1' });
    expect(server.listRequests).toHaveLength(5);
  });

  if (era === 'legacy') {
    it('keeps the list until the server says it changed: the next listing is served from it', async () => {
      await pool.listTools();
      expect(server.listRequests).toHaveLength(5);
    });
  } else {
    it('keeps the list for its ttlMs, which is 0 here: the next listing asks again, all pages', async () => {
      await pool.listTools();
      expect(server.listRequests).toHaveLength(10);
      expect(server.listRequests[5]).toEqual({});
    });
  }

  it('connects in the server\'s era (pool.status().era): one session in the legacy era, none in the modern', () => {
    expect(pool.status()[0]).toMatchObject({ era, connected: true });
    expect(server.sessions()).toBe(era === 'legacy' ? 1 : 0);
  });

  if (era === 'legacy') {
    it('refreshes the list on notifications/tools/list_changed', async () => {
      await server.addTool({ name: 'late', description: 'added later', inputSchema: { type: 'object' } });
      for (let i = 0; i < 50 && !log.lines.some((l) => l.message === 'mcp tool list changed'); i++)
        await sleep(20);
      const before = server.listRequests.length;
      const listed = await pool.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual([...ALL_TOOLS, 'late']);
      expect(server.listRequests.length).toBe(before + 6);
      expect(textOf(await pool.callTool({ server: 'api', tool: 'late', arguments: {}, toolUseId: 'p2' }))).toBe(
        'late ran',
      );
    });
  } else {
    it('sees a changed list at the next listing, told nothing (no list_changed without a subscription)', async () => {
      await server.addTool({ name: 'late', description: 'added later', inputSchema: { type: 'object' } });
      const listed = await pool.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual([...ALL_TOOLS, 'late']);
      expect(log.lines.some((l) => l.message === 'mcp tool list changed')).toBe(false);
      expect(textOf(await pool.callTool({ server: 'api', tool: 'late', arguments: {}, toolUseId: 'p2' }))).toBe(
        'late ran',
      );
    });
  }

  it('returns a tool-level isError as a result, not counted by the breaker (threshold 1 here)', async () => {
    const out = await pool.callTool({ server: 'api', tool: 'fails', arguments: {}, toolUseId: 'e1' });
    expect(out).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'the tool failed at tool level' }],
    });
    expect(pool.status()[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });

  it('throws a non-retryable McpInvalidRequest for invalid params from the server', async () => {
    const err = await pool
      .callTool({ server: 'api', tool: 'refuse', arguments: {}, toolUseId: 'e2' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'McpInvalidRequest', nonRetryable: true });
    expect((err as Error).message).toContain('refused: these arguments can never work');
    expect(pool.status()[0]!.state).toBe('closed');
  });

  it('throws a retryable failure for a server-side internal error, without counting it', async () => {
    const err = await pool
      .callTool({ server: 'api', tool: 'crash', arguments: {}, toolUseId: 'e3' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'McpServerError', nonRetryable: false });
    expect(pool.status()[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });

  it('sends the authorization header but never lets its value out', async () => {
    const out = await pool.callTool({
      server: 'api',
      tool: 'echo_args',
      arguments: { message: 'hi', token: 'Bearer api-token-3f9a0b' },
      toolUseId: 'e4',
    });
    expect([...server.authorizations]).toEqual(['Bearer api-token-3f9a0b']);
    expect(textOf(out)).toBe('{"message":"hi","token":"[redacted]"}');
    const bare = await pool.callTool({
      server: 'api',
      tool: 'echo_args',
      arguments: { message: 'hi', token: 'api-token-3f9a0b' },
      toolUseId: 'e5',
    });
    expect(textOf(bare)).toBe('{"message":"hi","token":"[redacted]"}');
  });

  it(
    era === 'legacy'
      ? 'cancels the request on the server when the signal aborts (notifications/cancelled)'
      : 'cancels the request on the server when the signal aborts (the client aborts the HTTP request)',
    async () => {
      const abort = new AbortController();
      const call = pool.callTool(
        { server: 'api', tool: 'slow', arguments: { ms: 3000 }, toolUseId: 'c1' },
        { signal: abort.signal },
      );
      await sleep(250);
      abort.abort(new Error('activity cancelled'));
      await expect(call).rejects.toThrow();
      for (let i = 0; i < 30 && server.cancelled.length === 0; i++) await sleep(50);
      expect(server.cancelled).toHaveLength(1);
      const cancelNotices = server.notifications.filter((m) => m === 'notifications/cancelled');
      if (era === 'legacy') {
        expect(cancelNotices).toHaveLength(1);
      } else {
        expect(cancelNotices).toEqual([]);
        expect(server.abortedRequests).toEqual(['tools/call']);
      }
      expect(pool.status()[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    },
  );

  // Legacy era only: a modern-era server keeps no session to forget.
  if (era === 'legacy') {
    it('re-initialises when the server answers 404 for a session it forgot, without a failed call', async () => {
      const sessions = server.sessions();
      server.forgetSessions();
      const out = await pool.callTool({
        server: 'api',
        tool: 'echo_args',
        arguments: { message: 'again', token: 'x' },
        toolUseId: 's1',
      });
      expect(textOf(out)).toBe('{"message":"again","token":"x"}');
      expect(server.sessions()).toBe(sessions + 1);
      expect(pool.status()[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0, opens: 0 });
    });
  }

  it('never logs the configured authorization', () => {
    expect(log.all()).not.toContain('api-token-3f9a0b');
  });
});

// Legacy era only: HTTP+SSE is the 2024-11-05 transport, which no modern-era server speaks.
it('reaches a legacy HTTP+SSE server through the SSE fallback', async () => {
  const port = await freePort();
  const sse = await startEverythingHttp(port, 'sse');
  const log = recordingLogger();
  const pool = poolOf({ legacy: { type: 'http', url: `http://127.0.0.1:${port}/sse` } }, log);
  try {
    const out = await pool.callTool({
      server: 'legacy',
      tool: 'echo',
      arguments: { message: 'via sse' },
      toolUseId: 's1',
    });
    expect(textOf(out)).toBe('Echo: via sse');
    expect(
      log.lines.find((l) => l.message === 'streamable HTTP refused; falling back to SSE')?.fields,
    ).toMatchObject({ server: 'legacy' });
  } finally {
    await pool.close();
    await stopChild(sse);
  }
});

it('gives up on a hung server within list_timeout_ms; with nothing reachable (hung, dead, missing, exiting) the turn gets no tools', async () => {
  // Accepts connections and never answers.
  const hung = http.createServer(() => undefined);
  await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
  const deadPort = await freePort();
  const pool = poolOf({
    hung: {
      url: `http://127.0.0.1:${(hung.address() as AddressInfo).port}/mcp`,
      list_timeout_ms: 500,
      connect_timeout_ms: 30_000,
    },
    dead: { url: `http://127.0.0.1:${deadPort}/mcp` },
    missing: { command: '/nonexistent/mcp-server' },
    quits: { command: process.execPath, args: ['-e', 'process.exit(3)'] },
  });
  try {
    const t0 = Date.now();
    const listed = await pool.listTools();
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(listed.tools).toEqual([]);
    expect(listed.policies).toEqual({});
    expect(listed.unavailable.map((u) => u.server)).toEqual(['hung', 'dead', 'missing', 'quits']);
    expect(listed.unavailable[0]!.reason).toMatch(/timed out after 500 ms/);
    expect(listed.unavailable[1]!.reason).toMatch(/^connect to dead failed: /);
    expect(listed.unavailable[2]!.reason).toMatch(/^connect to missing failed: .*ENOENT/);
    expect(listed.unavailable[3]!.reason).toMatch(/^connect to quits failed: .*closed/i);
  } finally {
    const t1 = Date.now();
    await pool.close(); // abandons the hung connect rather than waiting out its 30 s
    expect(Date.now() - t1).toBeLessThan(1000);
    hung.closeAllConnections();
    hung.close();
  }
});

/** A server the breaker tests start on a port once it has been dead there: the real npm server (legacy era), and ours in both eras. */
interface ComingBack {
  server: string;
  era: McpEra;
  /** Starts it on `port`; resolves with its stop. */
  start(port: number): Promise<() => Promise<void>>;
  tool: string;
  arguments: Record<string, unknown>;
  answer: string;
}

const COMING_BACK: ComingBack[] = [
  {
    server: 'server-everything',
    era: 'legacy',
    async start(port) {
      const child = await startEverythingHttp(port);
      return () => stopChild(child);
    },
    tool: 'echo',
    arguments: { message: 'hi' },
    answer: 'Echo: hi',
  },
  ...MCP_ERAS.map(
    (era): ComingBack => ({
      server: 'the test server',
      era,
      async start(port) {
        const server = await startTestServer({ era, port });
        return () => server.close();
      },
      tool: 'echo_args',
      arguments: { message: 'hi', token: 't' },
      answer: '{"message":"hi","token":"t"}',
    }),
  ),
];

describe.each(COMING_BACK)('the circuit breaker against a dead HTTP server that comes back ($server, $era era)', (comingBack) => {
  let port: number;
  let pool: McpPool;
  let stop: (() => Promise<void>) | undefined;
  const log = recordingLogger();
  const call = () =>
    pool.callTool({ server: 'api', tool: comingBack.tool, arguments: comingBack.arguments, toolUseId: 'b' });

  beforeAll(async () => {
    port = await freePort();
    pool = poolOf(
      {
        api: {
          type: 'streamable-http',
          url: `http://127.0.0.1:${port}/mcp`,
          connect_timeout_ms: 2000,
          breaker: { failure_threshold: 3, cooldown_ms: 1000, max_cooldown_ms: 1500 },
        },
      },
      log,
    );
  });
  afterAll(async () => {
    await pool?.close();
    await stop?.();
  });

  it('throws retryable transport failures until N in a row open the circuit', async () => {
    for (let i = 0; i < 3; i++) {
      await expect(call()).rejects.toMatchObject({ type: 'McpTransportError', nonRetryable: false });
    }
    expect(pool.status()[0]).toMatchObject({
      state: 'open',
      consecutiveFailures: 3,
      opens: 1,
      connected: false,
    });
  });

  it('while open, answers at once with the unavailable result (no throw, so no retry storm), and listTools says so', async () => {
    const t0 = Date.now();
    const refused = await call();
    expect(Date.now() - t0).toBeLessThan(50);
    expect(refused).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'server api is unavailable (circuit open, next probe in 1 s)' }],
      artifacts: [],
      truncatedBytes: 0,
    });
    expect((await pool.listTools()).unavailable).toEqual([
      { server: 'api', reason: 'circuit open, next probe in 1 s' },
    ]);
    const status = pool.status()[0]!;
    expect(status.nextProbeAt).toBeGreaterThan(Date.now());
    expect(status.nextProbeInMs).toBeLessThanOrEqual(1000);
  });

  it('half-opens after the cooldown; a failed probe re-opens it with a doubled (capped) cooldown', async () => {
    await sleep(1050);
    expect(pool.status()[0]!.state).toBe('half-open');
    await expect(call()).rejects.toMatchObject({ type: 'McpTransportError' });
    expect(pool.status()[0]).toMatchObject({ state: 'open', opens: 2 });
    expect(textOf(await call())).toBe('server api is unavailable (circuit open, next probe in 2 s)');
  });

  it('lets exactly one probe through when half-open, and closes once the server is back on the same port, in its era', async () => {
    stop = await comingBack.start(port);
    await sleep(1550);
    expect(pool.status()[0]!.state).toBe('half-open');
    const [probe, other] = await Promise.all([call(), call()]);
    expect(textOf(probe)).toBe(comingBack.answer);
    expect(textOf(other)).toBe('server api is unavailable (circuit half-open, a probe is in progress)');
    expect(pool.status()[0]).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
      opens: 2,
      connected: true,
      era: comingBack.era,
    });
    expect(textOf(await call())).toBe(comingBack.answer);
    const transitions = log.lines
      .filter((l) => l.message.startsWith('mcp circuit breaker'))
      .map((l) => `${String(l.fields.from)}->${String(l.fields.to)}`);
    expect(transitions).toEqual([
      'closed->open',
      'open->half-open',
      'half-open->open',
      'open->half-open',
      'half-open->closed',
    ]);
  });
});
