/**
 * `mcp-turns run` and `mcp-turns show`, run as a user runs them, against a worker process with the
 * everything MCP server: the question from an argument, stdin or a file; the flags that shape the
 * turn's tools (--max-tools, --allow, --deny, --require-approval); each exit code; an --id in use;
 * a failing Claude call's line while it is retried.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { CONTEXT_WINDOW_ANSWER } from '../../src/core/prompts';
import { BIN, runCli } from '../support/cli';
import { REFUSING_PORT } from '../support/ports';
import { everythingStdio } from '../support/mcp-servers';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const taskQueue = uniqueQueue('cli');
const common = ['--task-queue', taskQueue, '--address', address];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-run-'));
const plain = { steps: [{ content: [{ type: 'text' as const, text: 'plain answer' }] }] };
let stub: StubModel;
let worker: ChildProcess;
let client: Client;
const children: ChildProcess[] = [];

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
      // One scenario per tools flag, to find its requests.
      asked: plain,
      limited: plain,
      chosen: plain,
    },
  });
  worker = await startWorkerProcess({ config: { mcp_servers: { everything: everythingStdio() } }, taskQueue, stubUrl: stub.url });
  client = await testClient();
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  worker?.kill('SIGTERM');
  await client?.connection.close();
  await stub?.close();
});

/** `mcp-turns run …` started in the background, stdin a pipe (no terminal). */
function startRun(args: string[], env: NodeJS.ProcessEnv = {}, command = 'run') {
  const child = spawn(process.execPath, [BIN, command, ...args], { env: { ...process.env, ...env } });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** @param seen what the process printed so far, quoted in the timeout's message. */
async function until<T>(what: string, value: () => T | undefined, timeoutMs = 30_000, seen?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = value();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${seen ? `; printed so far:\n${seen()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The names of the tools the stub was offered in scenario `scenario`'s first request. */
const offered = (scenario: string): string[] =>
  stub.requests.find((r) => r.scenario === scenario && r.kind === 'step')!.body.tools.map((t: { name: string }) => t.name);

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
  expect(show.stdout).toContain(`Turn ${id} · completed`);
  expect(show.stdout).toContain('Question: echo something');
  expect(show.stdout).toMatch(/step 1 · everything__echo \{"message":"from the cli"\} · ok · \d+ ms/);
  expect(show.stdout).toContain('The tool said: Echo: from the cli');
  expect(show.stdout).toMatch(/Stop reason: completed · steps 2 · model cli · formatter forced/);
  expect(show.stdout).toMatch(/Tokens: \d+ in, \d+ out/);
  const json = JSON.parse((await runCli(['show', id, '--json', ...common.slice(2)])).stdout);
  expect(json).toMatchObject({ workflowId: id, status: 'completed', question: 'echo something' });
});

it('a partial answer exits 3: the context window (one line, then its stop reason), or --max-steps', async () => {
  const [run, budget] = await Promise.all([
    runCli(['run', 'too much', '--model', 'full', ...common]),
    runCli(['run', 'wants a tool', '--model', 'cli', '--max-steps', '1', '--json', ...common]),
  ]);
  expect(run.code).toBe(3);
  const lines = run.stdout.split('\n');
  expect(lines[0]).toBe(CONTEXT_WINDOW_ANSWER);
  expect(lines[1]).toBe('');
  expect(run.stdout).toMatch(/^Stop reason: context_window · steps 1 · model full$/m);
  expect(budget.code).toBe(3);
  expect(JSON.parse(budget.stdout)).toMatchObject({ stopReason: 'max_steps', steps: 1 });
});

it('the question from stdin (`-`) or --file; an empty one is one line, exit 2', async () => {
  const asked = (text: string) => stub.requests.some((r) => r.scenario === 'asked' && JSON.stringify(r.body.messages[0]).includes(text));
  const [file, blank] = [path.join(dir, 'question.txt'), path.join(dir, 'blank.txt')];
  fs.writeFileSync(file, 'from a file\n');
  fs.writeFileSync(blank, ' \n\n');
  const piped = startRun(['-', '--model', 'asked', '--no-format', '--json', ...common]);
  piped.child.stdin.end('echo\nfrom stdin\n');
  const [fromFile, empty] = await Promise.all([
    runCli(['run', '--file', file, '--model', 'asked', '--no-format', '--json', ...common]),
    runCli(['run', '--file', blank, ...common]),
  ]);
  expect(await piped.exited).toBe(0);
  expect(asked('echo\\nfrom stdin')).toBe(true); // every line of it, as one question
  expect(fromFile.code).toBe(0);
  expect(asked('from a file')).toBe(true);
  expect(empty.code).toBe(2);
  expect(empty.stderr).toBe(`mcp-turns: the question from ${blank} is empty: nothing was started\n`);
});

it('--max-tools shows the tools left out; --allow offers only the tools named, --deny leaves out those named', async () => {
  const id = `limited-${Date.now()}`;
  // --allow names the tools offered, --deny takes some of them back.
  const choose = ['--allow', 'everything__echo', 'everything__get-sum', '--deny', 'everything__get-sum'];
  const [limited, chosen] = await Promise.all([
    runCli(['run', 'how many tools', '--model', 'limited', '--no-format', '--max-tools', '2', '--tool-search', 'off', '--id', id, ...common]),
    runCli(['run', 'only echo', '--model', 'chosen', '--no-format', ...choose, ...common]),
  ]);
  expect(limited.code).toBe(0);
  expect(offered('limited')).toHaveLength(2);
  const { result } = JSON.parse((await runCli(['show', id, '--json', '--address', address])).stdout);
  const over: string[] = result.droppedTools.filter((d: { reason: string }) => d.reason === 'over maxToolsPerRequest (2)').map((d: { name: string }) => d.name);
  expect(over.length).toBeGreaterThan(0);
  expect(limited.stdout).toContain(
    `Tools not offered to Claude: ${over.length} over the limit of 2 per request (${over.join(', ')}; --max-tools ${over.length + 2} offers them, --tool-search auto lets Claude find them)`,
  );

  expect(chosen.code).toBe(0);
  expect(offered('chosen')).toEqual(['everything__echo']);
  expect(chosen.stdout).not.toContain('Tools not offered'); // left out by choice: not news
});

it('--require-approval without a terminal prints how to decide; a denial exits 4; an --id in use, running or ended, is one line, exit 2', async () => {
  const id = `approval-${Date.now()}`;
  const run = startRun(['echo please', '--model', 'cli', '--require-approval', 'everything__echo', '--id', id, ...common]);
  const deny = await until('the printed deny command', () => /^ {2}deny: {4}mcp-turns deny (\S+) (\S+)/m.exec(run.stderr()) ?? undefined);
  expect(deny[1]).toBe(id);

  const running = await runCli(['run', 'again', '--id', id, ...common]);
  expect(running.code).toBe(2);
  expect(running.stderr).toBe(`mcp-turns: turn ${id} is already running: \`mcp-turns watch ${id}\` follows it, or choose another --id\n`);

  const denied = await runCli(['deny', id, '--as', 'alice', '--address', address]);
  expect(denied.code).toBe(0);
  expect(await run.exited).toBe(4);
  expect(run.stdout()).toContain('Stop reason: completed');

  const ended = await runCli(['run', 'again', '--id', id, ...common]);
  expect(ended.code).toBe(2);
  expect(ended.stderr).toMatch(
    new RegExp(`^mcp-turns: turn ${id} has already run \\(completed at [\\d-]+T[\\d:.]+Z\\): \`mcp-turns show ${id}\` prints it, or choose another --id\n$`),
  );
});

