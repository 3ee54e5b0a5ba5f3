/**
 * Storage off, and the workflow itself sends a payload over the limit (a Claude call's step segment of
 * 2.2 MB: a 1.1 MB tool call and its 1.1 MB result): the workflow task fails with the one line that
 * names it and the fix, visible in history, and is retried; once the workers are restarted with
 * storage configured, the same run completes.
 */
import type { DataConverter } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { startStubModel, type Scenario } from '../../src/stub';
import { McpPool } from '../../src/mcp';
import { parseConfig } from '../../src/config/config-file';
import { createClaudeClient } from '../../src/claude/client';
import { resolveClaudeConfig } from '../../src/claude/config';
import { createTurnWorkers } from '../../src/worker/turn-worker';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { createDataConverter } from '../../src/data-converter/data-converter';
import { everythingStdio } from '../support/mcp-servers';
import { rawHistoryEvents } from '../support/history-payloads';
import { quietRuntime, testClient, uniqueQueue } from '../support/temporal';
import { testDataConverter, testSettings, testStateDir } from '../support/settings';

jest.setTimeout(120_000);

const HALF = 'h'.repeat(1_100_000);
const scenarios: Record<string, Scenario> = {
  'over-limit-step': {
    steps: [
      { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: HALF } }] },
      { content: [{ type: 'text', text: 'Echoed it.' }] },
    ],
    formatter: { conversation: [{ type: 'text', content: 'echoed' }] },
  },
};

it('fails the workflow task with the line while nothing is stored, and completes once storage is configured', async () => {
  quietRuntime();
  const stub = await startStubModel({ scenarios });
  const config = parseConfig(JSON.stringify({ mcp_servers: { everything: everythingStdio({ max_result_bytes: 2_000_000 }) } }), 'json', process.env, 'test', testStateDir());
  const pool = new McpPool(config.servers);
  const connection = await NativeConnection.connect({ address: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS! });
  // The client and the workers with storage share one converter.
  const dataConverter = testDataConverter();
  const client = await testClient(dataConverter);
  const taskQueue = uniqueQueue('over-limit');
  const workersWith = (dataConverter: DataConverter) =>
    createTurnWorkers({
      connection,
      taskQueue,
      pool,
      claudeClient: createClaudeClient({ apiKey: 'test', baseURL: stub.url }),
      claudeConfig: resolveClaudeConfig({}),
      workflowBundle: { codePath: process.env.MCP_TURNS_TEST_BUNDLE! },
      dataConverter,
    });
  try {
    const unstored = await workersWith(createDataConverter(testSettings({ MCP_TURNS_STORAGE: 'none' }).storage.get()));
    const running = unstored.run();
    const handle = await startChatTurn(client, { question: 'Echo this', model: 'over-limit-step', servers: ['everything'] }, { taskQueue });

    let failure: string | undefined;
    for (let i = 0; i < 100 && !failure; i++) {
      const events = await rawHistoryEvents(client, handle.workflowId);
      failure = events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.failure?.message ?? undefined;
      if (!failure) await new Promise((r) => setTimeout(r, 200));
    }
    expect(failure).toMatch(
      new RegExp(`^a payload of workflow chatTurn ${handle.workflowId} is 2\\.\\d MiB, over Temporal's 2\\.0 MiB payload limit: configure external storage for the client and every worker: MCP_TURNS_STORAGE=`),
    );
    expect((await handle.describe()).status.name).toBe('RUNNING');
    unstored.shutdown();
    await running;

    const stored = await workersWith(dataConverter);
    const runningAgain = stored.run();
    try {
      const result = await handle.result();
      expect(result.response.conversation).toBe('echoed');
      expect(result.toolCalls.map((c) => c.isError)).toEqual([false]);
    } finally {
      stored.shutdown();
      await runningAgain;
    }
  } finally {
    await client.connection.close();
    await connection.close();
    await pool.close();
    await stub.close();
  }
});
