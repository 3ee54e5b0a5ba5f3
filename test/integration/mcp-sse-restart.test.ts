/**
 * A legacy HTTP+SSE server (the MCP SDK's SSEServerTransport, refusing requests on sessions nobody
 * initialised as the Python SDK's servers do) restarted on the same port between calls: the next
 * call succeeds on a newly initialised session, whether it comes at once or after the point where
 * the SDK's event stream would have reconnected on its own (3 s) to an uninitialised session,
 * without a failed call, a breaker count or a new pool; a -32602 right after a reconnect and a POST
 * for a forgotten session re-initialise; the same through `type: http` falling back to SSE.
 */
import { McpPool } from '../../src/mcp';
import { parseConfig } from '../../src/config/config-file';
import { testStateDir } from '../support/settings';
import { startLegacySseServer, type LegacySseServer } from '../support/legacy-sse-server';
import { recordingLogger, sleep, textOf } from './mcp-fixtures';

jest.setTimeout(60_000);

function poolOf(servers: Record<string, unknown>, log = recordingLogger()): McpPool {
  return new McpPool(parseConfig(JSON.stringify({ mcpServers: servers }), 'json', process.env, 'test', testStateDir()).servers, log.logger);
}

const echo = (pool: McpPool, message: string) =>
  pool.callTool({ server: 's', tool: 'echo', arguments: { message }, toolUseId: message });

describe.each([
  ['type: sse', 'sse'],
  ['type: http, falling back to SSE', 'http'],
])('a restarted legacy SSE server (%s)', (_name, type) => {
  let server: LegacySseServer;
  let pool: McpPool;
  const log = recordingLogger();

  beforeAll(async () => {
    server = await startLegacySseServer();
    pool = poolOf({ s: { type, url: server.url } }, log);
  });
  afterAll(async () => {
    await pool?.close();
    await server?.stop();
  });

  it('answers the first call', async () => {
    expect(textOf(await echo(pool, 'before'))).toBe('Echo: before');
    expect(server.initialized()).toBe(1);
  });

  it('answers a call made after the event stream would have reconnected, on a new initialised session', async () => {
    await server.stop();
    await server.start();
    await sleep(4000); // the SDK's EventSource reconnects after 3 s, to a session nobody initialised
    expect(textOf(await echo(pool, 'after-reconnect-window'))).toBe('Echo: after-reconnect-window');
    expect(server.initialized()).toBe(2);
  });

  /** Stops the server and starts it again once the pool has seen the stream go. */
  async function restart(): Promise<void> {
    await server.stop();
    // The lost stream closes the connection at once (calls in flight would fail now, not time out).
    for (let i = 0; i < 50 && pool.status()[0]!.connected; i++) await sleep(20);
    expect(pool.status()[0]!.connected).toBe(false);
    await server.start();
  }

  it('answers a call made at once after a restart', async () => {
    await restart();
    expect(textOf(await echo(pool, 'right-after'))).toBe('Echo: right-after');
    expect(server.initialized()).toBe(3);
  });

  it('takes -32602 right after a reconnect as a session not ready: re-initialises once and goes on', async () => {
    await restart();
    server.refuseNextRequest();
    expect(textOf(await echo(pool, 'refused-once'))).toBe('Echo: refused-once');
    expect(server.initialized()).toBe(5); // the reconnect, then the re-initialisation after the refusal
  });

  it('re-initialises when a POST is refused for a session the server forgot, and repeats the call', async () => {
    server.forgetSessions();
    expect(textOf(await echo(pool, 'forgotten'))).toBe('Echo: forgotten');
    expect(server.initialized()).toBe(6);
  });

  it('never counted a failure and keeps one connection', () => {
    expect(pool.status()[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0, opens: 0, connected: true });
    expect(log.lines.filter((l) => l.message === 'mcp tool call' && l.fields.outcome !== 'ok')).toEqual([]);
    expect(log.lines.filter((l) => l.message.startsWith('mcp SSE stream lost'))).toHaveLength(3);
  });

  it('still takes -32602 on a session in use as the server refusing the call', async () => {
    server.refuseNextRequest();
    await expect(echo(pool, 'refused')).rejects.toMatchObject({ type: 'McpInvalidRequest', nonRetryable: true });
    expect(server.initialized()).toBe(6);
  });
});
