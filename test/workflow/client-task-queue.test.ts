/**
 * The client API starts work on the task queue its settings name (MCP_TURNS_TASK_QUEUE), as the
 * worker polls it: a client from `connectClient`, and a client of the caller's own making.
 */
import { Client, Connection } from '@temporalio/client';
import { connectClient } from '../../src/client/connect-client';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { startConversation } from '../../src/client/conversation-client';
import { newId } from '../../src/client/ids';
import { uniqueQueue } from '../support/temporal';

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const saved = process.env.MCP_TURNS_TASK_QUEUE;
afterEach(() => {
  if (saved === undefined) delete process.env.MCP_TURNS_TASK_QUEUE;
  else process.env.MCP_TURNS_TASK_QUEUE = saved;
});

it('starts turns and conversations on MCP_TURNS_TASK_QUEUE when the caller names no queue', async () => {
  const taskQueue = uniqueQueue('env-queue');
  process.env.MCP_TURNS_TASK_QUEUE = taskQueue;
  const connected = await connectClient({ address });
  const own = new Client({ connection: await Connection.connect({ address }) });
  try {
    for (const client of [connected, own]) {
      const turn = await startChatTurn(client, { question: 'which queue?' });
      expect((await turn.describe()).taskQueue).toBe(taskQueue);
      await turn.terminate();
      const conversation = await startConversation(client, newId('conv'));
      expect((await conversation.describe()).taskQueue).toBe(taskQueue);
      await conversation.terminate();
    }
    // A queue the caller names wins.
    const named = await startChatTurn(connected, { question: 'which queue?' }, { taskQueue: `${taskQueue}-named` });
    expect((await named.describe()).taskQueue).toBe(`${taskQueue}-named`);
    await named.terminate();
  } finally {
    await connected.connection.close();
    await own.connection.close();
  }
});
