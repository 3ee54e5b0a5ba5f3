/**
 * Encryption at rest, end to end: a dev server of its own (SQLite file, its log kept), a real
 * `mcp-turns worker` process with a keyring and the filesystem store, the counting MCP server, the
 * real Anthropic SDK to the stub, the real CLI and the codec server in Chromium.
 * - Canaries in the question, a tool's result, the answer and a failure's message are nowhere as
 *   bytes: not in the database files, the server's log, the store, nor `show --json` without the
 *   key (a plaintext turn's canary is found in the database, so the scan can see).
 * - The Web UI shows a turn decoded through `mcp-turns codec-server`, stored payloads included.
 * - Rotation: a turn started under k1 finishes under k2 after `keys new` and `keys use`.
 * - A worker without the key logs one line and fails only its workflow tasks; restarted with the
 *   key, the turn completes, no tool call and no Claude call run twice.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { chromium } from 'playwright-core';
import { startChatTurn } from '../../src/client/chat-turn-client';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { approveToolCall } from '../../src/client/approvals';
import { pendingApprovalsQuery } from '../../src/core/workflow-handlers';
import { payloadKeyId } from '../../src/encryption/encryption-codec';
import { addNewKey, loadKeyring } from '../../src/encryption/keyring';
import { payloadToJson } from '../../src/codec-server/codec-server-app';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { createDataConverter } from '../../src/data-converter/data-converter';
import { startStubModel, type StubModel } from '../../src/stub';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server';
import { runCli, startCli } from '../support/cli';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium';
import { payloadsIn, rawHistoryEvents, storageReference } from '../support/history-payloads';
import { countingStdio } from '../support/mcp-servers';
import { freePort } from '../support/ports';
import { uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';
import { testTemporalCli } from '../support/temporal-cli';
import { testSettings } from '../support/settings';

jest.setTimeout(90_000);

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-encryption-')));
const ring = path.join(dir, 'keyring.json');
/** The ring as it was before `keys new`: k1 alone. */
const k1Only = path.join(dir, 'k1-only.json');
const store = path.join(dir, 'store');
const db = path.join(dir, 'temporal.db');
const serverLog = path.join(dir, 'server.log');
const countFile = path.join(dir, 'count.jsonl');
const taskQueue = uniqueQueue('encryption');
const CANARY = { question: 'QUESTION-CANARY-6d1f0a', tool: 'TOOL-CANARY-b37e52', answer: 'ANSWER-CANARY-94c8e1', failure: 'FAILURE-CANARY-5a03d7' };

let server: DevServer;
let stub: StubModel;
let worker: ChildProcess | undefined;
let env: NodeJS.ProcessEnv;
let client: Client;
let plainClient: Client;
let codecPort: number;

/** The worker process with `keyring` (default: the full one); its stderr is kept in `stderr`. */
async function startWorker(keyring = ring): Promise<{ child: ChildProcess; stderr: () => string }> {
  let err = '';
  const child = await startWorkerProcess({
    config: { mcpServers: { counting: countingStdio(countFile) } },
    taskQueue,
    stubUrl: stub.url,
    env: { ...env, MCP_TURNS_KEYRING: keyring },
    onStderr: (text) => (err += text),
  });
  return { child, stderr: () => err };
}

