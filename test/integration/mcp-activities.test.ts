/**
 * The MCP activities in a mocked activity context over a real pool, against a server of each
 * protocol era: they heartbeat on every progress notification and periodically while waiting, set
 * the attempt, and turn the activity's cancellation into MCP cancellation.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { CancelledFailure } from '@temporalio/common';
import { makeToolCallActivities } from '../../activities/tool-calls';
import { makeTurnStartActivities } from '../../activities/turn-start';
import type { CallToolOutput, PreparedTurn } from '../../src/core/contracts';
import { McpPool } from '../../src/mcp';
import { parseConfig } from '../../src/config/config-file';
import { testStateDir } from '../support/settings';
import { MCP_ERAS } from '../support/mcp-servers';
import { sleep, startTestServer, textOf, type TestServer } from './mcp-fixtures';

jest.setTimeout(30_000);

it('prepareTurn refuses a bad input non-retryably, naming the field', async () => {
  const { prepareTurn } = makeTurnStartActivities({ tools: new McpPool([]), workerDefaults: {} });
  await expect(new MockActivityEnvironment().run(prepareTurn, { question: '', maxSteps: 0 })).rejects.toMatchObject({
    type: 'InvalidTurnInput',
    nonRetryable: true,
    message: expect.stringMatching(/question.*maxSteps|maxSteps.*question/),
  });
});

describe.each(MCP_ERAS)('against a server of the %s era', (era) => {
  let server: TestServer;
  let pool: McpPool;
  let activities: ReturnType<typeof makeToolCallActivities>;

  beforeAll(async () => {
    server = await startTestServer({ pageSize: 100, era });
    pool = new McpPool(
      parseConfig(
        JSON.stringify({ mcpServers: { api: { type: 'http', url: server.url, heartbeatTimeoutMs: 1500 } } }),
        'json',
        {},
        'test',
        testStateDir(),
      ).servers,
    );
    activities = makeToolCallActivities(pool);
  });
  afterAll(async () => {
    await pool?.close();
    await server?.close();
  });

  it('prepareTurn returns the tools offered and what each calls, the call policy of each listed server and the worker\'s turn defaults', async () => {
    const { prepareTurn } = makeTurnStartActivities({ tools: pool, workerDefaults: { model: 'worker-model' } });
    const out: PreparedTurn = await new MockActivityEnvironment().run(prepareTurn, { question: 'q' });
    expect(out.catalog.tools.map((t) => t.name)).toContain('api__slow');
    expect(out.catalog.targets.api__slow).toEqual({ server: 'api', tool: 'slow' });
    expect(out.policies.api).toMatchObject({ startToCloseTimeoutMs: 40_000, heartbeatTimeoutMs: 1500 });
    expect(out.workerDefaults).toEqual({ model: 'worker-model' });
    expect(pool.status()[0]).toMatchObject({ era, connected: true });
  });

  it('callTool heartbeats on progress and while waiting, and records the attempt', async () => {
    const env = new MockActivityEnvironment({ attempt: 2, heartbeatTimeoutMs: 1500 });
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const out: CallToolOutput = await env.run(activities.callTool, {
      server: 'api',
      tool: 'slow',
      arguments: { ms: 1200 },
      toolUseId: 'tu1',
    });
    expect(textOf(out)).toBe('slept 1200 ms');
    expect(out.attempt).toBe(2);
    const progress = beats.filter((b) => b !== undefined);
    expect(progress.length).toBeGreaterThanOrEqual(10); // one per progress notification (every 100 ms)
    expect(progress[0]).toEqual({ progress: 100, total: 1200 });
    expect(beats.filter((b) => b === undefined).length).toBeGreaterThanOrEqual(1); // the periodic beat (every 500 ms here)
  });

  it(
    era === 'legacy'
      ? 'cancelling the activity cancels the MCP request on the server (notifications/cancelled)'
      : 'cancelling the activity cancels the MCP request on the server (the client aborts the HTTP request)',
    async () => {
      const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 1500 });
      const before = server.cancelled.length;
      const running = env.run(activities.callTool, {
        server: 'api',
        tool: 'slow',
        arguments: { ms: 5000 },
        toolUseId: 'tu2',
      });
      await sleep(300);
      env.cancel();
      const err = await running.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CancelledFailure);
      for (let i = 0; i < 30 && server.cancelled.length === before; i++) await sleep(50);
      expect(server.cancelled.length).toBe(before + 1);
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
});
