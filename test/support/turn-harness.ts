/**
 * Everything a chat-turn test needs, real on every edge but Claude's network: the shared dev server,
 * an MCP pool over real servers, the scripted stub behind the real Anthropic SDK, and the two
 * workers (turns + MCP, Claude) exactly as `mcp-turns worker` assembles them.
 */
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { startStubModel, type RecordedRequest, type Scenario, type StubModel } from '../../src/stub';
import { McpPool, type McpLogger } from '../../src/mcp';
import { CodeTools } from '../../src/tools/code-tools';
import type { Toolset } from '../../src/core/toolsets';
import { parseConfig } from '../../src/config/config-file';
import { createClaudeClient } from '../../src/claude/client';
import { resolveClaudeConfig, type ClaudeConfigInput } from '../../src/claude/config';
import { createTurnWorkers, type TurnWorkers } from '../../src/worker/turn-worker';
import { executeChatTurn, startChatTurn } from '../../src/client/chat-turn-client';
import type { ChatTurnInput } from '../../src/schemas/turn-input';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { quietRuntime, testClient, uniqueQueue } from './temporal';
import { testDataConverter, testStateDir } from './settings';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { NativeConnection as NC } from '@temporalio/worker';

/** Looks like a key, is not one; the secret-scan test searches histories for it. */
export const TEST_API_KEY = 'test-anthropic-key-4f2b9d-never-in-history';

/** The question of a recorded Claude request (the first message, a string or, with a cache marker, a text block). */
export function questionOf(r: RecordedRequest): unknown {
  const content = r.body?.messages?.[0]?.content as unknown;
  return Array.isArray(content) ? (content[0] as { text?: string } | undefined)?.text : content;
}

export interface TurnHarness {
  stub: StubModel;
  pool: McpPool;
  client: Client;
  /** A client on the workers' own connection (eager workflow start). */
  workerClient: Client;
  taskQueue: string;
  run(input: ChatTurnInput, workflowId?: string): Promise<ChatTurnResult>;
  runWithHistory(input: ChatTurnInput, workflowId: string): Promise<{ result: ChatTurnResult; history: temporal.api.history.v1.IHistory }>;
  close(): Promise<void>;
}

export async function startTurnHarness(opts: {
  scenarios: Record<string, Scenario>;
  /** The scenario of a request whose model names none (a real model id, priced). */
  defaultScenario?: string;
  servers: Record<string, unknown>;
  /** Tools written in code, by module name (a module's `tools` export), run as the plugin's `tools` option runs them. */
  tools?: Record<string, unknown>;
  /** The config's tool sets (src/core/toolsets.ts), which may name the modules of `tools`. */
  toolsets?: Record<string, Toolset>;
  /** Values the code tools never let out (the worker's credential-named environment values). */
  credentials?: string[];
  claude?: ClaudeConfigInput;
  env?: NodeJS.ProcessEnv;
  /** Where the MCP pool logs (default: nowhere). */
  log?: McpLogger;
  /** The one key the stub takes; the workers send {@link TEST_API_KEY} (default: the stub takes any key). */
  stubApiKey?: string;
}): Promise<TurnHarness> {
  quietRuntime();
  const stub = await startStubModel({
    scenarios: opts.scenarios,
    ...(opts.defaultScenario ? { defaultScenario: opts.defaultScenario } : {}),
    ...(opts.stubApiKey !== undefined ? { apiKey: opts.stubApiKey } : {}),
  });
  const config = parseConfig(
    JSON.stringify({ mcp_servers: opts.servers }),
    'json',
    { ...process.env, ...opts.env },
    'test config',
    testStateDir(),
  );
  const pool = new McpPool(config.servers, opts.log);
  const codeTools = opts.tools ? new CodeTools([], opts.tools, opts.credentials ?? [], opts.log) : undefined;
  const claudeClient = createClaudeClient({ apiKey: TEST_API_KEY, baseURL: stub.url });
  const taskQueue = uniqueQueue('turns');
  const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
  const connection: NativeConnection = await NC.connect({ address });
  // The workers and both clients share one converter: what one stores or encrypts, the others read.
  const dataConverter = testDataConverter();
  const workers: TurnWorkers = await createTurnWorkers({
    connection,
    taskQueue,
    pool,
    ...(codeTools ? { codeTools } : {}),
    ...(opts.toolsets ? { toolsets: opts.toolsets } : {}),
    claudeClient,
    claudeConfig: resolveClaudeConfig(opts.claude ?? {}),
    workflowBundle: { codePath: process.env.MCP_TURNS_TEST_BUNDLE! },
    dataConverter,
  });
  const running = workers.run();
  const client = await testClient(dataConverter);
  return {
    stub,
    pool,
    client,
    workerClient: new Client({ connection, ...clientStorageOptions(dataConverter) }),
    taskQueue,
    run: (input, workflowId) => executeChatTurn(client, input, { taskQueue, ...(workflowId ? { workflowId } : {}) }),
    async runWithHistory(input, workflowId) {
      const handle = await startChatTurn(client, input, { taskQueue, workflowId: `${workflowId}-${Date.now()}` });
      const result = await handle.result();
      const history = await handle.fetchHistory();
      return { result, history };
    },
    async close() {
      workers.shutdown();
      await running;
      await connection.close();
      await client.connection.close();
      await pool.close();
      await stub.close();
    },
  };
}
