/**
 * The cost of one message as a conversation grows, and the stall after a worker dies.
 *
 * A conversation of BENCH_MESSAGES (100) messages on a dev server of its own and one `mcp-turns
 * worker` process, payloads in a filesystem store of the run; every turn reads two ~100 KB
 * documents (the document MCP server of test/support) and answers, Claude being the scripted stub
 * with Claude's 200k-token window (older tool results are compacted once the prompt outgrows it).
 * The client sends each message alone and waits for its answer. For messages 1, 10, 50 and 100 it
 * prints: the time to the answer; the history bytes the message added (the conversation's
 * history, all runs, before and after it, plus its turn's whole history, payloads as the server
 * keeps them: references for what was stored); the bytes and objects it added to the store; and
 * the bytes of the Claude requests it made. Flat per message is the target.
 *
 * Then the stall after a SIGKILL of the worker, which is restarted at once:
 *  - during a Claude call: the time from the kill to the retried call reaching Claude, against the
 *    activity's own retry (heartbeat timeout + first retry interval), and the message's total;
 *  - while the conversation is idle: the next message's time to the answer, against an undisturbed one.
 * Every figure is printed with the machine's load (os.loadavg()).
 *
 * BENCH_ENCRYPTION lists the modes to run, one after the other, each on a dev server, store and
 * worker of its own (default `off,on`): `off`, `on` (a keyring: every payload encrypted), `on+compress`
 * (compressed, then encrypted). The stalls are measured in the first mode only.
 *
 *   npm run bench:conversation     (BENCH_MESSAGES=100, BENCH_ENCRYPTION=off,on)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { createDataConverter } from '../src/data-converter/data-converter';
import { addNewKey } from '../src/encryption/keyring';
import type { EncryptionSettings } from '../src/encryption/encryption-settings';
import { formatBytes } from '../src/core/text';
import { startStubModel, type RecordedRequest, type Scenario, type StubModel } from '../src/stub';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { newConversationId, sendMessage } from '../src/client/conversation-client';
import { conversationTurnId, type MessageOutcome } from '../src/core/conversation';
import { rawHistoryEvents, runChain } from '../test/support/history-payloads';
import { storeSize } from './store-size';
import { loadAverages } from './machine-figures';
import { encryptionEnv } from './encryption-env';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testSettings } from '../test/support/settings';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100);
const MODES = (process.env.BENCH_ENCRYPTION ?? 'off,on').split(',').map((m) => m.trim());
type Mode = 'off' | 'on' | 'on+compress';
const CHECKPOINTS = [1, 10, 50, 100].filter((n) => n <= MESSAGES);
const TASK_QUEUE = 'bench-conversation';
/** The Claude activity's heartbeat timeout and first retry interval (workflows/turn-activities.ts). */
const CLAUDE_HEARTBEAT_TIMEOUT_MS = 10_000;
const CLAUDE_FIRST_RETRY_MS = 1_000;
/** The last Claude call of a `slow` turn. */
const SLOW_CALL_MS = 2_000;

const ROOT = path.resolve(__dirname, '..', '..');
const DOCUMENTS = path.join(ROOT, 'test', 'support', 'document-mcp-server.js');
const BIN = path.join(ROOT, 'bin', 'mcp-turns.js');


const chat = (lastLatencyMs = 0): Scenario => ({
  perTurn: true,
  contextWindowTokens: 200_000,
  steps: [
    {
      content: [
        { type: 'text', text: 'Reading both documents.' },
        { type: 'tool_use', name: 'documents__read_document', input: { name: '{{question}} / a' } },
        { type: 'tool_use', name: 'documents__read_document', input: { name: '{{question}} / b' } },
      ],
    },
    { content: [{ type: 'text', text: 'answer to {{question}}' }], latencyMs: lastLatencyMs },
  ],
});

