/**
 * `mcp-turns batch` as an operator runs it, against a separate worker process and the scripted stub:
 * 200 queries at concurrency 20, the CLI SIGKILLed once 60 results are written, the same command run
 * again to the end, then a third time. The proof that no query ran twice is the stub's own request
 * log (one first-step Claude request per question) and Temporal's count of child turns.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { startStubModel, type StubModel, type RecordedRequest } from '../../src/stub';
import { BIN, runCli } from '../support/cli';
import { everythingStdio } from '../support/mcp-servers';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-batch-'));
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const taskQueue = uniqueQueue('batch');
const QUERIES = 200;
let stub: StubModel;
let worker: ChildProcess;

interface Line {
  id: string;
  status: string;
  answer?: string;
  workflowId: string;
  error?: string;
  stopReason?: string;
  exitCode?: number;
}

function readLines(file: string): Line[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
}

/** Lines so far, tolerating a last line still being written (the CLI appends while we poll). */
function countLines(file: string): number {
  if (!fs.existsSync(file)) return 0;
  return fs.readFileSync(file, 'utf8').split('\n').length - 1;
}

/** The question of a recorded Claude request: its first user message, as text. */
function questionOf(r: RecordedRequest): string {
  const content = r.body.messages[0].content as string | Array<{ type: string; text?: string }>;
  return typeof content === 'string' ? content : content.map((b) => b.text ?? '').join('');
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      batch: {
        // ~50 ms per Claude call, three calls per turn: the batch takes a few seconds, long enough to kill.
        latencyMs: 50,
        steps: [
          { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
          { content: [{ type: 'text', text: 'answered {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'A: {{toolResults}}' }] },
      },
      // Each question's first Claude request fails with a 400 (the counter is per question).
      'fails-once': {
        steps: [{ content: [{ type: 'text', text: 'ok' }] }],
        formatter: { conversation: [{ type: 'text', content: 'second time lucky: {{question}}' }] },
        faults: [{ step: 0, status: 400, times: 1, message: 'flaky upstream' }],
      },
      // Two Claude calls of 1.5 s each (the step, then the formatter): a turn takes ~3 s.
      slow: {
        latencyMs: 1500,
        steps: [{ content: [{ type: 'text', text: 'slow' }] }],
        formatter: { conversation: [{ type: 'text', content: 'slow answer: {{question}}' }] },
      },
      // The same, each question's first Claude call overloaded twice (retried after 1, then 2 s).
      'slow-overloaded': {
        latencyMs: 1500,
        steps: [{ content: [{ type: 'text', text: 'slow' }] }],
        formatter: { conversation: [{ type: 'text', content: 'slow answer: {{question}}' }] },
        faults: [{ step: 0, status: 529, times: 2, message: 'overloaded, try later' }],
      },
      'always-400': {
        steps: [{ content: [{ type: 'text', text: 'never' }] }],
        faults: [{ step: 0, status: 400, times: -1, message: 'always refused' }],
      },
      // Claude refuses: the turn ends with stopReason "refusal", a partial answer (exit code 3 for `run`).
      refuses: {
        steps: [{ content: [{ type: 'text', text: 'I cannot help with that.' }], stopReason: 'refusal' }],
      },
      quick: {
        steps: [{ content: [{ type: 'text', text: 'quick' }] }],
        formatter: { conversation: [{ type: 'text', content: 'quick answer: {{question}}' }] },
      },
    },
  });
  worker = await startWorkerProcess({
    config: { mcp_servers: { everything: everythingStdio() }, claude: { maxConcurrentCalls: 40 } },
    taskQueue,
    stubUrl: stub.url,
  });
});

afterAll(async () => {
  worker?.kill('SIGTERM');
  await stub?.close();
});

it('200 queries: the CLI killed at 60 results, run again to the end; no query runs twice', async () => {
  const input = path.join(dir, 'queries.jsonl');
  const out = path.join(dir, 'results.jsonl');
  const name = `b200-${Date.now().toString(36)}`;
  const rows: string[] = [];
  for (let i = 1; i <= QUERIES; i++) {
    // Odd queries have no id (their id is their line number), even ones name theirs.
    rows.push(
      JSON.stringify(
        i % 2
          ? { question: `q${i}`, model: 'batch' }
          : { id: `item-${i}`, question: `q${i}`, model: 'batch' },
      ),
    );
    if (i === 50) rows.push('{ this is not json'); // line 51
    if (i === 120) rows.push(JSON.stringify({ id: 'no-question', model: 'batch' })); // line 122
  }
  fs.writeFileSync(input, rows.join('\n') + '\n');
  const args = [
    'batch',
    input,
    '--concurrency',
    '20',
    '--out',
    out,
    '--name',
    name,
    '--task-queue',
    taskQueue,
    '--address',
    address,
  ];

  const t0 = Date.now();
  const first = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let firstStderr = '';
  first.stderr.on('data', (d: Buffer) => (firstStderr += d.toString()));
  first.stdout.resume();
  const deadline = Date.now() + 60_000;
  while (countLines(out) < 60) {
    if (Date.now() > deadline || first.exitCode !== null)
      throw new Error(`batch never reached 60 results:\n${firstStderr}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  const atKill = countLines(out);
  // Killed mid-run, not after it ended.
  expect(atKill).toBeLessThan(QUERIES);
  // Both bad lines were reported by number while the rest ran (60 results already exist).
  expect(firstStderr).toMatch(new RegExp(`^${escape(input)}:51: not JSON: .*\\(skipped\\)$`, 'm'));
  expect(firstStderr).toMatch(new RegExp(`^${escape(input)}:122: question: .*\\(skipped\\)$`, 'm'));
  expect(firstStderr).toContain(`batch ${name}: ${QUERIES} queries to run; concurrency 20; results in ${out}\n`);

  const second = await runCli(args, { timeoutMs: 90_000 });
  const firstTwo = Date.now() - t0;
  // Every query answered, but lines 51 and 122 were skipped: exit code 2.
  expect(second.code).toBe(2);
  // The rerun says what it found: every line written before the kill is kept, the rest is run.
  expect(second.stderr).toContain(
    `batch ${name}: ${QUERIES} queries; ${atKill} already completed in ${out} (kept), ${QUERIES - atKill} to run; concurrency 20\n`,
  );
  const results = readLines(out);
  expect(results).toHaveLength(QUERIES);
  expect(new Set(results.map((r) => r.id)).size).toBe(QUERIES);
  expect(results.filter((r) => r.status !== 'completed')).toEqual([]);
  // Ids: the line number for odd queries (shifted by the bad line 51), `item-N` for even ones.
  const byId = new Map(results.map((r) => [r.id, r]));
  expect(byId.get('1')!.answer).toBe('A: Echo: q1');
  expect(byId.get('52')!.answer).toBe('A: Echo: q51');
  expect(byId.get('item-200')!.answer).toBe('A: Echo: q200');
  expect(byId.get('item-2')!.workflowId).toBe(`${name}-item-2`);

  expect(second.stdout).toMatch(
    new RegExp(`^${QUERIES} results in ${escape(out)}: ${QUERIES} answered, 0 failed; 2 lines of ${escape(input)} skipped$`, 'm'),
  );
  expect(second.stdout).toMatch(
    /^tokens: [1-9]\d* in, [1-9]\d* out, \d+ cache read, \d+ cache write · cost \$\d+\.\d{4}$/m,
  );
  expect(second.stdout).toMatch(
    new RegExp(`^turn time \\(${QUERIES} completed turns\\): p50 \\d+\\.\\d\\d s, p95 \\d+\\.\\d\\d s$`, 'm'),
  );
  const [, p50, p95] = /p50 (\S+) s, p95 (\S+) s/.exec(second.stdout)!;
  expect(Number(p50)).toBeGreaterThan(0);
  expect(Number(p95)).toBeGreaterThanOrEqual(Number(p50));

  // Claude saw each question's first step exactly once across both CLI runs: nothing ran twice.
  const firstSteps = new Map<string, number>();
  for (const r of stub.requests) {
    if (r.scenario !== 'batch' || r.kind !== 'step' || r.step !== 0) continue;
    firstSteps.set(questionOf(r), (firstSteps.get(questionOf(r)) ?? 0) + 1);
  }
  expect([...firstSteps.keys()].sort()).toEqual(
    Array.from({ length: QUERIES }, (_, i) => `q${i + 1}`).sort(),
  );
  expect([...firstSteps.entries()].filter(([, n]) => n !== 1)).toEqual([]);
  // And Temporal holds exactly one turn per query (a second run of an id would be a second execution).
  const client = await testClient();
  try {
    const { count } = await client.workflow.count(`WorkflowType = 'chatTurn' AND McpTurnsBatch = '${name}'`);
    expect(count).toBe(QUERIES);
  } finally {
    await client.connection.close();
  }

  // A third run has nothing to run or fetch: it is quick, keeps 200 lines and Claude sees nothing.
  const before = stub.requests.length;
  const t3 = Date.now();
  const third = await runCli(args, { timeoutMs: 30_000 });
  const thirdMs = Date.now() - t3;
  expect(third.code).toBe(2);
  expect(third.stderr).toContain(`${QUERIES} queries; ${QUERIES} already completed in ${out} (kept), 0 to run;`);
  expect(third.stdout).toMatch(new RegExp(`^${QUERIES} results in .*: ${QUERIES} answered, 0 failed; 2 lines of .* skipped$`, 'm'));
  expect(readLines(out)).toHaveLength(QUERIES);
  expect(stub.requests.length).toBe(before);
  expect(thirdMs).toBeLessThan(15_000);
  console.log(
    `batch of ${QUERIES}: killed at ${atKill} results; first two runs ${(firstTwo / 1000).toFixed(1)} s; third run ${(thirdMs / 1000).toFixed(1)} s`,
  );
});

it('a failed query is run again by the next run, and its line is replaced by the new outcome', async () => {
  const input = path.join(dir, 'flaky.jsonl');
  const out = path.join(dir, 'flaky.results.jsonl');
  const name = `flaky-${Date.now().toString(36)}`;
  fs.writeFileSync(
    input,
    ['f1', 'f2', 'f3']
      .map((id) => JSON.stringify({ id, question: `flaky ${id}`, model: 'fails-once' }))
      .join('\n'),
  );
  const args = [
    'batch',
    input,
    '--concurrency',
    '3',
    '--out',
    out,
    '--name',
    name,
    '--task-queue',
    taskQueue,
    '--address',
    address,
  ];

  const first = await runCli(args);
  // Any failed query makes the batch fail, and its last line says how to retry; no turn time of failed turns.
  expect(first.code).toBe(1);
  expect(first.stdout).toMatch(/^3 results in .*: 0 answered, 3 failed$/m);
  expect(first.stdout).toMatch(/^turn time: no completed turn$/m);
  expect(first.stdout.trimEnd().split('\n').pop()).toBe(
    `3 of 3 queries failed: see ${out} (status "failed") — run the same command again to retry them`,
  );
  const failed = readLines(out);
  expect(failed.map((l) => l.status)).toEqual(['failed', 'failed', 'failed']);
  expect(failed[0]!.error).toMatch(/Claude API 400 invalid_request_error: flaky upstream \(request-id req_/);

  const second = await runCli(args);
  expect(second.stderr).toContain(
    `batch ${name}: 3 queries; 0 already completed in ${out} (kept), 3 failed before (run again), 0 to run; concurrency 3\n`,
  );
  expect(second.code).toBe(0);
  const results = readLines(out);
  expect(results.map((l) => l.id).sort()).toEqual(['f1', 'f2', 'f3']);
  expect(results.map((l) => l.status)).toEqual(['completed', 'completed', 'completed']);
  expect(results.find((l) => l.id === 'f2')!.answer).toBe('second time lucky: flaky f2');
  expect(second.stdout).toMatch(/^3 results in .*: 3 answered, 0 failed$/m);
});

it('a rerun after the file was edited, while the earlier batch still runs, reports every line of the new file', async () => {
  const input = path.join(dir, 'edited.jsonl');
  const out = path.join(dir, 'edited.results.jsonl');
  const name = `edited-${Date.now().toString(36)}`;
  const rows = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({ question: `edit q${i + 1}`, model: 'batch' }),
  );
  rows.splice(4, 0, '{ broken'); // line 5
  fs.writeFileSync(input, rows.join('\n'));
  const args = [
    'batch',
    input,
    '--concurrency',
    '5',
    '--out',
    out,
    '--name',
    name,
    '--task-queue',
    taskQueue,
    '--address',
    address,
  ];

  const first = spawn(process.execPath, [BIN, ...args], { stdio: 'ignore' });
  const deadline = Date.now() + 60_000;
  while (countLines(out) < 5) {
    if (Date.now() > deadline || first.exitCode !== null) throw new Error('batch never reached 5 results');
    await new Promise((r) => setTimeout(r, 25));
  }
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));

  // The operator fixes line 5 and runs again at once: the batch workflow started with the old list
  // (without item 5) is still running, and the new run attaches to it.
  rows[4] = JSON.stringify({ question: 'edit fixed', model: 'batch' });
  fs.writeFileSync(input, rows.join('\n'));
  const second = await runCli(args, { timeoutMs: 90_000 });
  expect(second.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(second.code).toBe(0);
  const results = readLines(out);
  expect(results).toHaveLength(41);
  expect(new Set(results.map((r) => r.id)).size).toBe(41);
  expect(results.filter((r) => r.status !== 'completed')).toEqual([]);
  expect(results.find((r) => r.id === '5')!.answer).toBe('A: Echo: edit fixed');
  expect(results.find((r) => r.id === '6')!.answer).toBe('A: Echo: edit q5');
  const firstSteps = stub.requests.filter(
    (r) => r.kind === 'step' && r.step === 0 && questionOf(r).startsWith('edit '),
  );
  expect(firstSteps).toHaveLength(41);
  expect(new Set(firstSteps.map(questionOf)).size).toBe(41);
});

it('a results file that cannot be written ends the CLI with one line, not a stack trace', async () => {
  const input = path.join(dir, 'unwritable.jsonl');
  const out = path.join(dir, 'unwritable.results.jsonl');
  const name = `unwritable-${Date.now().toString(36)}`;
  fs.writeFileSync(
    input,
    Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({ question: `unwritable ${i}`, model: 'batch' }),
    ).join('\n'),
  );
  const child = spawn(
    process.execPath,
    [
      BIN,
      'batch',
      input,
      '--concurrency',
      '2',
      '--out',
      out,
      '--name',
      name,
      '--task-queue',
      taskQueue,
      '--address',
      address,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const deadline = Date.now() + 60_000;
  while (countLines(out) < 2) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`batch never reached 2 results:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  // The next append fails (EISDIR).
  fs.rmSync(out);
  fs.mkdirSync(out);
  expect(await exited).toBe(1);
  const lines = stderr.trim().split('\n');
  expect(lines[lines.length - 1]).toMatch(
    new RegExp(`^mcp-turns: EISDIR: illegal operation on a directory, open '${escape(out)}'$`),
  );
  expect(stderr).not.toMatch(/\n\s+at /);
});

/** Runs the CLI to its end, noting when each stderr line came (ms since the start). */
function runTimed(args: string[]): Promise<{ code: number | null; stdout: string; stderr: Array<{ at: number; line: string }>; ms: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let partial = '';
  const stderr: Array<{ at: number; line: string }> = [];
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop()!;
    for (const line of parts) stderr.push({ at: Date.now() - t0, line });
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - t0 })));
}

