/**
 * Records the histories the replay tests replay (test/replay/histories/<name>.json): turns of the
 * current workflow code with scripted activities, on a Temporal dev server of its own started as the
 * test run starts one. Each history is replayed against the same code before it is written.
 *
 *   npm run record-histories                      # writes test/replay/histories/
 *   npm run record-histories -- --out /tmp/h      # or MCP_TURNS_HISTORIES_DIR=/tmp/h
 *   npm run record-histories -- --only batched-two-round,message-batch-collector
 *                                                 # records all, writes only these
 *
 * Recorded:
 * - `two-round`: two tool rounds (the tools' calls local activities, the Claude calls on the turn's
 *   own queue, as a worker without a queue-wide rate cap runs them), then the answer and the formatter;
 * - `parallel-then-repeat`: one step with two tool calls in parallel (activities of their own), then a repeated call;
 * - `batch-of-two`: a chatBatch of two one-round queries (the batch workflow's history);
 * - `conversation`: a conversation's first run: three messages sent at once, answered in order by
 *   child turns, and a continue-as-new after two turns per run (the third answered first);
 * - `encrypted-two-round`: `two-round` with encryption on, under key k1 of the test keyring
 *   (test/replay/test-keyring.json, a key for tests only): every payload is ciphertext;
 * - `batched-two-round`: `two-round` with `messageBatches: {}`: every Claude call (three steps and
 *   the formatter's) goes through the real collector workflow as one request of its own Message
 *   Batch (the Message Batches activities scripted: test/support/scripted-activities.ts);
 * - `typed-answer`: one tool round forced by `toolChoice: "any"` with the request controls set, then
 *   the answer as a JSON object of the turn's `output` schema;
 * - `input-answered`: a call whose server asks the person a form first (2026-07-28
 *   `input_required`): the turn waits, is answered, and sends the call again with the answer;
 * - `message-batch-collector`: that turn's collector, from its start to its end once idle: it
 *   gathers each request for 200 ms, creates its Message Batch, polls it twice (ended at the
 *   second poll), delivers its result, and ends 5 s after its last work.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { startBatch } from '../../src/client/batch-client';
import { submitMessage } from '../../src/client/conversation-client';
import { conversationTurnId } from '../../src/core/conversation';
import { batchChildId } from '../../src/core/batch';
import { decideUpdate, pendingApprovalsQuery } from '../../src/core/workflow-handlers';
import { SEARCH_ATTRIBUTES } from '../../src/core/search-attributes';
import type { ChatTurnInput } from '../../src/schemas/turn-input';
import { devServerDynamicConfigArgs, devServerEnv } from '../../src/temporal/dev-server-tuning';
import { quietBundlerLogger } from '../../src/worker/workflow-bundle';
import { workflowsPath } from '../../src/worker/workflows-path';
import type { messageBatchCollector } from '../../workflows/message-batch-collector';
import {
  FAST_TOOL_POLICY,
  reply,
  startScriptedTurns,
  text,
  toolUse,
  type ScriptedTool,
  type ScriptedTurns,
  type TurnScript,
} from '../support/scripted-activities';
import { runChain } from '../support/history-payloads';
import { quietRuntime } from '../support/temporal';
import { testDataConverter } from '../support/settings';
import { testTemporalCli } from '../support/temporal-cli';

/** The keyring the encrypted histories were recorded with, and are replayed with (run from the repository's root). */
const TEST_KEYRING = path.resolve('test', 'replay', 'test-keyring.json');

type History = temporal.api.history.v1.IHistory;

const echo: ScriptedTool = {
  server: 'everything',
  name: 'echo',
  result: (args) => `Echo: ${String(args.message)}`,
};
const sum: ScriptedTool = {
  server: 'everything',
  name: 'get-sum',
  result: (args) =>
    `The sum of ${String(args.a)} and ${String(args.b)} is ${Number(args.a) + Number(args.b)}.`,
};
const tools = [echo, sum];
const formatter = { text: 'formatted answer' };

/** `--only a,b`: the histories to write (all are recorded and replayed). */
function onlyNames(argv: string[]): Set<string> | undefined {
  const i = argv.indexOf('--only');
  if (i < 0) return undefined;
  const names = (argv[i + 1] ?? '').split(',').filter(Boolean);
  if (!names.length) throw new Error('--only needs history names, comma-separated');
  return new Set(names);
}

