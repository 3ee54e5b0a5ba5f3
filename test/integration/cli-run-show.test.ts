/** `mcp-turns run` and `mcp-turns show`, run as a user runs them, against a worker process. */
import type { ChildProcess } from 'node:child_process';
import { startStubModel, type StubModel } from '../../src/stub';
import { CONTEXT_WINDOW_ANSWER } from '../../src/core/prompts';
import { runCli } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const taskQueue = uniqueQueue('cli');
const common = ['--task-queue', taskQueue, '--address', address];
let stub: StubModel;
let worker: ChildProcess;

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      cli: {
        steps: [
          { content: [{ type: 'text', text: 'Echoing.' }, { type: 'tool_use', name: 'everything__echo', input: { message: 'from the cli' } }] },
          { content: [{ type: 'text', text: 'done' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'The tool said: {{toolResults}}' }] },
      },
      broken: { steps: [{ content: [{ type: 'text', text: 'x' }] }], faults: [{ step: 0, status: 400, times: -1, message: 'tools.0: bad schema' }] },
      full: { steps: [{ content: [{ type: 'text', text: 'Let me' }], stopReason: 'model_context_window_exceeded' }] },
    },
  });
  worker = await startWorkerProcess({ config: { mcp_servers: { everything: everythingStdio() } }, taskQueue, stubUrl: stub.url });
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await stub?.close();
});

it('run --json prints only the result; show prints the transcript', async () => {
  const id = `cli-${Date.now()}`;
  const run = await runCli(['run', 'echo something', '--model', 'cli', '--id', id, '--json', ...common]);
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout);
  expect(result.stopReason).toBe('completed');
  expect(result.toolCalls.map((c: { name: string }) => c.name)).toEqual(['everything__echo']);
  expect(result.response.conversation).toBe('The tool said: Echo: from the cli');

  const show = await runCli(['show', id, ...common.slice(2)]);
  expect(show.code).toBe(0);
  expect(show.stdout).toContain(`Turn ${id} · COMPLETED`);
  expect(show.stdout).toContain('Question: echo something');
  expect(show.stdout).toMatch(/step 1 · everything__echo \{"message":"from the cli"\} · ok · \d+ ms/);
  expect(show.stdout).toContain('The tool said: Echo: from the cli');
  expect(show.stdout).toMatch(/Stop reason: completed · steps 2 · model cli · formatter forced/);
  expect(show.stdout).toMatch(/Tokens: \d+ in, \d+ out/);
  const json = JSON.parse((await runCli(['show', id, '--json', ...common.slice(2)])).stdout);
  expect(json).toMatchObject({ workflowId: id, status: 'COMPLETED', question: 'echo something' });
});

it('run prints a turn whose conversation no longer fits the context window as one line, then its stop reason', async () => {
  const run = await runCli(['run', 'too much', '--model', 'full', ...common]);
  expect(run.code).toBe(0);
  const lines = run.stdout.split('\n');
  expect(lines[0]).toBe(CONTEXT_WINDOW_ANSWER);
  expect(lines[1]).toBe('');
  expect(run.stdout).toMatch(/^Stop reason: context_window · steps 1 · model full$/m);
});

it('run without --json prints the answer, the tool calls and the UI link; --no-wait returns at once', async () => {
  const run = await runCli(['run', 'readable please', '--model', 'cli', ...common]);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain('The tool said: Echo: from the cli');
  expect(run.stdout).toMatch(/Tool calls \(1\):\n {2}step 1 · everything__echo/);
  expect(run.stdout).toMatch(/Temporal UI: http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows\/turn-/);
  const started = await runCli(['run', 'later', '--model', 'cli', '--no-wait', '--json', ...common]);
  expect(JSON.parse(started.stdout)).toMatchObject({ workflowId: expect.stringMatching(/^turn-/), url: expect.stringContaining('/workflows/turn-') });

  // --no-wait with --id: exactly {workflowId, url}, and the turn it started runs to the end on the worker.
  const id = `later-${Date.now()}`;
  const named = await runCli(['run', 'later, named', '--model', 'cli', '--id', id, '--no-wait', '--json', ...common]);
  expect(named.code).toBe(0);
  const startedJson = JSON.parse(named.stdout);
  expect(Object.keys(startedJson).sort()).toEqual(['url', 'workflowId']);
  expect(startedJson.workflowId).toBe(id);
  expect(startedJson.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/namespaces/default/workflows/${id}$`));
  let shown: { status: string; result?: { response: { conversation: string } } } = { status: 'RUNNING' };
  for (let i = 0; i < 40 && shown.status === 'RUNNING'; i++) {
    await new Promise((r) => setTimeout(r, 250));
    shown = JSON.parse((await runCli(['show', id, '--json', ...common.slice(2)])).stdout);
  }
  expect(shown.status).toBe('COMPLETED');
  expect(shown.result!.response.conversation).toBe('The tool said: Echo: from the cli');
});

it('bad input and failed turns are one clear line with a non-zero exit', async () => {
  const bad = await runCli(['run', 'x', '--max-steps', '0', ...common]);
  expect(bad.code).toBe(2);
  expect(bad.stderr.trim()).toBe('mcp-turns: --max-steps must be a positive integer, got "0"');
  expect(bad.stdout).toBe('');

  const failedId = `broken-${Date.now()}`;
  const failed = await runCli(['run', 'x', '--model', 'broken', '--id', failedId, '--json', ...common]);
  expect(failed.code).toBe(1);
  expect(failed.stdout).toBe('');
  const line = failed.stderr.trim();
  expect(line).toMatch(
    new RegExp(`^mcp-turns: turn ${failedId} failed: Claude call failed at step 1: Claude API 400 invalid_request_error: tools\\.0: bad schema \\(request-id req_stub_\\d+\\); attempt 1$`),
  );
  // show of the failed turn says why, with the same request id.
  const requestId = /req_stub_\d+/.exec(line)![0];
  const shownFailed = await runCli(['show', failedId, ...common.slice(2)]);
  expect(shownFailed.code).toBe(0);
  expect(shownFailed.stdout).toContain(`Turn ${failedId} · FAILED`);
  expect(shownFailed.stdout).toContain(`Failed: Claude call failed at step 1: Claude API 400 invalid_request_error: tools.0: bad schema (request-id ${requestId})`);

  const missing = await runCli(['show', 'no-such-turn', ...common.slice(2)]);
  expect(missing.code).toBe(1);
  expect(missing.stdout).toBe('');
  expect(missing.stderr.trim()).toBe('mcp-turns: no workflow no-such-turn in namespace default');
});
