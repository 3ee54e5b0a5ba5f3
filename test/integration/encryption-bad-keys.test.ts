/**
 * Bad keys. A worker whose keyring is missing, malformed or without its current key stops at start
 * with one line naming the file and the field (exit 2), before it connects.
 *
 * What happens to an activity whose input is under a key its worker lacks: the workflow's worker
 * (full keyring) schedules a Claude call encrypted under k2; the Claude queue's worker has only k1.
 * Each attempt fails with the line that names the key (it cannot read its arguments), and is retried
 * under the activity's retry policy; once a worker with k2 polls the queue, the call runs and the
 * turn completes, its Claude calls made once each.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { createClaudeClient } from '../../src/claude/client';
import { resolveClaudeConfig } from '../../src/claude/config';
import { addNewKey, useKey } from '../../src/encryption/keyring';
import { McpPool } from '../../src/mcp';
import { Toolbox } from '../../src/tools/toolbox';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { createDataConverter } from '../../src/data-converter/data-converter';
import { startStubModel, type StubModel } from '../../src/stub';
import { claudeCallActivities, claudeQueueWorkerOptions, payloadWorkerOptions, turnQueueActivities } from '../../src/worker/queue-registrations';
import { quietRuntime, uniqueQueue } from '../support/temporal';
import { runCli } from '../support/cli';
import { testSettings } from '../support/settings';

jest.setTimeout(60_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-activity-key-'));
const ring = path.join(dir, 'keyring.json');
const k1Only = path.join(dir, 'k1-only.json');
const taskQueue = uniqueQueue('activity-key');
const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
/** Where this process's payloads are stored (the run's payload directory). */
const storage = testSettings().storage.get();

let stub: StubModel;
let connection: NativeConnection;
let client: Client;
const running: Array<{ worker: Worker; done: Promise<void> }> = [];

/** The payload options of a worker with `keyring`. */
const payloads = (keyring: string) => payloadWorkerOptions(createDataConverter(storage, { keyringFile: keyring, compress: false }));

/** A worker of the turn queue (workflows, MCP calls) or of its Claude queue, with `keyring`, running. */
async function runWorker(queue: 'turns' | 'claude', keyring: string): Promise<Worker> {
  // A rate cap across the queue keeps the turn's Claude calls on the Claude queue (src/core/task-queues.ts).
  const claudeConfig = resolveClaudeConfig({ rateLimitPerSecond: 1000 });
  const claudeClient = createClaudeClient({ apiKey: 'test', baseURL: stub.url });
  const claude = claudeCallActivities(claudeClient, claudeConfig);
  const worker =
    queue === 'turns'
      ? await Worker.create({
          connection,
          taskQueue,
          workflowBundle: { codePath: process.env.MCP_TURNS_TEST_BUNDLE! },
          activities: turnQueueActivities(new Toolbox(new McpPool([])), claudeConfig, claude),
          ...payloads(keyring),
        })
      : await Worker.create({
          connection,
          ...claudeQueueWorkerOptions(taskQueue, claudeClient, claudeConfig, claude),
          ...payloads(keyring),
        });
  running.push({ worker, done: worker.run() });
  return worker;
}

beforeAll(async () => {
  quietRuntime();
  addNewKey(ring);
  fs.copyFileSync(ring, k1Only);
  addNewKey(ring);
  useKey(ring, 'k2');
  stub = await startStubModel({ scenarios: { plain: { steps: [{ content: [{ type: 'text', text: 'answered' }] }] } } });
  connection = await NativeConnection.connect({ address });
  client = new Client({
    connection: await Connection.connect({ address }),
    ...clientStorageOptions(createDataConverter(storage, { keyringFile: ring, compress: false })),
  });
});

afterAll(async () => {
  for (const { worker, done } of running) {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await done;
  }
  await client?.connection.close();
  await connection?.close();
  await stub?.close();
});

it('stops a worker at start on a missing or malformed keyring, or one without its current key, naming the field', async () => {
  const file = (name: string, content: string): string => {
    fs.writeFileSync(path.join(dir, name), content);
    return path.join(dir, name);
  };
  const missing = path.join(dir, 'nowhere.json');
  const malformed = file('malformed.json', '{"current": "k1", "keys": [{"id": "k1", "key": "c2hvcnQ="}]}');
  const noCurrent = file('no-current.json', JSON.stringify({ current: 'k9', keys: [{ id: 'k1', key: Buffer.alloc(32).toString('base64') }] }));
  const cases: Array<[string, string]> = [
    [missing, `mcp-turns: keyring ${missing} does not exist (mcp-turns keys new --keyring FILE makes one)`],
    [malformed, `mcp-turns: keyring ${malformed}: keys[0] (k1).key must be the base64 of 32 random bytes (mcp-turns keys new makes one)`],
    [noCurrent, `mcp-turns: keyring ${noCurrent}: current names k9, which is not in keys (k1)`],
  ];
  const runs = await Promise.all(
    cases.map(([keyring]) => runCli(['worker', '--task-queue', taskQueue], { env: { MCP_TURNS_KEYRING: keyring, ANTHROPIC_API_KEY: 'test', TEMPORAL_ADDRESS: address } })),
  );
  expect(runs.map((r) => ({ code: r.code, stderr: r.stderr.trim() }))).toEqual(cases.map(([, line]) => ({ code: 2, stderr: line })));
});

it('fails each attempt of a Claude call under k2 on a worker with only k1, and runs it once a worker with k2 polls', async () => {
  await runWorker('turns', ring);
  const lacking = await runWorker('claude', k1Only);
  const handle = await startChatTurn(client, { question: 'under k2', model: 'plain', format: false }, { taskQueue });

  let failure: { attempt: number; message: string } | undefined;
  for (let i = 0; i < 100 && !(failure && failure.attempt >= 2); i++) {
    const [pending] = (await handle.describe()).raw.pendingActivities ?? [];
    // As the server keeps it the message is encrypted ("Encoded failure"); the client decodes it.
    const error = await decodeOptionalFailureToOptionalError(client.options.loadedDataConverter, pending?.lastFailure);
    if (error) failure = { attempt: pending!.attempt ?? 0, message: error.message };
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(failure?.attempt).toBeGreaterThanOrEqual(2);
  expect(failure?.message).toContain(`Failed to parse activity args for activity claude: a payload is encrypted under key k2, which the keyring ${k1Only} lacks`);
  expect(stub.requests).toHaveLength(0);

  lacking.shutdown();
  await running.find((r) => r.worker === lacking)!.done;
  await runWorker('claude', ring);
  const result = await handle.result();
  expect(result.response.conversation).toBe('answered');
  expect(stub.requests).toHaveLength(1);
});
