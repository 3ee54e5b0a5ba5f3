/**
 * `mcp-turns worker --metrics`: one Prometheus endpoint with Temporal's worker metrics and
 * mcp-turns' own (tool calls by server/tool/outcome, breaker state, Claude calls and tokens).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { executeChatTurn } from '../../src/client/chat-turn-client';
import { BIN } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { freePort } from '../support/ports';
import { testClient, uniqueQueue } from '../support/temporal';

jest.setTimeout(120_000);

let stub: StubModel;
let client: Client;
let worker: ChildProcess;
let metricsUrl: string;
const taskQueue = uniqueQueue('metrics');

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      metrics: {
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'm' } }, { type: 'tool_use', name: 'dead__echo', input: { message: 'x' } }] },
          { content: [{ type: 'text', text: 'done' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'ok' }] },
      },
    },
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-metrics-'));
  const config = path.join(dir, 'config.json');
  const deadPort = await freePort();
  fs.writeFileSync(
    config,
    JSON.stringify({
      mcp_servers: {
        everything: everythingStdio(),
        // Nothing listens here: its circuit opens after one failure.
        dead: { type: 'streamable-http', url: `http://127.0.0.1:${deadPort}/mcp`, breaker: { failure_threshold: 1 }, retry: { maximum_attempts: 1 } },
      },
    }),
  );
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  worker = spawn(process.execPath, [BIN, 'worker', '--config', config, '--task-queue', taskQueue, '--metrics', `127.0.0.1:${port}`, '--log-level', 'WARN'], {
    env: { ...process.env, TEMPORAL_ADDRESS: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: stub.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => worker.stdout!.on('data', (d: Buffer) => d.toString().includes('metrics on') && resolve()));
  client = await testClient();
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await client?.connection.close();
  await stub?.close();
});

it('serves Temporal and mcp-turns metrics on one endpoint', async () => {
  const result = await executeChatTurn(client, { question: 'metrics please', model: 'metrics' }, { taskQueue });
  // The dead server fails tools/list: the turn goes on without its tools and says so.
  expect(result.toolCalls.map((c) => [c.name, c.isError])).toEqual([
    ['everything__echo', false],
    ['dead__echo', true],
  ]);
  expect(result.unavailableServers.map((u) => u.server)).toEqual(['dead']);
  let body = '';
  for (let i = 0; i < 20 && !body.includes('mcp_turns_claude_tokens'); i++) {
    await new Promise((r) => setTimeout(r, 500));
    body = await (await fetch(metricsUrl)).text();
  }
  expect(body).toMatch(/mcp_turns_tool_calls\{[^}]*outcome="ok"[^}]*server="everything"[^}]*tool="echo"[^}]*\} 1/);
  expect(body).toMatch(/mcp_turns_breaker_transitions\{[^}]*from="closed"[^}]*server="dead"[^}]*to="open"[^}]*\} 1/);
  expect(body).toMatch(/mcp_turns_breaker_state\{[^}]*server="dead"[^}]*\} 2/);
  expect(body).toMatch(/mcp_turns_claude_calls\{[^}]*kind="claude"[^}]*model="metrics"/);
  expect(body).toMatch(/mcp_turns_claude_tokens\{[^}]*type="output"/);
  expect(body).toMatch(/temporal_activity_execution_latency/);
});