it('without a terminal, a slow batch prints progress at least every 10 s; one failed query fails it; a rerun says what is done and runs the failed one again', async () => {
  const input = path.join(dir, 'slow.jsonl');
  const out = path.join(dir, 'slow.results.jsonl');
  const name = `slow-${Date.now().toString(36)}`;
  const rows = ['s1', 's2', 'bad', 's3', 's4', 's5'].map((id) =>
    JSON.stringify({ id, question: `slow ${id}`, model: { bad: 'always-400', s1: 'slow-overloaded' }[id] ?? 'slow' }),
  );
  fs.writeFileSync(input, rows.join('\n'));
  const args = ['batch', input, '--concurrency', '2', '--out', out, '--name', name, '--task-queue', taskQueue, '--address', address];

  // Two at a time, ~3 s a turn (s1's ~10 s), about 12 s.
  const first = await runTimed(args);
  const lines = first.stderr.map((l) => l.line);
  const start = lines.indexOf(`batch ${name}: 6 queries to run; concurrency 2; results in ${out}`);
  expect(start).toBeGreaterThanOrEqual(0);
  const progress = lines.filter((l) => /^batch \S+: \d\/6 done · [01] failed · [0-2] running · \d+\.\d\/s( · ETA .+)?$/.test(l));
  expect(progress.length).toBeGreaterThanOrEqual(1);
  // From the start line to the exit, never more than 10 s without a line.
  const times = [...first.stderr.slice(start).map((l) => l.at), first.ms];
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  expect(Math.max(...gaps)).toBeLessThanOrEqual(10_000);
  // The running turn whose Claude call fails says why and which attempt, prefixed with its query id.
  expect(lines).toContainEqual(expect.stringMatching(/^s1: Claude call failing: 529 overloaded_error: overloaded, try later.*, attempt [12], (next in \d+ s|retrying now)$/));

  expect(first.code).toBe(1);
  expect(first.stdout).toMatch(/^6 results in .*: 5 answered, 1 failed$/m);
  // The failed turn is not in the turn time.
  expect(first.stdout).toMatch(/^turn time \(5 completed turns\): p50 [1-9]\.\d\d s, p95 \d+\.\d\d s$/m);
  expect(first.stdout.trimEnd().split('\n').pop()).toBe(
    `1 of 6 queries failed: see ${out} (status "failed") — run the same command again to retry them`,
  );
  expect(readLines(out).find((l) => l.id === 'bad')!.error).toMatch(/Claude API 400 invalid_request_error: always refused/);

  const second = await runTimed(args);
  expect(second.stderr.map((l) => l.line)).toContain(
    `batch ${name}: 6 queries; 5 already completed in ${out} (kept), 1 failed before (run again), 0 to run; concurrency 2`,
  );
  expect(second.code).toBe(1);
  expect(second.stdout).toMatch(/^6 results in .*: 5 answered, 1 failed$/m);
  // The failed query really ran again (Claude saw it twice), the completed ones did not.
  const asked = (q: string): number => stub.requests.filter((r) => r.kind === 'step' && questionOf(r) === q).length;
  expect(asked('slow bad')).toBe(2);
  expect(asked('slow s2')).toBe(1);
  console.log(
    `slow batch: ${(first.ms / 1000).toFixed(1)} s, gaps ${gaps.map((g) => (g / 1000).toFixed(1)).join(' ')} s; rerun ${(second.ms / 1000).toFixed(1)} s`,
  );
});

