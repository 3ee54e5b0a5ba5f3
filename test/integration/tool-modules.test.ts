/**
 * Tool modules as a user writes them, loaded by a real `mcp-turns worker` process from its config:
 * a module of `defineTool`s importing `mcp-turns/tools` and zod, a module written for the `ai`
 * package with its `tool()`, unchanged (zod input, `experimental_context`, an async generator), and
 * a module that throws while it loads, which is one line naming it and its error while the other
 * tools stay. A credential of the worker's environment a tool uses never reaches history.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { executeChatTurn } from '../../src/client/chat-turn-client';
import { rawHistoryEvents } from '../support/history-payloads';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';
import { runCli } from '../support/cli';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..', '..');
const CRM_TOKEN = 'crm-token-e1f37c-only-in-the-worker-env';
const taskQueue = uniqueQueue('modules');
let stub: StubModel;
let worker: ChildProcess;
let client: Client;
let stderr = '';

/** A project of its own: the modules, and node_modules with mcp-turns, zod and ai, as an install gives it. */
function writeProject(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-modules-'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'mcp-turns'));
  for (const dep of ['zod', 'ai', '@ai-sdk', '@standard-schema', '@opentelemetry', '@vercel']) {
    if (fs.existsSync(path.join(ROOT, 'node_modules', dep))) fs.symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(dir, 'node_modules', dep));
  }
  fs.mkdirSync(path.join(dir, 'tools'));
  fs.writeFileSync(
    path.join(dir, 'tools', 'crm.mjs'),
    `import { z } from 'zod';
import { defineTool } from 'mcp-turns/tools';
export const tools = [
  defineTool({
    name: 'lookup',
    description: 'Look up a customer',
    inputSchema: z.object({ id: z.string() }),
    execute: async ({ id }, ctx) => ({ id, name: 'Ada', tenant: ctx.context.tenant, auth: 'Bearer ' + process.env.CRM_TOKEN }),
  }),
];
`,
  );
  fs.writeFileSync(
    path.join(dir, 'tools', 'weather.mjs'),
    `import { tool } from 'ai';
import { z } from 'zod';
export const tools = {
  forecast: tool({
    description: 'The forecast for a city',
    inputSchema: z.object({ city: z.string(), days: z.number().int().min(1).max(7).default(1) }),
    async *execute({ city, days }, { experimental_context, messages, toolCallId }) {
      yield { status: 'loading' };
      yield { city, days, summary: 'sunny', user: experimental_context.user, messages: messages.length, toolCallId };
    },
  }),
};
`,
  );
  fs.writeFileSync(path.join(dir, 'tools', 'broken.mjs'), `throw new Error('cannot reach the license server');\nexport const tools = [];\n`);
  // 40 tools, more than a turn loads up front: plain objects of the defineTool shape, no imports.
  fs.writeFileSync(
    path.join(dir, 'tools', 'many.cjs'),
    `exports.tools = Array.from({ length: 40 }, (_, i) => ({
  name: 'tool_' + i,
  description: 'Tool number ' + i,
  inputSchema: { type: 'object', properties: {} },
  execute: () => 'ran tool ' + i,
}));
`,
  );
  return dir;
}

