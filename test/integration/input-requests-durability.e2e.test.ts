/**
 * A modern-era server's question outlives the worker: the turn waits for the person's answer, the
 * worker process is SIGKILLed and a new one started, the answer is given with `mcp-turns respond`,
 * and the same call is sent again exactly once, with the answer and the server's requestState as
 * it sent it (kept in history: the new worker, talking to a new server process, sends it); the
 * turn completes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startStubModel, type StubModel } from '../../src/stub';
import { startChatTurn } from '../../src/client/chat-turn-client';
import type { ApprovalRecord } from '../../src/core/approvals';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { pendingApprovalsQuery } from '../../src/core/workflow-handlers';
import { runCli } from '../support/cli';
import { modernStdio } from '../support/mcp-servers';
import { testClient, uniqueQueue } from '../support/temporal';
import { startWorkerProcess } from '../support/worker-process';

jest.setTimeout(180_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-input-durable-'));
const countFile = path.join(dir, 'bookings.jsonl');
const lines = (): Array<{ args: Record<string, unknown>; pid: number }> =>
  fs.existsSync(countFile) ? fs.readFileSync(countFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

let stub: StubModel;
let client: Client;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  stub = await startStubModel({
    scenarios: {
      book: {
        steps: [
          { content: [{ type: 'tool_use', name: 'bookings__book_table', input: { restaurant: 'Chez Ana' } }] },
          { content: [{ type: 'text', text: 'done: {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: '{{toolResults}}' }] },
      },
    },
  });
  client = await testClient();
});
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await client?.connection.close();
  await stub?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('answers with `mcp-turns respond` after the waiting worker was SIGKILLed; the call is sent again once, with the answer', async () => {
  const taskQueue = uniqueQueue('input-durable');
  const config = { mcp_servers: { bookings: modernStdio(countFile) } };
  const start = async (): Promise<ChildProcess> => {
    const worker = await startWorkerProcess({ config, configDir: dir, taskQueue, stubUrl: stub.url });
    workers.push(worker);
    return worker;
  };
  const first = await start();
  const handle = await startChatTurn(client, { question: 'book a table', model: 'book', servers: ['bookings'] }, { taskQueue, workflowId: `input-durable-${taskQueue}` });

  let waiting: ApprovalRecord | undefined;
  for (const deadline = Date.now() + 30_000; !waiting && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    waiting = (await handle.query(pendingApprovalsQuery)).find((r) => r.kind === 'input');
  }
  expect(waiting).toMatchObject({ kind: 'input', requests: [{ key: 'details', mode: 'form' }] });

  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  await start();

  const respond = await runCli(['respond', handle.workflowId, waiting!.callId, '--data', '{"guests": 4, "time": "19:30"}', '--as', 'alice@test', '--address', process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!]);
  expect(respond.stderr).toBe('');
  expect(respond.code).toBe(0);

  const result: ChatTurnResult = await handle.result();
  expect(result.stopReason).toBe('completed');
  expect(JSON.stringify(result.messages)).toContain('booked Chez Ana for 4 at 19:30');
  expect(result.approvals).toEqual([expect.objectContaining({ kind: 'input', outcome: 'approved', decidedBy: 'alice@test', answer: { guests: 4, time: '19:30' } })]);

  // Asked once, then sent again exactly once, with the answer and the very requestState it minted,
  // by the new worker to a new server process: the state came from the turn's history.
  const calls = lines();
  expect(calls).toHaveLength(2);
  const minted = calls[0]!.args.requestState as string;
  expect(minted).toMatch(/^booking:Chez Ana:/);
  expect(calls[1]!.args).toMatchObject({ action: 'accept', content: { guests: 4, time: '19:30' }, requestState: minted });
  expect(calls[1]!.pid).not.toBe(calls[0]!.pid);
});