/** The batch command's arguments for this test's worker. */
const batchArgs = (input: string, ...more: string[]): string[] => ['batch', input, ...more, '--task-queue', taskQueue, '--address', address];

it('skipped lines are counted in the summary and make the exit code 2', async () => {
  const input = path.join(dir, 'mostly-bad.jsonl');
  const name = `mostly-bad-${Date.now().toString(36)}`;
  const rows = ['{ not json', JSON.stringify({ question: 'the good one', model: 'quick' }), '{"question": 5}', 'nope', JSON.stringify({ id: 'x' })];
  fs.writeFileSync(input, rows.join('\n') + '\n');
  const out = path.join(dir, 'mostly-bad.results.jsonl');

  const run = await runCli(batchArgs(input, '--name', name, '--out', out));
  expect(run.stderr.match(/\(skipped\)$/gm)).toHaveLength(4);
  expect(run.stdout).toMatch(new RegExp(`^1 result in ${escape(out)}: 1 answered, 0 failed; 4 lines of ${escape(input)} skipped$`, 'm'));
  expect(run.stdout.trimEnd().split('\n').pop()).toBe(
    `4 lines of ${input} skipped (reported above by line number): fix them and run the same command again to run them`,
  );
  expect(run.code).toBe(2);
  expect(readLines(out).map((l) => [l.id, l.status, l.exitCode])).toEqual([['2', 'completed', 0]]);
});