/** Stops the worker process: killed, which is quicker than its graceful shutdown and loses nothing (tasks are retried). */
async function stopWorker(): Promise<void> {
  if (!worker || worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((r) => worker!.once('exit', r));
  worker.kill('SIGKILL');
  await exited;
}

/** Every file under `root`, as bytes. */
function filesUnder(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** For each text, the files (read once each) that hold it as bytes. */
function holding(texts: string[], files: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>(texts.map((t) => [t, []]));
  for (const file of files) {
    const bytes = fs.readFileSync(file);
    for (const t of texts) if (bytes.includes(Buffer.from(t))) found.get(t)!.push(file);
  }
  return found;
}

/** Tool executions the counting server has recorded so far. */
const countedCalls = (): number => (fs.existsSync(countFile) ? fs.readFileSync(countFile, 'utf8').split('\n').filter(Boolean).length : 0);

beforeAll(async () => {
  addNewKey(ring);
  fs.copyFileSync(ring, k1Only);
  const [port, uiPort] = [await freePort(), await freePort()];
  codecPort = await freePort();
  server = await startDevServer({
    cliPath: testTemporalCli().path,
    port,
    uiPort,
    dbFile: db,
    extraArgs: ['--ui-codec-endpoint', `http://127.0.0.1:${codecPort}`],
    onLog: (line) => fs.appendFileSync(serverLog, `${line}\n`),
  });
  stub = await startStubModel({
    scenarios: {
      canary: {
        steps: [
          { content: [{ type: 'text', text: 'Counting.' }, { type: 'tool_use', name: 'counting__count', input: { label: CANARY.tool } }] },
          { content: [{ type: 'text', text: `${CANARY.answer}: {{toolResults}}` }] },
        ],
      },
      // Claude refuses the request with a message that quotes it: the turn fails with that message.
      refused: {
        steps: [{ content: [{ type: 'text', text: 'never sent' }] }],
        faults: [{ step: 0, status: 400, message: `request refused: ${CANARY.failure}` }],
      },
    },
  });
  env = {
    TEMPORAL_ADDRESS: server.address,
    MCP_TURNS_STORAGE: `fs:${store}`,
    MCP_TURNS_KEYRING: ring,
    MCP_TURNS_HOME: path.join(dir, 'home'),
    MCP_TURNS_TASK_QUEUE: taskQueue,
    ANTHROPIC_BASE_URL: stub.url,
    ANTHROPIC_API_KEY: 'test',
  };
  worker = (await startWorker()).child;
  const storage = testSettings({ MCP_TURNS_STORAGE: `fs:${store}`, MCP_TURNS_HOME: env.MCP_TURNS_HOME }).storage.get();
  const connection = await Connection.connect({ address: server.address });
  client = new Client({ connection, ...clientStorageOptions(createDataConverter(storage, { keyringFile: ring, compress: false })) });
  plainClient = new Client({ connection, ...clientStorageOptions(createDataConverter(storage)) });
}, 120_000);

afterAll(async () => {
  await stopWorker();
  await client?.connection.close();
  await stub?.close();
  await server?.stop();
});

/** The raw history's payloads (references not fetched), with the key ids they are under. */
async function keyIdsOf(workflowId: string): Promise<{ payloads: Payload[]; keyIds: Set<string | undefined> }> {
  const payloads = payloadsIn(await rawHistoryEvents(plainClient, workflowId));
  return { payloads, keyIds: new Set(payloads.map((p) => payloadKeyId(p))) };
}

describe('encryption at rest', () => {
  let canaryTurn: string;

  it('keeps question, tool result, answer and failure messages out of the database, the server log, the store and --json without the key', async () => {
    canaryTurn = `canary-${Date.now()}`;
    const run = await runCli(['run', CANARY.question, '--model', 'canary', '--json', '--id', canaryTurn], { env });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const result = JSON.parse(run.stdout) as { response: { conversation: string } };
    expect(result.response.conversation).toBe(`${CANARY.answer}: counted ${CANARY.tool}`);

    // A failed turn: its failure's message, which quotes Claude's refusal, is encrypted too.
    const failedTurn = `refused-${Date.now()}`;
    const refused = await runCli(['run', 'refuse this', '--model', 'refused', '--id', failedTurn], { env });
    expect({ code: refused.code, said: refused.stdout + refused.stderr }).toEqual({ code: 1, said: expect.stringContaining(CANARY.failure) });
    const failedEvent = (await rawHistoryEvents(plainClient, failedTurn)).at(-1)!.workflowExecutionFailedEventAttributes!;
    expect(failedEvent.failure!.message).toBe('Encoded failure');

    // A turn started by a process without the keyring: its question is plaintext, and the scan finds it.
    const plain = await runCli(['run', 'PLAINTEXT-CANARY-0e77', '--model', 'canary', '--json'], { env: { ...env, MCP_TURNS_KEYRING: '' } });
    expect({ code: plain.code, stderr: plain.stderr.trim() }).toEqual({
      code: 1,
      stderr: 'mcp-turns: a payload is encrypted under key k1, and this process has no keyring: set MCP_TURNS_KEYRING to a keyring file holding k1',
    });

    const dbFiles = fs.readdirSync(dir).filter((f) => f.startsWith('temporal.db')).map((f) => path.join(dir, f));
    expect(holding(['PLAINTEXT-CANARY-0e77'], dbFiles).get('PLAINTEXT-CANARY-0e77')!.length).toBeGreaterThan(0);
    const stored = filesUnder(store);
    expect(stored.length).toBeGreaterThan(0);
    const shown = await runCli(['show', canaryTurn, '--json'], { env: { ...env, MCP_TURNS_KEYRING: '' } });
    expect({ code: shown.code, stderr: shown.stderr.trim() }).toEqual({ code: 1, stderr: expect.stringMatching(/^mcp-turns: a payload is encrypted under key k1, and this process has no keyring/) });
    const found = holding(Object.values(CANARY), [...dbFiles, serverLog, ...stored]);
    for (const canary of Object.values(CANARY)) {
      expect(found.get(canary)).toEqual([]);
      expect(shown.stdout + shown.stderr).not.toContain(canary);
    }
    const withKey = await runCli(['show', canaryTurn, '--json'], { env });
    expect({ code: withKey.code, stderr: withKey.stderr }).toEqual({ code: 0, stderr: '' });
    for (const canary of [CANARY.question, CANARY.tool, CANARY.answer]) expect(withKey.stdout).toContain(canary);
  });

  it('shows the turn decoded in the Web UI through the codec server, stored payloads included', async () => {
    const origin = server.uiUrl;
    const codec = await startCli(['codec-server', '--port', String(codecPort), '--ui-origin', origin], /codec server on/, { env });
    try {
      const endpoint = `http://127.0.0.1:${codecPort}`;
      // A stored payload of the turn, as the UI meets it: a reference, decoded to the segment it names.
      const { payloads } = await keyIdsOf(canaryTurn);
      const stored = payloads.find((p) => storageReference(p));
      expect(stored).toBeDefined();
      const decode = (headers: Record<string, string>) =>
        fetch(`${endpoint}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers }, body: JSON.stringify({ payloads: [payloadToJson(stored!)] }) });
      const answer = await decode({ origin });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
      const [decoded] = ((await answer.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> }).payloads;
      expect(Buffer.from(decoded!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
      // The stored segment that carries the turn's tool list.
      expect(JSON.parse(Buffer.from(decoded!.data, 'base64').toString())).toMatchObject({ transcriptSegment: [], tools: expect.arrayContaining([expect.objectContaining({ name: 'counting__count' })]) });
      expect((await decode({ origin: 'http://evil.example' })).status).toBe(403);

      const browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
      try {
        const page = await browser.newPage({ viewport: { width: 1500, height: 1100 } });
        await page.goto(`${origin}/namespaces/default/workflows/${canaryTurn}`, { waitUntil: 'networkidle' });
        await page.getByText(CANARY.question).first().waitFor({ timeout: 30_000 });
        await page.getByText(CANARY.answer).first().waitFor({ timeout: 10_000 });
        await page.getByText('Claude · step 1').first().waitFor({ timeout: 10_000 });
        fs.mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: path.join(ARTIFACTS, 'encryption-codec-server-ui.png') });
        // Step 2's input in the event history: its tool list is a stored segment, fetched and decrypted.
        await page.getByText('Event History').first().click();
        await page.getByText('Claude · step 2').first().click();
        const stored = page.getByText('Counts one call and echoes the label').first();
        await stored.waitFor({ timeout: 15_000 });
        // For the screenshot only: the UI re-renders the event while it polls, and a scroll that lands
        // between two renders waits for an element that is gone; the waitFor above is the check.
        await stored.scrollIntoViewIfNeeded({ timeout: 5_000 }).catch(() => undefined);
        await page.screenshot({ path: path.join(ARTIFACTS, 'encryption-codec-server-ui-stored.png') });
      } finally {
        await browser.close();
      }
      expect(codec.output()).toMatch(/decode: \d+ payload\(s\), 0 unreadable \(namespace default, caller local\)/);
      for (const canary of Object.values(CANARY)) expect(codec.output()).not.toContain(canary);
    } finally {
      codec.child.kill('SIGTERM');
    }
  });

  it('finishes under k2 a turn started under k1, after keys new and keys use', async () => {
    const handle = await startChatTurn(client, { question: 'rotate while I wait', model: 'canary', approval: { tools: ['counting__count'] } }, { taskQueue });
    let waiting = await handle.query(pendingApprovalsQuery);
    for (let i = 0; i < 300 && !waiting.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      waiting = await handle.query(pendingApprovalsQuery);
    }
    const added = await runCli(['keys', 'new', '--keyring', ring], { env });
    expect(added.stdout).toContain('Added key k2');
    expect(loadKeyring(ring).current).toBe('k1');
    const used = await runCli(['keys', 'use', 'k2', '--keyring', ring], { env });
    expect(used.stdout).toContain('Key k2 is current');
    // The worker looks at its keyring file at most every 2 s.
    await new Promise((r) => setTimeout(r, 2500));
    await approveToolCall(client, handle.workflowId, waiting[0]!.callId, { identity: 'rotation test' });
    const result = await handle.result();
    expect(result.response.conversation).toContain(CANARY.answer);
    const { keyIds } = await keyIdsOf(handle.workflowId);
    expect(keyIds.has('k1')).toBe(true);
    expect(keyIds.has('k2')).toBe(true);
  });

  it('fails only the workflow tasks of a worker without the key, which logs one line; restarted with it, the turn completes once', async () => {
    await stopWorker();
    const lacking = await startWorker(k1Only);
    worker = lacking.child;
    const before = countedCalls();
    const requestsBefore = stub.requests.length;
    // A short workflow task timeout: the task the killed worker had taken is given to the next one soon.
    const handle = await client.workflow.start('chatTurn', {
      taskQueue,
      workflowId: `lacking-key-${Date.now()}`,
      args: [{ question: 'under a key the worker lacks', model: 'canary' }],
      workflowTaskTimeout: '2s',
    });
    const line = `a payload is encrypted under key k2, which the keyring ${k1Only} lacks: add k2 to it`;
    for (let i = 0; i < 200 && !lacking.stderr().includes(line); i++) await new Promise((r) => setTimeout(r, 50));
    // Stopped at its first failure: Temporal backs off between later attempts of a workflow task.
    await stopWorker();
    expect(lacking.stderr().split('\n').filter((l) => l.includes(line))).toHaveLength(1);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect(stub.requests.length).toBe(requestsBefore);

    worker = (await startWorker()).child;
    const result = (await handle.result()) as ChatTurnResult;
    expect(result.stopReason).toBe('completed');
    expect(countedCalls() - before).toBe(1);
    // Two steps and the formatter: each Claude call made once.
    expect(stub.requests.length - requestsBefore).toBe(3);
  });
});
