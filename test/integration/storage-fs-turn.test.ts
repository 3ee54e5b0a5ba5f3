/**
 * A turn with payloads above the threshold, end to end (real dev server, real server-everything,
 * the real Anthropic SDK to the stub), on the filesystem driver the test harness configures: it
 * completes, the history the server keeps has no inline payload at or above the threshold, and every
 * reference in it names an object that is in the payload directory. Transcript segments are stored
 * once and referenced by every later call.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Scenario } from '../../src/stub';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { DEFAULT_STORAGE_THRESHOLD } from '../../src/storage/storage-config';
import { decodeStoredPayload } from '../../src/storage/stored-payload';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';
import { encodedSize, payloadsIn, rawHistoryEvents, storageReference } from '../support/history-payloads';

jest.setTimeout(120_000);

const BIG = 'b'.repeat(300_000);
const scenarios: Record<string, Scenario> = {
  'big-echo': {
    steps: [
      { content: [{ type: 'text', text: 'Echoing the document.' }, { type: 'tool_use', name: 'everything__echo', input: { message: BIG } }] },
      { content: [{ type: 'text', text: 'Echoed it.' }] },
    ],
    formatter: { conversation: [{ type: 'text', content: 'echoed' }] },
  },
};

let h: TurnHarness;
beforeAll(async () => {
  h = await startTurnHarness({ scenarios, servers: { everything: everythingStdio({ max_result_bytes: 1_000_000 }) } });
});
afterAll(async () => {
  await h?.close();
});

it('runs a turn with 300 KB payloads; history keeps references only, and the objects are in the payload directory', async () => {
  const payloadDir = process.env.MCP_TURNS_TEST_PAYLOAD_DIR!;
  const handle = await startChatTurn(h.client, { question: 'Echo this document', model: 'big-echo', servers: ['everything'] }, { taskQueue: h.taskQueue });
  const result = await handle.result();
  expect(result.toolCalls).toHaveLength(1);
  expect(result.toolCalls[0]!.isError).toBe(false);
  expect(result.response.conversation).toBe('echoed');
  // The 300 KB result came back whole from storage: it is in the conversation the turn returns.
  expect(JSON.stringify(result.messages)).toContain(`Echo: ${BIG}`);

  const payloads = payloadsIn(await rawHistoryEvents(h.client, handle.workflowId));
  const inline = payloads.filter((p) => !storageReference(p));
  const references = payloads.map(storageReference).filter((r) => r !== undefined);
  const largestInline = Math.max(...inline.map(encodedSize));
  expect(largestInline).toBeLessThan(DEFAULT_STORAGE_THRESHOLD);

  // The tool call's input and result, and the Claude reply that asked for it, are each about 300 KB.
  const keys = references.map((r) => {
    expect(r.driverName).toBe('mcp-turns-fs');
    return r.claimData.key!;
  });
  const stored = [...new Set(keys)].map((key) => fs.readFileSync(path.join(payloadDir, key.slice(0, 2), key)));
  expect(stored.filter((bytes) => bytes.length > 300_000).length).toBeGreaterThanOrEqual(3);
  for (const bytes of stored) expect(decodeStoredPayload(bytes).data!.length).toBeGreaterThan(0);
  // A transcript segment sent to several calls (the question, the tools, the first step) is one object.
  expect(new Set(keys).size).toBeLessThan(keys.length);
});