it('a refused query is a partial answer: counted as such, in the results file and the exit code, as for `run`', async () => {
  const input = path.join(dir, 'refused.jsonl');
  const out = path.join(dir, 'refused.results.jsonl');
  const name = `refused-${Date.now().toString(36)}`;
  const rows = Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: `r${i + 1}`, question: `refused ${i + 1}`, model: i === 3 ? 'refuses' : 'quick' }));
  fs.writeFileSync(input, rows.join('\n'));

  const batch = await runTimed(batchArgs(input, '--concurrency', '5', '--name', name, '--out', out));
  expect(batch.stdout).toMatch(new RegExp(`^10 results in ${escape(out)}: 9 answered, 1 partial \\(refusal\\), 0 failed$`, 'm'));
  expect(batch.code).toBe(3);
  const refused = readLines(out).find((l) => l.id === 'r4')!;
  expect(refused).toMatchObject({ status: 'completed', stopReason: 'refusal', exitCode: 3 });
  expect(readLines(out).filter((l) => l.exitCode === 0)).toHaveLength(9);
  // The last progress line says what the results file says.
  const progress = batch.stderr.map((l) => l.line).filter((l) => l.startsWith(`batch ${name}: `) && l.includes(' done · '));
  expect(progress[progress.length - 1]).toMatch(/ 10\/10 done · 1 partial · 0 failed · /);

  // `run` of the same query exits 3 too.
  const single = await runCli(['run', 'refused 4', '--model', 'refuses', '--task-queue', taskQueue, '--address', address]);
  expect(single.code).toBe(3);

  // A rerun keeps the partial answer (its turn completed) and exits the same.
  const again = await runCli(batchArgs(input, '--concurrency', '5', '--name', name, '--out', out));
  expect(again.stdout).toMatch(/^10 results in .*: 9 answered, 1 partial \(refusal\), 0 failed$/m);
  expect(again.code).toBe(3);
});

