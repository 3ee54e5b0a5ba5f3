/**
 * OpenTelemetry: one turn is one trace, received over OTLP/HTTP by a receiver in this process. The
 * caller (this test, tracing on through the same environment variable a user sets) starts the turn
 * with `startChatTurn` inside a span of its own; the worker is a real `mcp-turns worker` process
 * with `OTEL_EXPORTER_OTLP_ENDPOINT` set; Claude is the scripted stub reached through the real SDK;
 * the MCP servers are server-everything over stdio and over streamable HTTP. The span tree must
 * link the caller, the workflow, every activity, each Claude request and each MCP request.
 * Tracing off must not load the OpenTelemetry SDK at all.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { trace } from '@opentelemetry/api';
import { Client, Connection } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { startTracing, type Tracing } from '../../src/tracing/start-tracing';
import { tracingSettingsFromEnv } from '../../src/tracing/tracing-settings';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { everythingStdio } from '../support/mcp-servers';
import { startEverythingHttp, stopChild } from './mcp-fixtures';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { startWorkerProcess } from '../support/worker-process';
import { freePort } from '../support/ports';
import { uniqueQueue } from '../support/temporal';
import { testDataConverter } from '../support/settings';

jest.setTimeout(120_000);

const CLIENT_KIND = 3;

let receiver: OtlpReceiver;
let stub: StubModel;
let httpServer: ChildProcess;
let worker: ChildProcess;
let tracing: Tracing;
let client: Client;
let mcpUrl: string;
const taskQueue = uniqueQueue('tracing');

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  stub = await startStubModel({
    scenarios: {
      traced: {
        steps: [
          {
            content: [
              { type: 'tool_use', name: 'local__echo', input: { message: 'over stdio' } },
              { type: 'tool_use', name: 'remote__echo', input: { message: 'over http' } },
            ],
          },
          { content: [{ type: 'text', text: 'both echoed' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'both echoed' }] },
      },
    },
  });
  const port = await freePort();
  httpServer = await startEverythingHttp(port);
  mcpUrl = `http://127.0.0.1:${port}/mcp`;
  worker = await startWorkerProcess({
    config: { mcp_servers: { local: everythingStdio(), remote: { type: 'streamable-http', url: mcpUrl } } },
    taskQueue,
    stubUrl: stub.url,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  tracing = startTracing(tracingSettingsFromEnv('mcp-turns-test-caller', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }))!;
  const connection = await Connection.connect({ address: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection, namespace: 'default', ...clientStorageOptions(testDataConverter()), plugins: [tracing.plugin] });
});

afterAll(async () => {
  if (worker) await stopChild(worker);
  if (httpServer) await stopChild(httpServer);
  await client?.connection.close();
  await tracing?.shutdown();
  await stub?.close();
  await receiver?.close();
});

/** Writes the trace as an indented tree to test-artifacts/otlp-trace.txt, for people to read. */
function writeTree(root: ReceivedSpan, childrenOf: (s: ReceivedSpan) => ReceivedSpan[]): void {
  const lines: string[] = [];
  const walk = (s: ReceivedSpan, depth: number): void => {
    const detail = [s.attributes['mcp_turns.server'], s.attributes['url.full']].filter((d) => d !== undefined).join(' ');
    lines.push(`${'  '.repeat(depth)}${s.name}  [${s.service}]${detail ? `  ${detail}` : ''}`);
    for (const c of childrenOf(s)) walk(c, depth + 1);
  };
  walk(root, 0);
  const dir = path.resolve(__dirname, '..', '..', 'test-artifacts');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'otlp-trace.txt'), `${lines.join('\n')}\n`);
}

/** Stops the worker the way an operator does (SIGTERM): it flushes its spans before it exits. */
async function stopWorker(): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
  worker.kill('SIGTERM');
  return exited;
}

