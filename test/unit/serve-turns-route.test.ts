/**
 * `/v1/turns` as a caller sees it, on a port of this machine with stand-ins for the Temporal
 * lookups: `GET /v1/turns/{id}` answers a completed turn's whole result (its `output` and
 * `outputReport` included, as the workflow returned it), and `POST /v1/turns` starts the turn with
 * `userId` from the caller who signed in, or the body's on loopback without sign-in.
 */
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { FastifyInstance } from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { buildServeApp } from '../../src/serve/serve-app';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { tokenCaller } from '../../src/serve/caller';
import type { ChatTurnResult } from '../../src/core/turn-result';
import type { TurnView } from '../../src/client/turn-view';
import type { ChatTurnInput } from '../../src/schemas/turn-input';
import { ZERO_USAGE } from '../../src/core/usage';

const result = {
  response: { conversation: '{"city":"Paris"}', artifacts: [] },
  stopReason: 'completed',
  steps: 1,
  toolCalls: [],
  usage: ZERO_USAGE,
  costUsd: 0,
  model: 'claude-sonnet-4-6',
  messages: [],
  output: { city: 'Paris' },
  outputReport: { path: 'structured', calls: 1, repaired: false, notes: [] },
  unavailableServers: [],
  droppedTools: [],
  approvals: [],
} satisfies ChatTurnResult;

const view: TurnView = {
  workflowId: 'turn-1',
  status: 'completed',
  question: 'Where?',
  input: { question: 'Where?', output: { schema: { type: 'object' } } },
  startTime: '2026-11-27T10:00:00.000Z',
  closeTime: '2026-11-27T10:00:05.000Z',
  result,
};

jest.mock('../../src/client/turn-view', () => ({ getTurnView: jest.fn(async () => view) }));
jest.mock('../../src/client/describe-id', () => ({
  describeId: jest.fn(async (_client: unknown, id: string) => ({ id, kind: 'turn', type: 'chatTurn', status: 'completed', running: false, startTime: new Date(), searchAttributes: new TypedSearchAttributes() })),
}));
jest.mock('../../src/client/chat-turn-client', () => ({ startChatTurn: jest.fn(async () => ({})) }));
const started = startChatTurn as jest.MockedFunction<typeof startChatTurn>;

const TOKEN = 'alice-token-0123456789abcdef0123456789';
const apps: FastifyInstance[] = [];

/** The app on a free port: on loopback without sign-in, or with alice's token. */
async function serve(env: NodeJS.ProcessEnv = {}): Promise<string> {
  const app = await buildServeApp({
    client: {} as Client,
    address: '127.0.0.1:7233',
    namespace: 'default',
    taskQueue: 'q',
    uiUrl: 'http://127.0.0.1:8233',
    settings: resolveServeSettings(undefined, {}, env),
    version: 'test',
    log: () => {},
  });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

afterAll(() => Promise.all(apps.map((a) => a.close())));
beforeEach(() => started.mockClear());

test("GET /v1/turns/{id}: a completed turn's whole result, output and outputReport included", async () => {
  const res = await fetch(`${await serve()}/v1/turns/turn-1`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { id: string; result: ChatTurnResult; input?: unknown };
  expect(body.id).toBe('turn-1');
  expect(body.result).toEqual(result);
  expect(body.input).toBeUndefined();
});

const post = (base: string, body: object, headers: Record<string, string> = {}) =>
  fetch(`${base}/v1/turns`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const startedInput = (): ChatTurnInput => started.mock.calls[0]![1] as ChatTurnInput;

test("POST /v1/turns by a token's holder: userId is their owner key, whatever the body says", async () => {
  const base = await serve({ MCP_TURNS_SERVE_TOKENS: `alice:${TOKEN}` });
  const res = await post(base, { question: 'q', userId: 'someone-else', output: { schema: { type: 'object' } } }, { authorization: `Bearer ${TOKEN}` });
  expect(res.status).toBe(202);
  expect(startedInput()).toMatchObject({ question: 'q', userId: tokenCaller('alice', false).owner.key, output: { schema: { type: 'object' } }, context: { user: 'alice' } });
});

test('POST /v1/turns on loopback without sign-in: the body\'s userId is kept', async () => {
  const res = await post(await serve(), { question: 'q', userId: 'u-42' });
  expect(res.status).toBe(202);
  expect(startedInput()).toMatchObject({ userId: 'u-42', context: { user: 'local user' } });
});