/** Bytes of a workflow's history as the server keeps it, every run. */
async function historyBytes(client: Client, workflowId: string): Promise<number> {
  let total = 0;
  for (const runId of await runChain(client, workflowId)) {
    const events = await rawHistoryEvents(client, workflowId, runId);
    total += temporal.api.history.v1.History.encode({ events }).finish().length;
  }
  return total;
}

/** The question a Claude request asks now (its last user text). */
function currentQuestion(r: RecordedRequest): string | undefined {
  const messages = (r.body?.messages ?? []) as Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    const text = m.content.find((b) => b.type === 'text');
    if (text) return text.text;
    if (!m.content.some((b) => b.type === 'tool_result')) return undefined;
  }
  return undefined;
}

/** How long each workflow task of the workflow's current run waited before it timed out unstarted (on a sticky queue nobody polls). */
async function stickyTimeouts(client: Client, workflowId: string): Promise<number[]> {
  const events = await rawHistoryEvents(client, workflowId);
  const scheduledAt = new Map<string, number>();
  const waits: number[] = [];
  const ms = (t: temporal.api.history.v1.IHistoryEvent['eventTime']): number => Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
  for (const e of events) {
    if (e.workflowTaskScheduledEventAttributes) scheduledAt.set(String(e.eventId), ms(e.eventTime));
    const timedOut = e.workflowTaskTimedOutEventAttributes;
    if (timedOut && timedOut.timeoutType === temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START) {
      waits.push(ms(e.eventTime) - (scheduledAt.get(String(timedOut.scheduledEventId)) ?? ms(e.eventTime)));
    }
  }
  return waits;
}

interface Worker {
  child: ChildProcess;
}

async function startWorker(env: NodeJS.ProcessEnv, config: string): Promise<Worker> {
  const child = spawn(process.execPath, [BIN, 'worker', '--config', config, '--task-queue', TASK_QUEUE, '--log-level', 'ERROR'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('mcp-turns worker on') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
  });
  child.stdout!.resume();
  return { child };
}

async function kill(worker: Worker): Promise<number> {
  const exited = new Promise((r) => worker.child.once('exit', r));
  worker.child.kill('SIGKILL');
  const at = performance.now();
  await exited;
  return at;
}

async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

interface Row {
  message: number;
  latencyMs: number;
  conversationBytes: number;
  turnBytes: number;
  storedBytes: number;
  storedObjects: number;
  claudeRequestBytes: number;
  claudeCalls: number;
  load: string;
}

async function main(): Promise<void> {
  for (const [i, mode] of MODES.entries()) {
    if (!['off', 'on', 'on+compress'].includes(mode)) throw new Error(`BENCH_ENCRYPTION: unknown mode ${mode} (off, on, on+compress)`);
    await conversation(mode as Mode, i === 0);
  }
}