beforeAll(async () => {
  const project = writeProject();
  stub = await startStubModel({
    scenarios: {
      modules: {
        steps: [
          {
            content: [
              { type: 'tool_use', id: 'toolu_forecast', name: 'weather__forecast', input: { city: 'Oslo' } },
              { type: 'tool_use', id: 'toolu_lookup', name: 'crm__lookup', input: { id: '42' } },
            ],
          },
          { content: [{ type: 'text', text: 'done' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: '{{toolResults}}' }] },
      },
      // Claude searches the deferred tools, and calls the one it found in the same reply.
      deferred: {
        steps: [
          {
            content: [
              { type: 'server_tool_use', name: 'tool_search_tool_regex', input: { pattern: 'tool_37' } },
              { type: 'tool_search_tool_result', content: { type: 'tool_search_tool_search_result', tool_references: [{ type: 'tool_reference', tool_name: 'many__tool_37' }] } },
              { type: 'tool_use', id: 'toolu_37', name: 'many__tool_37', input: {} },
            ],
          },
          { content: [{ type: 'text', text: 'done' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'found: {{toolResults}}' }] },
      },
    },
  });
  const configDir = path.join(project, 'config');
  fs.mkdirSync(configDir);
  worker = await startWorkerProcess({
    // Paths are relative to the config file; the worker runs elsewhere.
    config: {
      mcpServers: {},
      toolModules: { crm: '../tools/crm.mjs', weather: { module: '../tools/weather.mjs', timeoutMs: 5000 }, broken: '../tools/broken.mjs', many: '../tools/many.cjs' },
    },
    configDir,
    taskQueue,
    stubUrl: stub.url,
    env: { CRM_TOKEN },
    onStderr: (t) => (stderr += t),
  });
  client = await testClient();
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await client?.connection.close();
  await stub?.close();
});

it('loads a defineTool module and an AI SDK tool() module unchanged; a module that fails is one line and the other tools stay; the worker credential never reaches history', async () => {
  const brokenLines = stderr.split('\n').filter((l) => l.includes('broken'));
  expect(brokenLines).toEqual([expect.stringMatching(/tool module broken: module .*tools\/broken\.mjs did not load: cannot reach the license server/)]);

  const workflowId = `modules-${Date.now()}`;
  const result = await executeChatTurn(
    client,
    { question: 'forecast and customer', model: 'modules', servers: ['crm', 'weather', 'broken'], context: { tenant: 'acme', user: 'alice' } },
    { taskQueue, workflowId },
  );
  expect(result.toolCalls).toEqual([
    expect.objectContaining({ name: 'weather__forecast', server: 'weather', tool: 'forecast', isError: false }),
    expect.objectContaining({ name: 'crm__lookup', server: 'crm', tool: 'lookup', isError: false }),
  ]);
  const answer = result.response.conversation;
  // The generator's last value, its zod default applied, the context as experimental_context, no conversation in messages.
  expect(answer).toContain('"city":"Oslo","days":1,"summary":"sunny","user":"alice","messages":0,"toolCallId":"toolu_forecast"');
  expect(answer).not.toContain('loading');
  expect(answer).toContain('"tenant":"acme","auth":"Bearer [redacted]"');
  expect(result.unavailableServers).toEqual([{ server: 'broken', reason: expect.stringMatching(/^module .*broken\.mjs did not load: cannot reach the license server$/) }]);

  const history = JSON.stringify(await rawHistoryEvents(client, workflowId));
  expect(history).not.toContain(CRM_TOKEN);
  expect(history).not.toContain(Buffer.from(CRM_TOKEN).toString('base64'));
  expect(stderr).not.toContain(CRM_TOKEN);
});

it('runs `mcp-turns run --max-tools 5` with 40 tools: the rest go deferred with a tool search, and Claude calls one it found', async () => {
  const run = await runCli(['run', 'find tool 37', '--model', 'deferred', '--server', 'many', '--max-tools', '5', '--json', '--address', process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!, '--task-queue', taskQueue]);
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout) as { response: { conversation: string }; toolCalls: Array<{ name: string; isError: boolean }>; droppedTools: unknown[] };
  expect(result.toolCalls).toEqual([expect.objectContaining({ name: 'many__tool_37', isError: false })]);
  expect(result.response.conversation).toBe('found: ran tool 37');
  expect(result.droppedTools).toEqual([]);
  const [first, , formatter] = stub.requests.filter((r) => r.body?.model === 'deferred');
  const tools = first!.body!.tools as Array<{ name: string; type?: string; defer_loading?: boolean }>;
  expect(tools.filter((t) => !t.type && !t.defer_loading)).toHaveLength(5);
  expect(tools.filter((t) => t.defer_loading)).toHaveLength(35);
  expect(tools.at(-1)).toMatchObject({ type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' });
  // The formatter is sent the search tool and the deferred tool its transcript references.
  expect((formatter!.body!.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['many__tool_37', 'tool_search_tool_regex', 'response_formatter']);
});
