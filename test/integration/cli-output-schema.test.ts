/**
 * `--output-schema` and the request-control flags, run as a user runs them against a worker process
 * and the stub: `run` prints the typed answer as JSON and its flags reach the requests; a 50-line
 * `batch` writes one object per results line; `--temperature` is refused with exit 2 before a
 * workflow exists (the address given refuses connections, so nothing could have started).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { startStubModel, type StubModel } from '../../src/stub';
import { LEGACY_SAMPLING_MESSAGE } from '../../src/core/request-controls';
import { runCli } from '../support/cli';
import { REFUSING_PORT } from '../support/ports';
import { everythingStdio } from '../support/mcp-servers';
import { uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(180_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const taskQueue = uniqueQueue('cli-output');
const common = ['--task-queue', taskQueue, '--address', address];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-output-'));

const SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    forecast: { type: 'array', items: { type: 'object', properties: { day: { type: 'string' }, high: { type: 'number' }, sky: { type: 'object', properties: { cover: { type: 'string', enum: ['clear', 'cloudy'] } }, required: ['cover'] } }, required: ['day', 'high', 'sky'] } },
  },
  required: ['city', 'forecast'],
};
const FORECAST = { city: 'Oslo', forecast: [{ day: 'Mon', high: 4.5, sky: { cover: 'clear' } }, { day: 'Tue', high: 2, sky: { cover: 'cloudy' } }] };

let stub: StubModel;
let worker: ChildProcess;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      'claude-sonnet-4-6-cli': {
        steps: [
          { content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', name: 'everything__echo', input: { message: 'weather' } }] },
          { content: [{ type: 'text', text: 'Cold. ### nothing after this' }] },
        ],
        output: FORECAST,
      },
      'claude-sonnet-4-6-batch': { steps: [{ content: [{ type: 'text', text: 'line {{question}}' }] }], output: { city: '{{question}}', forecast: [] } },
    },
  });
  worker = await startWorkerProcess({ config: { mcp_servers: { everything: everythingStdio() } }, taskQueue, stubUrl: stub.url });
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await stub?.close();
});

const schemaFile = path.join(dir, 'forecast.schema.json');
fs.writeFileSync(schemaFile, JSON.stringify(SCHEMA));

it('run --output-schema prints the answer as JSON; --effort, --stop-sequence and --tool-choice reach the requests', async () => {
  const model = 'claude-sonnet-4-6-cli';
  const run = await runCli(['run', 'weather in Oslo', '--model', model, '--output-schema', schemaFile, '--effort', 'low', '--stop-sequence', '###', '--tool-choice', 'any', ...common]);
  // The loop stopped at the stop sequence: an answer that may be cut is a partial one (exit 3).
  expect(run.stderr).toContain('stopped at the stop sequence "###"');
  expect(run.code).toBe(3);
  expect(JSON.parse(run.stdout)).toEqual(FORECAST);

  const requests = stub.requests.filter((r) => r.scenario === model && r.status === 200);
  expect(requests).toHaveLength(3);
  expect(requests.map((r) => r.body.output_config?.effort)).toEqual(['low', 'low', 'low']);
  expect(requests.map((r) => r.body.stop_sequences)).toEqual([['###'], ['###'], undefined]);
  expect(requests.map((r) => r.body.tool_choice?.type)).toEqual(['any', undefined, 'none']);
  expect(requests[2]!.body.output_config.format.type).toBe('json_schema');
});

it('refuses --temperature with exit 2 before a workflow exists', async () => {
  const run = await runCli(['run', 'q', '--temperature', '0.3', '--task-queue', taskQueue, '--address', `127.0.0.1:${REFUSING_PORT}`]);
  expect(run.code).toBe(2);
  expect(run.stderr.trim()).toBe(`mcp-turns: --temperature: ${LEGACY_SAMPLING_MESSAGE}`);
  expect(run.stdout).toBe('');
});

it('a 50-line batch with --output-schema writes one object per results line', async () => {
  const input = path.join(dir, 'cities.jsonl');
  const out = path.join(dir, 'cities.results.jsonl');
  fs.writeFileSync(input, Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `c${i + 1}`, question: `city-${i + 1}`, servers: [] })).join('\n') + '\n');
  const run = await runCli(['batch', input, '--model', 'claude-sonnet-4-6-batch', '--output-schema', schemaFile, '--concurrency', '10', '--out', out, '--name', `cities-${Date.now().toString(36)}`, ...common], { timeoutMs: 150_000 });
  expect(run.code).toBe(0);
  const lines = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; output?: unknown });
  expect(lines).toHaveLength(50);
  const byId = new Map(lines.map((l) => [l.id, l.output]));
  for (let i = 1; i <= 50; i++) expect(byId.get(`c${i}`)).toEqual({ city: `city-${i}`, forecast: [] });
});