it('batches of different --name over one file get results files of their own', async () => {
  const input = path.join(dir, 'named.jsonl');
  fs.writeFileSync(input, ['n1', 'n2'].map((id) => JSON.stringify({ id, question: `named ${id}`, model: 'quick' })).join('\n'));
  const stamp = Date.now().toString(36);
  const [a, b] = [`alpha-${stamp}`, `beta-${stamp}`];

  const first = await runCli(batchArgs(input, '--name', a));
  expect(first.code).toBe(0);
  const second = await runCli(batchArgs(input, '--name', b));
  expect(second.code).toBe(0);
  const outA = path.join(dir, `named.${a}.results.jsonl`);
  const outB = path.join(dir, `named.${b}.results.jsonl`);
  expect(second.stderr).toContain(`batch ${b}: 2 queries to run; concurrency 10; results in ${outB}\n`);
  expect(readLines(outA).map((l) => l.workflowId).sort()).toEqual([`${a}-n1`, `${a}-n2`]);
  expect(readLines(outB).map((l) => l.workflowId).sort()).toEqual([`${b}-n1`, `${b}-n2`]);
  // Without --name the batch is named after the file, and so is its results file.
  const plain = await runCli(batchArgs(input));
  expect(plain.code).toBe(0);
  expect(readLines(path.join(dir, 'named.results.jsonl')).map((l) => l.workflowId).sort()).toEqual(['named-n1', 'named-n2']);

  // One --out shared by two names is refused: the second batch would report the first one's answers.
  const clash = await runCli(batchArgs(input, '--name', b, '--out', outA));
  expect(clash.code).toBe(2);
  expect(clash.stderr.trim()).toBe(
    `mcp-turns: --out ${outA} holds results of batch ${a}: give batch ${b} its own --out, or --name ${a} to go on with that batch`,
  );
});