it('traces a turn from startChatTurn through the workflow, every activity and each Claude and MCP request', async () => {
  const tracer = trace.getTracer('mcp-turns-test');
  const { traceId, result } = await tracer.startActiveSpan('caller asks', async (span) => {
    try {
      const handle = await startChatTurn(client, { question: 'echo it both ways', model: 'traced' }, { taskQueue });
      return { traceId: span.spanContext().traceId, result: await handle.result() };
    } finally {
      span.end();
    }
  });
  expect(JSON.stringify(result.response)).toContain('both echoed');
  expect(result.toolCalls.map((c) => [c.name, c.isError])).toEqual([
    ['local__echo', false],
    ['remote__echo', false],
  ]);
  await tracing.shutdown();
  expect(await stopWorker()).toBe(0);

  const spans = receiver.spans.filter((s) => s.traceId === traceId);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const parentOf = (s: ReceivedSpan): ReceivedSpan | undefined => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
  const childrenOf = (s: ReceivedSpan): ReceivedSpan[] => spans.filter((c) => c.parentSpanId === s.spanId);
  const only = (name: string): ReceivedSpan => {
    const found = spans.filter((s) => s.name === name);
    expect(found.map((s) => s.name)).toEqual([name]);
    return found[0]!;
  };
  const isHttp = (s: ReceivedSpan): boolean => s.name === 'POST' && s.kind === CLIENT_KIND && s.scope === '@opentelemetry/instrumentation-undici';

  // One tree: every span but the caller's hangs from a span of the same trace.
  const root = only('caller asks');
  writeTree(root, childrenOf);
  expect(root.parentSpanId).toBeUndefined();
  expect(spans.filter((s) => s !== root && !parentOf(s))).toEqual([]);

  // Caller → start → workflow run, across processes.
  const start = only('StartWorkflow:chatTurn');
  expect(parentOf(start)).toBe(root);
  expect(start.service).toBe('mcp-turns-test-caller');
  const run = only('RunWorkflow:chatTurn');
  expect(parentOf(run)).toBe(start);
  expect(run.service).toBe('mcp-turns-worker');

  // A span per activity, scheduled by the workflow and run by the worker.
  const activityRuns = spans.filter((s) => s.name.startsWith('RunActivity:'));
  expect(activityRuns.map((s) => s.name).sort()).toEqual([
    'RunActivity:callTool',
    'RunActivity:callTool',
    'RunActivity:claude',
    'RunActivity:claude',
    'RunActivity:formatResponse',
    'RunActivity:prepareTurn',
  ]);
  for (const activity of activityRuns) {
    const scheduled = parentOf(activity)!;
    expect(scheduled.name).toBe(activity.name.replace('RunActivity:', 'StartActivity:'));
    expect(parentOf(scheduled)).toBe(run);
    expect(activity.service).toBe('mcp-turns-worker');
  }

  // Each Claude call: the SDK's call span, and under it the HTTP request to the stub.
  for (const activity of activityRuns.filter((s) => s.name === 'RunActivity:claude' || s.name === 'RunActivity:formatResponse')) {
    const calls = childrenOf(activity).filter((s) => s.name === 'anthropic.messages.create');
    expect(calls).toHaveLength(1);
    const requests = childrenOf(calls[0]!).filter(isHttp);
    expect(requests.map((r) => [r.attributes['url.full'], r.attributes['http.response.status_code']])).toEqual([[`${stub.url}/v1/messages`, 200]]);
  }

  // Each tool call: an MCP request span under its activity; over HTTP the POST is its child.
  const toolCalls = spans.filter((s) => s.name === 'tools/call echo');
  expect(toolCalls.map((s) => s.attributes['mcp_turns.server']).sort()).toEqual(['local', 'remote']);
  for (const call of toolCalls) {
    expect(parentOf(call)!.name).toBe('RunActivity:callTool');
    expect(call.kind).toBe(CLIENT_KIND);
    expect(call.statusCode).not.toBe(2);
    expect(call.attributes['gen_ai.tool.name']).toBe('echo');
    expect(call.attributes['mcp.method.name']).toBe('tools/call');
  }
  const stdioCall = toolCalls.find((s) => s.attributes['mcp_turns.server'] === 'local')!;
  expect(stdioCall.attributes['network.transport']).toBe('pipe');
  expect(childrenOf(stdioCall)).toEqual([]);
  const httpCall = toolCalls.find((s) => s.attributes['mcp_turns.server'] === 'remote')!;
  expect(httpCall.attributes['network.transport']).toBe('tcp');
  expect(typeof httpCall.attributes['mcp.session.id']).toBe('string');
  expect(childrenOf(httpCall).filter(isHttp).map((r) => r.attributes['url.full'])).toEqual([mcpUrl]);

  // The turn's tool list: one tools/list per server, in the prepareTurn activity.
  const prepare = only('RunActivity:prepareTurn');
  const lists = childrenOf(prepare).filter((s) => s.name === 'tools/list');
  expect(lists.map((s) => s.attributes['mcp_turns.server']).sort()).toEqual(['local', 'remote']);
});

it('loads no OpenTelemetry SDK when tracing is off', () => {
  const root = path.resolve(__dirname, '..', '..');
  const probe = `
    require('./dist/src/cli/main.js');
    require('./dist/src/worker/turn-worker.js');
    require('./dist/src/mcp/index.js');
    const tracing = require('./dist/src/tracing/start-tracing.js').startTracing(require('./dist/src/config/settings.js').loadSettings({ env: {} }).tracing.get());
    const loaded = Object.keys(require.cache).filter((f) => /@opentelemetry[\\\\/](sdk-|exporter-|instrumentation)|interceptors-opentelemetry|[\\\\/]otel-tracing\\.js$/.test(f));
    console.log(JSON.stringify({ tracing: tracing === undefined ? 'off' : 'on', loaded }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH } })) as {
    tracing: string;
    loaded: string[];
  };
  expect(out).toEqual({ tracing: 'off', loaded: [] });
});