function outputDir(argv: string[]): string {
  const i = argv.indexOf('--out');
  const dir = i >= 0 ? argv[i + 1] : process.env.MCP_TURNS_HISTORIES_DIR;
  if (i >= 0 && !dir) throw new Error('--out needs a directory');
  return path.resolve(dir ?? path.join('test', 'replay', 'histories'));
}

/** A chat turn started by the client (as callers start them), run to its end. */
async function turnHistory(
  turns: ScriptedTurns,
  workflowId: string,
  input: ChatTurnInput,
  script: TurnScript,
): Promise<History> {
  turns.expect(workflowId, script);
  const handle = await startChatTurn(turns.client, input, { taskQueue: turns.taskQueue, workflowId });
  await handle.result();
  return handle.fetchHistory();
}

/** A turn whose first call waits for approval: approved once it waits, then a second denied. */
async function approvalHistory(turns: ScriptedTurns, workflowId: string): Promise<History> {
  const write: ScriptedTool = { server: 'fs', name: 'write_file', result: (args) => `wrote ${String(args.path)}`, approval: {} };
  turns.expect(workflowId, {
    tools: [write, echo],
    claude: [
      reply([text('Writing, and echoing meanwhile.'), toolUse('fs__write_file', { path: '/tmp/a' }), toolUse('everything__echo', { message: 'meanwhile' })]),
      reply([text('Once more.'), toolUse('fs__write_file', { path: '/tmp/b' })]),
      reply([text('One written, one denied.')]),
    ],
    formatter,
  });
  const handle = await startChatTurn(turns.client, { question: 'write two files' }, { taskQueue: turns.taskQueue, workflowId });
  for (const approve of [true, false]) {
    for (;;) {
      const [waiting] = await handle.query(pendingApprovalsQuery);
      if (waiting) {
        await handle.executeUpdate(decideUpdate, { args: [{ approve, callId: waiting.callId, identity: 'recorder', ...(approve ? {} : { reason: 'recorded denial' }) }] });
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  await handle.result();
  return handle.fetchHistory();
}

/** A call whose server asks the person a form first (2026-07-28 `input_required`): answered, then sent again. */
async function inputHistory(turns: ScriptedTurns, workflowId: string): Promise<History> {
  const book: ScriptedTool = {
    server: 'bookings',
    name: 'book_table',
    asks: [{ key: 'details', mode: 'form', message: 'How many guests?', requestedSchema: { type: 'object', properties: { guests: { type: 'integer' } }, required: ['guests'] } }],
    result: (args, answers) => `booked ${String(args.restaurant)}: ${JSON.stringify(answers)}`,
  };
  turns.expect(workflowId, {
    tools: [book],
    claude: [reply([text('Booking.'), toolUse('bookings__book_table', { restaurant: 'Chez Ana' })]), reply([text('Booked.')])],
    formatter,
  });
  const handle = await startChatTurn(turns.client, { question: 'book a table' }, { taskQueue: turns.taskQueue, workflowId });
  for (;;) {
    const [waiting] = await handle.query(pendingApprovalsQuery);
    if (waiting) {
      await handle.executeUpdate(decideUpdate, { args: [{ approve: true, callId: waiting.callId, input: { guests: 4 }, round: 1, identity: 'recorder' }] });
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  await handle.result();
  return handle.fetchHistory();
}

async function batchHistory(turns: ScriptedTurns, name: string): Promise<History> {
  const items = ['first', 'second'].map((id) => ({ id, input: { question: `batch question ${id}` } }));
  for (const { id } of items) {
    turns.expect(batchChildId(name, id), {
      tools,
      claude: [reply([toolUse('everything__echo', { message: id })]), reply([text(`answered ${id}`)])],
      formatter,
    });
  }
  const [shard] = await startBatch(turns.client, { name, items, concurrency: 2, taskQueue: turns.taskQueue });
  if (!shard) throw new Error('the batch started no workflow');
  await shard.handle.result();
  return shard.handle.fetchHistory();
}

async function conversationHistory(turns: ScriptedTurns, id: string): Promise<History> {
  let start!: () => void;
  const started = new Promise<void>((r) => (start = r));
  turns.expect(conversationTurnId(id, 0), { tools, claude: [reply([text('first answer')], { hold: started })], formatter });
  for (const i of [1, 2]) {
    turns.expect(conversationTurnId(id, i), {
      tools,
      claude: [reply([toolUse('everything__echo', { message: `message ${i}` })]), reply([text(`answer ${i}`)])],
      formatter,
    });
  }
  const conversation = { taskQueue: turns.taskQueue, turnsPerRun: 2 };
  const sent = [];
  for (const i of [0, 1, 2]) sent.push(await submitMessage(turns.client, id, `message ${i}`, { messageId: `m${i}`, conversation }));
  start();
  for (const m of sent) await m.outcome();
  // The first run ends by continuing as new once its updates have answered.
  let runs = await runChain(turns.client, id);
  while (runs.length < 2) {
    await new Promise((r) => setTimeout(r, 50));
    runs = await runChain(turns.client, id);
  }
  return turns.client.workflow.getHandle(id, runs[0]).fetchHistory();
}

/** Two tool rounds, then the answer and the formatter. */
function twoRound(turns: ScriptedTurns, workflowId: string): Promise<History> {
  return turnHistory(
    turns,
    workflowId,
    { question: 'echo alpha, then add 2 and 3' },
    {
      tools,
      // The tools a worker has seen answer quickly: their calls run as local activities.
      policies: { everything: { ...FAST_TOOL_POLICY, localTools: ['echo', 'get-sum'] } },
      workerDefaults: { claudeOnTurnQueue: true },
      claude: [
        reply([text('Let me echo first.'), toolUse('everything__echo', { message: 'alpha' })]),
        reply([text('Now the sum.'), toolUse('everything__get-sum', { a: 2, b: 3 })]),
        reply([text('Both done: Echo: alpha; the sum is 5.')]),
      ],
      formatter,
    },
  );
}

/**
 * `two-round` through Message Batches, and its collector's history: the collector ends once idle
 * (after the scripted settings' `idleMs`), and it must have had the turn's four requests in that run.
 */
async function batchedHistories(turns: ScriptedTurns, workflowId: string): Promise<{ turn: History; collector: History }> {
  const records = turns.expect(workflowId, {
    tools,
    claude: [
      reply([text('Let me echo first.'), toolUse('everything__echo', { message: 'alpha' })]),
      reply([text('Now the sum.'), toolUse('everything__get-sum', { a: 2, b: 3 })]),
      reply([text('Both done: Echo: alpha; the sum is 5.')]),
    ],
    formatter,
  });
  const handle = await startChatTurn(
    turns.client,
    { question: 'echo alpha, then add 2 and 3', messageBatches: {} },
    { taskQueue: turns.taskQueue, workflowId },
  );
  await handle.result();
  const model = records.claude[0]?.model;
  if (!model || records.claude.some((r) => !r.customId) || records.formatter.some((r) => !r.customId)) {
    throw new Error(`${workflowId}: its Claude calls did not go through Message Batches`);
  }
  const collector = turns.client.workflow.getHandle<typeof messageBatchCollector>(turns.collectorId(model));
  const totals = await collector.result();
  const requests = records.claude.length + records.formatter.length;
  if (totals.requests !== requests || totals.batches !== requests || totals.succeeded !== requests) {
    throw new Error(`${workflowId}: its collector's run had ${JSON.stringify(totals)}, not its ${requests} requests in batches of one`);
  }
  return { turn: await handle.fetchHistory(), collector: await collector.fetchHistory() };
}

async function record(turns: ScriptedTurns): Promise<Record<string, History>> {
  return {
    'two-round': await twoRound(turns, 'two-round'),
    'parallel-then-repeat': await turnHistory(
      turns,
      'parallel-then-repeat',
      { question: 'echo one and add 40 and 2, at once' },
      {
        tools,
        claude: [
          reply([
            toolUse('everything__echo', { message: 'one' }),
            toolUse('everything__get-sum', { a: 40, b: 2 }),
          ]),
          reply([text('Once more.'), toolUse('everything__echo', { message: 'one' })]),
        ],
        formatter,
      },
    ),
    'typed-answer': await turnHistory(
      turns,
      'typed-answer',
      {
        question: 'the sum of 2 and 3, as JSON',
        output: { schema: { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'] }, name: 'sum' },
        effort: 'low',
        toolChoice: 'any',
        stopSequences: ['###'],
        cache: { ttl: '1h' },
        userId: 'u-replay',
      },
      {
        tools,
        claude: [reply([toolUse('everything__get-sum', { a: 2, b: 3 })]), reply([text('The sum is 5.')])],
        formatter: { output: { sum: 5 } },
      },
    ),
    'approved-then-denied': await approvalHistory(turns, 'approved-then-denied'),
    'input-answered': await inputHistory(turns, 'input-answered'),
    'batch-of-two': await batchHistory(turns, 'replay'),
    conversation: await conversationHistory(turns, 'conversation'),
    ...(await batchedHistories(turns, 'batched-two-round').then(({ turn, collector }) => ({
      'batched-two-round': turn,
      'message-batch-collector': collector,
    }))),
  };
}

async function main(): Promise<void> {
  const out = outputDir(process.argv.slice(2));
  const only = onlyNames(process.argv.slice(2));
  quietRuntime();
  const cli = testTemporalCli((line) => console.log(line));
  // The SDK's core spawns the server with this process's environment: give it the dev server's.
  process.env.GOGC = devServerEnv().GOGC;
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli.path },
      ip: '127.0.0.1',
      searchAttributes: [...SEARCH_ATTRIBUTES],
      log: { format: 'pretty', level: 'error' },
      extraArgs: devServerDynamicConfigArgs(),
    },
  });
  let turns: ScriptedTurns | undefined;
  let encryptedTurns: ScriptedTurns | undefined;
  try {
    const bundle = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietBundlerLogger });
    const bundlePath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-record-')), 'workflows.js');
    fs.writeFileSync(bundlePath, bundle.code);
    // The scripted workers connect where the test run's global setup would point them.
    process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS = env.connection.options.address;
    process.env.MCP_TURNS_TEST_BUNDLE = bundlePath;
    // A batched turn's Message Batches end at their second poll: the collector's history polls again.
    // Its idle time outlasts each request's round trip (about 3 s: the dev server fires timers of
    // under a second after about one), so the collector ends only once the turn is done.
    // Payloads inline: a history holds every payload it replays with (no store beside it).
    process.env.MCP_TURNS_STORAGE = 'none';
    turns = await startScriptedTurns({ messageBatchPolls: 2, messageBatches: { idleMs: 5000 } });
    const histories = await record(turns);
    // Encryption on: the client and the scripted workers take it from the environment.
    process.env.MCP_TURNS_KEYRING = TEST_KEYRING;
    encryptedTurns = await startScriptedTurns();
    histories['encrypted-two-round'] = await twoRound(encryptedTurns, 'encrypted-two-round');
    await replayAll(histories, bundle.code);
    const unknown = [...(only ?? [])].filter((name) => !(name in histories));
    if (unknown.length) throw new Error(`--only: no history ${unknown.join(', ')}; recorded: ${Object.keys(histories).join(', ')}`);
    fs.mkdirSync(out, { recursive: true });
    for (const [name, history] of Object.entries(histories)) {
      if (only && !only.has(name)) continue;
      const file = path.join(out, `${name}.json`);
      fs.writeFileSync(file, historyToJSON(history));
      console.log(`${file}: ${history.events?.length ?? 0} events`);
    }
  } finally {
    await encryptedTurns?.close();
    await turns?.close();
    await env.teardown();
  }
}

/** Every history must replay against the code that recorded it, or none is written. */
async function replayAll(histories: Record<string, History>, code: string): Promise<void> {
  const entries = Object.entries(histories).map(([workflowId, history]) => ({ workflowId, history }));
  // The encrypting converter reads plaintext histories too.
  for await (const r of Worker.runReplayHistories({ workflowBundle: { code }, dataConverter: testDataConverter() }, entries)) {
    if (r.error) throw new Error(`${r.workflowId} does not replay: ${r.error.message}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
