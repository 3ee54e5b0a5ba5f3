/**
 * A turn whose input is over Temporal's payload limit: with storage off the client refuses it with
 * one line that names the payload, its size and the fix (mcp-turns' own check, and the server's
 * refusal when only the interceptor is there); with storage on it starts, and history holds a
 * reference instead of the input.
 */
import { Client, Connection } from '@temporalio/client';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { createDataConverter } from '../../src/data-converter/data-converter';
import { clientStorageOptions } from '../../src/data-converter/client-storage-options';
import { payloadLimitClientInterceptor, PayloadTooLargeError } from '../../src/storage/client-payload-limit';
import type { ChatTurnInput } from '../../src/schemas/turn-input';
import { encodedSize, payloadsIn, rawHistoryEvents, storageReference } from '../support/history-payloads';
import { testClient, uniqueQueue } from '../support/temporal';
import { testSettings } from '../support/settings';

jest.setTimeout(60_000);

const FIX =
  'configure external storage for the client and every worker: MCP_TURNS_STORAGE=fs:DIR (one machine) or MCP_TURNS_STORAGE=s3://BUCKET?endpoint=URL (a cluster)';

/** Ten earlier questions with pasted documents: about 3 MB of history. */
const bigHistory: ChatTurnInput['history'] = Array.from({ length: 10 }, (_, i) => [
  { role: 'user' as const, content: `document ${i}: ${'d'.repeat(300_000)}` },
  { role: 'assistant' as const, content: `summary ${i}` },
]).flat();
const input: ChatTurnInput = { question: 'And the eleventh?', history: bigHistory };

let connection: Connection;
beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS! });
});
afterAll(async () => {
  await connection.close();
});

it('storage off: a 3 MB history is refused before it starts, in one line naming the input, its size and the fix', async () => {
  const none = createDataConverter(testSettings({ MCP_TURNS_STORAGE: 'none' }).storage.get());
  const client = new Client({ connection, ...clientStorageOptions(none) });
  const workflowId = `too-big-${Date.now()}`;
  const refused = await startChatTurn(client, input, { taskQueue: uniqueQueue('nobody'), workflowId }).catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(PayloadTooLargeError);
  expect((refused as Error).message).toBe(`the input of workflow chatTurn ${workflowId} is 2.9 MiB, over Temporal's 2.0 MiB payload limit: ${FIX}`);
  await expect(client.workflow.getHandle(workflowId).describe()).rejects.toThrow(/not found/i);
});

it("no mcp-turns converter at all: the server's Blob data size refusal becomes the same kind of line", async () => {
  const client = new Client({ connection, interceptors: { workflow: [payloadLimitClientInterceptor()] } });
  const workflowId = `too-big-server-${Date.now()}`;
  const refused = await startChatTurn(client, input, { taskQueue: uniqueQueue('nobody'), workflowId }).catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(PayloadTooLargeError);
  expect((refused as Error).message).toBe(
    `the input of workflow chatTurn ${workflowId} is 2.9 MiB, which the server refused as over its payload limit: ${FIX}`,
  );
  expect((refused as Error).message).not.toMatch(/Blob data size|INVALID_ARGUMENT/);
});

it('storage on: the same turn starts, and its history holds a reference to the stored input', async () => {
  const client = await testClient();
  try {
    const handle = await startChatTurn(client, input, { taskQueue: uniqueQueue('nobody') });
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const [started] = await rawHistoryEvents(client, handle.workflowId);
    const inputPayload = started!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(storageReference(inputPayload)?.driverName).toBe('mcp-turns-fs');
    expect(encodedSize(inputPayload)).toBeLessThan(1024);
    expect(payloadsIn(started).every((p) => encodedSize(p) < 256 * 1024)).toBe(true);
    await handle.terminate('test done');
  } finally {
    await client.connection.close();
  }
});