it('a failing Claude call is a line on stderr while it is retried (run, then watch); SIGINT leaves the turn running and says how to follow it (exit 130)', async () => {
  const closed = REFUSING_PORT;
  const config = path.join(dir, 'no-servers.json');
  fs.writeFileSync(config, JSON.stringify({ mcp_servers: {} }));
  // No worker polls this queue: the run's own worker calls Claude at a closed port.
  const run = startRun(['unreachable', '--config', config, '--task-queue', uniqueQueue('unreachable'), '--address', address, '--json'], {
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${closed}`,
    ANTHROPIC_API_KEY: 'test',
  });
  await until('a failing call line', () => (/^Claude unreachable: connection refused \(http:\/\/127\.0\.0\.1:\d+\/v1\/messages\), attempt 1, (next in \d+ s|retrying now)$/m.test(run.stderr()) ? true : undefined), 30_000, run.stderr);
  run.child.kill('SIGINT');
  expect(await run.exited).toBe(130);
  // The run's own worker stopped with it: the turn waits for the next worker, and the line says so.
  const turnId =
    /^interrupted: turn (\S+) goes on once a worker runs it \(this command's worker stopped with it: `mcp-turns worker` runs one\); `mcp-turns watch \1` follows it, `mcp-turns cancel \1` stops it$/m.exec(
      run.stderr(),
    )?.[1];
  expect(turnId).toBeDefined();
  const turn = client.workflow.getHandle(turnId!);
  expect((await turn.describe()).status.name).toBe('RUNNING');
  // `watch` says why the turn waits, on stderr: its call's last failed attempt.
  const watch = startRun([turnId!, '--address', address], {}, 'watch');
  await until('the failing call line', () => (/^Claude unreachable: connection refused \(http:\/\/127\.0\.0\.1:\d+\/v1\/messages\), attempt \d+, (next in \d+ s|retrying now)$/m.test(watch.stderr()) ? true : undefined), 30_000, watch.stderr);
  watch.child.kill('SIGINT');
  expect(await watch.exited).toBe(130);
  await turn.terminate('test over');
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
  let shown: { status: string; result?: { response: { conversation: string } } } = { status: 'running' };
  for (let i = 0; i < 40 && shown.status === 'running'; i++) {
    await new Promise((r) => setTimeout(r, 250));
    shown = JSON.parse((await runCli(['show', id, '--json', ...common.slice(2)])).stdout);
  }
  expect(shown.status).toBe('completed');
  expect(shown.result!.response.conversation).toBe('The tool said: Echo: from the cli');
});

it('bad input and failed turns are one clear line with a non-zero exit', async () => {
  const bad = await runCli(['run', 'x', '--max-steps', '0', ...common]);
  expect(bad.code).toBe(2);
  expect(bad.stderr.trim()).toBe('mcp-turns: --max-steps must be a positive integer, got "0"');
  expect(bad.stdout).toBe('');
  const empty = await runCli(['run', '', ...common]);
  expect(empty.code).toBe(2);
  expect(empty.stderr).toBe('mcp-turns: the question is empty: nothing was started\n'); // once
  const unknown = await runCli(['run', 'x', '--max-toolz', '3', ...common]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toBe("error: unknown option '--max-toolz'\n(Did you mean --max-tools?)\n");

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
  expect(shownFailed.stdout).toContain(`Turn ${failedId} · failed`);
  expect(shownFailed.stdout).toContain(`Failed: Claude call failed at step 1: Claude API 400 invalid_request_error: tools.0: bad schema (request-id ${requestId})`);

  const missing = await runCli(['show', 'no-such-turn', ...common.slice(2)]);
  expect(missing.code).toBe(2);
  expect(missing.stdout).toBe('');
  expect(missing.stderr.trim()).toBe('mcp-turns: no workflow no-such-turn in namespace default');
});