/** The conversation in `mode`; with `stalls`, the stalls after a SIGKILL too. */
async function conversation(mode: Mode, stalls: boolean): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-conversation-bench-'));
  const store = path.join(dir, 'payloads');
  const storage = testSettings({ MCP_TURNS_STORAGE: `fs:${store}` }).storage.get();
  let encryption: EncryptionSettings | undefined;
  if (mode !== 'off') {
    encryption = { keyringFile: path.join(dir, 'keyring.json'), compress: mode === 'on+compress' };
    addNewKey(encryption.keyringFile);
  }
  const server = await startDevServer({ cliPath: testTemporalCli().path, port: await freePort(), uiPort: await freePort() });
  const stub: StubModel = await startStubModel({ scenarios: { chat: chat(), slow: chat(SLOW_CALL_MS) } });
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ mcp_servers: { documents: { type: 'stdio', command: process.execPath, args: [DOCUMENTS] } } }));
  const env = {
    ...encryptionEnv(process.env, encryption),
    MCP_TURNS_STORAGE: `fs:${store}`,
    TEMPORAL_ADDRESS: server.address,
    ANTHROPIC_API_KEY: 'bench',
    ANTHROPIC_BASE_URL: stub.url,
  };
  let worker = await startWorker(env, config);
  const client = new Client({ connection: await Connection.connect({ address: server.address }), ...clientStorageOptions(createDataConverter(storage, encryption)) });
  try {
    const id = newConversationId();
    const question = (i: number): string => `message ${i} of ${id}`;
    const send = (text: string, model = 'chat'): Promise<MessageOutcome> =>
      sendMessage(client, id, text, { options: { model, format: false }, conversation: { taskQueue: TASK_QUEUE } });
    const check = (o: MessageOutcome, text: string): void => {
      if (o.error || o.result?.response.conversation !== `answer to ${text}`) throw new Error(`message "${text}" was not answered: ${o.error ?? o.result?.response.conversation}`);
    };

    const rows: Row[] = [];
    const latencies: number[] = [];
    const t0 = performance.now();
    for (let i = 1; i <= MESSAGES; i++) {
      const measured = CHECKPOINTS.includes(i);
      const before = measured ? { conversation: await historyBytes(client, id).catch(() => 0), store: storeSize(store), requests: stub.requests.length } : undefined;
      if (i === 1 || i % 10 === 0) process.stderr.write(`message ${i} of ${MESSAGES}…\n`);
      const start = performance.now();
      const outcome = await send(question(i));
      const latencyMs = performance.now() - start;
      latencies.push(latencyMs);
      check(outcome, question(i));
      if (before) {
        await new Promise((r) => setTimeout(r, 300)); // a continue-as-new right after the answer is counted with this message
        const after = storeSize(store);
        const calls = stub.requests.slice(before.requests).filter((r) => currentQuestion(r) === question(i));
        rows.push({
          message: i,
          latencyMs,
          conversationBytes: (await historyBytes(client, id)) - before.conversation,
          turnBytes: await historyBytes(client, conversationTurnId(id, i - 1)),
          storedBytes: after.bytes - before.store.bytes,
          storedObjects: after.objects - before.store.objects,
          claudeRequestBytes: calls.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r.body)), 0),
          claudeCalls: calls.length,
          load: loadAverages(),
        });
      }
    }
    const totalS = (performance.now() - t0) / 1000;
    const runs = (await runChain(client, id)).length;

    /** The stalls after a SIGKILL of the worker, which is restarted at once; printed. */
    const measureStalls = async (): Promise<void> => {
      // The stall after a SIGKILL during a Claude call: the worker is restarted at once.
      process.stderr.write('a worker SIGKILLed during a Claude call…\n');
      const undisturbedText = `undisturbed slow ${id}`;
      const u0 = performance.now();
      check(await send(undisturbedText, 'slow'), undisturbedText);
      const undisturbedMs = performance.now() - u0;

      const killedText = `killed during a Claude call ${id}`;
      const k0 = performance.now();
      const killed = send(killedText, 'slow');
      const lastCall = (): RecordedRequest[] => stub.requests.filter((r) => r.scenario === 'slow' && r.step === 1 && currentQuestion(r) === killedText);
      await until(() => lastCall().length === 1);
      const killedAt = await kill(worker);
      worker = await startWorker(env, config);
      const restartedMs = performance.now() - killedAt;
      await until(() => lastCall().length === 2);
      const retriedMs = performance.now() - killedAt;
      check(await killed, killedText);
      const killedTotalMs = performance.now() - k0;
      const answeredAfterRetryMs = performance.now() - killedAt - retriedMs - SLOW_CALL_MS;
      const stallLoad = loadAverages();

      // A SIGKILL while the conversation is idle: the next message, on the restarted worker.
      process.stderr.write('a worker SIGKILLed while the conversation is idle…\n');
      const idleKilledAt = await kill(worker);
      worker = await startWorker(env, config);
      const idleRestartMs = performance.now() - idleKilledAt;
      const afterIdleText = `after an idle kill ${id}`;
      const i0 = performance.now();
      check(await send(afterIdleText), afterIdleText);
      const afterIdleMs = performance.now() - i0;
      const stickyWaits = await stickyTimeouts(client, id);
      const normalText = `normal again ${id}`;
      const n0 = performance.now();
      check(await send(normalText), normalText);
      const normalMs = performance.now() - n0;
      const idleLoad = loadAverages();

      console.log(`\nWorker SIGKILLed during a Claude call (the reply takes ${SLOW_CALL_MS} ms) and restarted at once (ready ${restartedMs.toFixed(0)} ms after the kill)`);
      console.log(
        `  the call reached Claude again ${(retriedMs / 1000).toFixed(1)} s after the kill; the activity's own retry: ` +
          `heartbeat timeout ${CLAUDE_HEARTBEAT_TIMEOUT_MS / 1000} s + first retry ${CLAUDE_FIRST_RETRY_MS / 1000} s = ${((CLAUDE_HEARTBEAT_TIMEOUT_MS + CLAUDE_FIRST_RETRY_MS) / 1000).toFixed(1)} s ` +
          `(beyond it: ${((retriedMs - CLAUDE_HEARTBEAT_TIMEOUT_MS - CLAUDE_FIRST_RETRY_MS) / 1000).toFixed(1)} s)`,
      );
      console.log(
        `  from the retried reply to the answer: ${answeredAfterRetryMs.toFixed(0)} ms; the message took ${(killedTotalMs / 1000).toFixed(1)} s ` +
          `(undisturbed ${(undisturbedMs / 1000).toFixed(1)} s); load ${stallLoad}`,
      );
      console.log(`Worker SIGKILLed while the conversation was idle, restarted at once (ready after ${idleRestartMs.toFixed(0)} ms)`);
      console.log(`  the next message answered in ${(afterIdleMs / 1000).toFixed(1)} s; the one after ${(normalMs / 1000).toFixed(1)} s; load ${idleLoad}`);
      console.log(
        `  workflow tasks of the conversation timed out on the dead worker's sticky queue: ${stickyWaits.length ? stickyWaits.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ') : 'none'}` +
          ' (the worker\'s stickyQueueScheduleToStartTimeout: 3 s in mcp-turns workers, Temporal\'s default 10 s)',
      );
    };
    const sorted = [...latencies].sort((a, b) => a - b);
    const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
    const window = (from: number, to: number): string => {
      const slice = latencies.slice(from - 1, to).sort((a, b) => a - b);
      return slice.length ? `${slice[Math.floor(slice.length / 2)]!.toFixed(0)} ms` : '-';
    };
    console.log(`\nA ${MESSAGES}-message conversation, two ~100 KB tool results a turn (${os.availableParallelism()} cores; store: files; encryption ${mode})`);
    console.log(`  ${MESSAGES} messages answered in ${totalS.toFixed(1)} s; ${runs} conversation runs (continued as new ${runs - 1} times)`);
    console.log(`  time to the answer: p50 ${pct(50).toFixed(0)} ms, p95 ${pct(95).toFixed(0)} ms, max ${pct(100).toFixed(0)} ms; median of messages 1-10 ${window(1, 10)}, 41-50 ${window(41, 50)}, 91-100 ${window(91, 100)}`);
    console.log('  message | to the answer | conversation history added | its turn\'s history | stored (objects) | Claude calls: requests | load 1/5/15');
    for (const r of rows) {
      console.log(
        `  ${String(r.message).padStart(7)} | ${`${r.latencyMs.toFixed(0)} ms`.padStart(13)} | ${formatBytes(r.conversationBytes).padStart(26)} | ` +
          `${formatBytes(r.turnBytes).padStart(17)} | ${`${formatBytes(r.storedBytes)} (${r.storedObjects})`.padStart(16)} | ` +
          `${`${r.claudeCalls}: ${formatBytes(r.claudeRequestBytes)}`.padStart(22)} | ${r.load}`,
      );
    }
    if (stalls) await measureStalls();
  } finally {
    // Also after a failure: no dev server or worker is left running.
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGTERM');
      await new Promise((r) => worker.child.once('exit', r));
    }
    await client.connection.close();
    await stub.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
