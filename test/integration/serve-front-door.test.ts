/**
 * `serve`'s front door tried as a hostile client would: the real dev server, the stub Claude behind
 * the real Anthropic SDK, server-everything, and `serve` on loopback with tokens (and without).
 * Every request here is written on a raw socket when its spelling matters (percent-encoded paths,
 * absolute-form request lines), so nothing between the test and the server normalises it.
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { ownerSearchAttributes } from '../../src/client/owner';
import { tokenCaller } from '../../src/serve/caller';
import { sendMessageUpdate } from '../../src/core/workflow-handlers';
import { MAX_ID_LENGTH, TURN_SUFFIX_ROOM } from '../../src/core/input-limits';
import { startServeApp, words } from '../support/serve-app';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';
import { uniqueQueue } from '../support/temporal';
import { until } from '../support/until';
import { getTurnView } from '../../src/client/turn-view';

jest.setTimeout(180_000);

const ALICE = 'alice-front-door-token-6b1f0c';
const BOB = 'bob-front-door-token-a93e27';
const RUN = Date.now().toString(36);
const OPEN_ROUTES = ['GET /', 'GET /app.js', 'GET /style.css', 'GET /openapi.json', 'GET /v1/info'];

let h: TurnHarness;
let app: FastifyInstance;
let base: string;
let port: number;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: {
      chat: {
        perTurn: true,
        steps: [{ content: [{ type: 'text', text: 'You said: {{question}}' }] }],
        formatter: { conversation: [{ type: 'text', content: 'Answer to {{question}}' }] },
      },
      slow: {
        perTurn: true,
        streamDelayMs: 40,
        steps: [{ content: [{ type: 'text', text: words(60, 'slow') }] }],
        formatter: { conversation: [{ type: 'text', content: 'Slow answer done.' }] },
      },
    },
    defaultScenario: 'chat',
    servers: { everything: everythingStdio() },
  });
  const settings = resolveServeSettings({ port: 0, tokens: [{ name: 'alice', token: ALICE }, { name: 'bob', token: BOB }] }, {}, {});
  ({ app, base } = await startServeApp(h, settings));
  port = Number(new URL(base).port);
});

afterAll(async () => {
  await app?.close();
  await h?.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request written as is on a socket to `to` (from `localAddress`): `target` is the request
 * line's target (a path, or absolute-form). Resolves once the answer's body has ended, or with what
 * came once the headers of an event stream are in.
 */
function raw(
  to: number,
  method: string,
  target: string,
  opts: { headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { host: `127.0.0.1:${to}`, connection: 'close', ...opts.headers } as Record<string, string>;
    if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
    const socket = net.connect({ port: to, host: '127.0.0.1', ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
    let data = '';
    const answer = (): RawAnswer | undefined => {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine, ...lines] = data.slice(0, end).split('\r\n');
      const head: Record<string, string> = {};
      for (const l of lines) head[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      let body = data.slice(end + 4);
      if (head['transfer-encoding'] === 'chunked') body = unchunk(body);
      return { status: Number(statusLine!.split(' ')[1]), headers: head, body };
    };
    socket.setTimeout(15_000, () => {
      socket.destroy();
      reject(new Error(`${method} ${target.slice(0, 80)}: no answer in 15 s`));
    });
    socket.on('data', (d: Buffer) => {
      data += d.toString('latin1');
      const a = answer();
      if (a && /text\/event-stream/.test(a.headers['content-type'] ?? '')) {
        socket.destroy();
        resolve(a);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const a = answer();
      if (a) resolve({ ...a, body: Buffer.from(a.body, 'latin1').toString('utf8') });
      else reject(new Error(`${method} ${target.slice(0, 80)}: closed without an answer`));
    });
    socket.write(`${method} ${target} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${opts.body ?? ''}`);
  });
}

function unchunk(body: string): string {
  let out = '';
  for (let at = 0; ; ) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return out;
    const size = parseInt(body.slice(at, eol), 16);
    if (!size) return out;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

const json = (a: RawAnswer): unknown => JSON.parse(a.body);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = bearer(ALICE)): Promise<RawAnswer> {
  return raw(port, method, path, {
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** Sends one message (answered 202 with its turn id) and waits for its turn's result. */
async function message(conversation: string, text: string, options?: Record<string, unknown>, token = ALICE): Promise<string> {
  const sent = await call('POST', `/v1/conversations/${encodeURIComponent(conversation)}/messages`, { text, ...(options ? { options } : {}) }, bearer(token));
  expect([sent.status, sent.body]).toEqual([202, expect.any(String)]);
  const { turnId } = json(sent) as { turnId: string };
  await h.client.workflow.getHandle(turnId).result();
  return turnId;
}

/** The routes the OpenAPI document lists (their ids filled in with `id`). */
async function documentedRoutes(id = 'some-id'): Promise<Array<{ method: string; path: string }>> {
  const doc = json(await raw(port, 'GET', '/openapi.json')) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path: p.replace(/\{[^}]+\}/g, id) })),
  );
}

const encodeAll = (path: string): string =>
  path
    .split('/')
    .map((seg) => [...Buffer.from(seg)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''))
    .join('/');

/** A path spelt as a hostile client would: one letter percent-encoded, every letter, absolute-form. */
function spellings(path: string): string[] {
  const first = path.replace(/^\/(.)/, (_, c: string) => `/%${c.charCodeAt(0).toString(16)}`);
  const absolute = `http://127.0.0.1:${port}`;
  return [path, first, encodeAll(path), `${absolute}${path}`, `${absolute}${first}`, `${absolute}${encodeAll(path)}`];
}

describe('authentication', () => {
  it('every route of the OpenAPI document needs the token, however its path is spelt', async () => {
    const routes = (await documentedRoutes()).filter((r) => !OPEN_ROUTES.includes(`${r.method} ${r.path}`));
    expect(routes.length).toBeGreaterThanOrEqual(10);
    const heads = routes.filter((r) => r.method === 'GET').map((r) => ({ ...r, method: 'HEAD' }));
    const answers: string[] = [];
    for (const { method, path } of [...routes, ...heads]) {
      for (const target of spellings(path)) {
        for (const headers of [{}, { authorization: 'Bearer not-a-token-of-this-server' }, { authorization: `Basic ${ALICE}` }] as Array<Record<string, string>>) {
          const a = await raw(port, method, target, { headers: { 'content-type': 'application/json', ...headers }, body: method === 'POST' ? '{}' : '' });
          answers.push(`${method} ${target} ${Object.keys(headers).length ? 'bad token' : 'no token'} → ${a.status}`);
          expect([method, target, a.status]).toEqual([method, target, 401]);
          if (method !== 'HEAD') expect(json(a)).toEqual({ error: expect.stringMatching(/^(missing Authorization: Bearer <token>|the bearer token is not one of serve\.tokens)$/) });
        }
      }
    }
    expect(answers.length).toBeGreaterThan(200);
    // The open routes: the page and what it needs to start; nothing else answers without a token.
    for (const route of OPEN_ROUTES) {
      const [method, path] = route.split(' ') as [string, string];
      for (const target of spellings(path)) expect([route, target, (await raw(port, method, target)).status]).toEqual([route, target, 200]);
    }
  });

  it("/v1/info is open, but names the worker's MCP servers only to a caller with a token", async () => {
    const anonymous = await call('GET', '/v1/info', undefined, {});
    expect(anonymous.status).toBe(200);
    expect(json(anonymous)).not.toHaveProperty('servers');
    expect(json(await call('GET', '/v1/info'))).toMatchObject({ servers: ['everything'] });
  });

  it('serves every route without a token when none is configured (loopback only)', async () => {
    const open = await startServeApp(h, resolveServeSettings({ port: 0 }, {}, {}));
    try {
      const p = Number(new URL(open.base).port);
      expect((await raw(p, 'GET', '/v1/conversations?limit=1')).status).toBe(200);
      expect((await raw(p, 'GET', '/%761/approvals')).status).toBe(200);
    } finally {
      await open.app.close();
    }
  });
});

describe('no silent hangs', () => {
  it('a message to a conversation no worker can take is refused at once (503) naming the task queue, from /v1 and /api/chat alike', async () => {
    const taskQueue = uniqueQueue('nobody');
    const orphan = await startServeApp(h, resolveServeSettings({ port: 0 }, {}, {}), undefined, { workerElsewhere: true, taskQueue });
    try {
      const why = `no worker polls task queue ${taskQueue}: start one (\`mcp-turns worker\`), then send again`;
      const started = Date.now();
      const message = await fetch(`${orphan.base}/v1/conversations/conv-${taskQueue}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'anyone there?' }),
      });
      expect(message.status).toBe(503);
      expect(await message.json()).toEqual({ error: why });
      const chat = await fetch(`${orphan.base}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: `chat-${taskQueue}`, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'anyone there?' }] }] }),
      });
      expect(chat.status).toBe(503);
      expect(await chat.json()).toEqual({ error: why });
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await orphan.app.close();
    }
  });
});

describe('what a caller sends cannot end a conversation', () => {
  it('a 5,000-character model is refused (400 naming the field); the conversation runs on with its history', async () => {
    const conversation = `fd-model-${RUN}`;
    const first = await message(conversation, 'first question');
    const long = 'm'.repeat(5000);
    const refused = await call('POST', `/v1/conversations/${conversation}/messages`, { text: 'second', options: { model: long } });
    expect([refused.status, json(refused)]).toEqual([400, { error: 'body.options.model: at most 256 characters' }]);
    const turn = await call('POST', '/v1/turns', { question: 'q', model: long });
    expect([turn.status, json(turn)]).toEqual([400, { error: 'body.model: at most 256 characters' }]);
    // A key the body does not have is named at the body itself.
    const unknown = await call('POST', '/v1/turns', { question: 'q', options: { model: 'm' } });
    expect([unknown.status, json(unknown)]).toEqual([400, { error: 'body: Unrecognized key: "options"' }]);
    const chat = await call('POST', '/api/chat', { id: conversation, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }], options: { model: long } });
    expect([chat.status, json(chat)]).toEqual([400, { error: 'body.options.model: at most 256 characters' }]);

    // A caller on Temporal itself skips the schemas: the conversation still never sets an attribute
    // past the server's limit, and the message's turn refuses the model with one line.
    const direct = await h.client.workflow
      .getHandle(conversation)
      .executeUpdate(sendMessageUpdate, { args: [{ text: 'straight to Temporal', id: `direct-${RUN}`, options: { model: long } }] });
    expect(direct).toEqual({ index: 1, turnId: `${conversation}-turn-2`, error: expect.stringContaining('model: at most 256 characters') });

    const third = await message(conversation, 'third question');
    expect([first, third]).toEqual([`${conversation}-turn-1`, `${conversation}-turn-3`]);
    expect((await h.client.workflow.getHandle(conversation).describe()).status.name).toBe('RUNNING');
    const view = json(await call('GET', `/v1/conversations/${conversation}`)) as { status: string; turns: number; transcript: Array<{ role: string; content: unknown }> };
    expect([view.status, view.turns]).toEqual(['running', 3]);
    const said = JSON.stringify(view.transcript);
    expect(said).toContain('first question');
    expect(said).toContain('third question');
  });

  it('a conversation that ended abnormally is never started afresh under its id', async () => {
    const conversation = `fd-ended-${RUN}`;
    await message(conversation, 'before the end');
    await h.client.workflow.getHandle(conversation).terminate('an operator ended it');
    const again = await call('POST', `/v1/conversations/${conversation}/messages`, { text: 'after the end' });
    expect([again.status, json(again)]).toEqual([
      409,
      { error: `conversation ${conversation} has ended (terminated) and takes no more messages: start a new one (another id)` },
    ]);
    const chat = await call('POST', '/api/chat', { id: conversation, messages: [{ id: 'm2', role: 'user', parts: [{ type: 'text', text: 'after' }] }] });
    expect(chat.status).toBe(409);
    expect((await h.client.workflow.getHandle(conversation).describe()).status.name).toBe('TERMINATED');
    await expect(h.client.workflow.getHandle(`${conversation}-turn-2`).describe()).rejects.toThrow(/not found/i);
  });
});

describe("a turn's context names its caller", () => {
  /** The context turn `id` was started with, read from its history. */
  const contextOf = async (id: string): Promise<unknown> => (await getTurnView(h.client, id)).input?.context;

  it('context.user is the token\'s name on every route that starts a turn, whatever the body claims; the rest of the context is kept', async () => {
    const claim = { user: 'alice', tenant: 'acme' };
    const turn = await call('POST', '/v1/turns', { question: 'who asks?', context: claim }, bearer(BOB));
    expect(turn.status).toBe(202);
    expect(await contextOf((json(turn) as { id: string }).id)).toEqual({ user: 'bob', tenant: 'acme' });

    const conversation = `fd-caller-${RUN}`;
    expect(await contextOf(await message(conversation, 'who asks?', { context: claim }, BOB))).toEqual({ user: 'bob', tenant: 'acme' });
    // A message without a context has one all the same.
    expect(await contextOf(await message(conversation, 'and now?', undefined, BOB))).toEqual({ user: 'bob' });

    const chatId = `fd-caller-chat-${RUN}`;
    const chat = await call('POST', '/api/chat', { id: chatId, messages: [{ id: 'c1', role: 'user', parts: [{ type: 'text', text: 'who asks?' }] }], options: { context: claim } }, bearer(BOB));
    expect(chat.status).toBe(200);
    const chatTurn = `${chatId}-turn-1`;
    await until(async () => (await contextOf(chatTurn).catch(() => undefined)) !== undefined, `turn ${chatTurn}`);
    expect(await contextOf(chatTurn)).toEqual({ user: 'bob', tenant: 'acme' });
  });

  it('refuses a bad context, a bad server tool and a bad tool search with one line naming the field', async () => {
    const refusal = async (body: Record<string, unknown>): Promise<[number, unknown]> => {
      const res = await call('POST', '/v1/turns', { question: 'q', ...body }, bearer(BOB));
      return [res.status, json(res)];
    };
    await expect(refusal({ context: { 'a.b': 1 } })).resolves.toEqual([400, { error: 'body.context: key "a.b": context keys are 1-64 characters of A-Z a-z 0-9 _ -' }]);
    await expect(refusal({ context: { k: 'x'.repeat(20_000) } })).resolves.toEqual([400, { error: 'body.context: at most 16384 bytes of JSON' }]);
    await expect(refusal({ serverTools: { web_search: { allowedDomains: ['a.com'], blockedDomains: ['b.com'] } } })).resolves.toEqual([
      400,
      { error: 'body.serverTools.web_search.blockedDomains: allowedDomains and blockedDomains exclude each other: give one' },
    ]);
    await expect(refusal({ toolSearch: 'fast' })).resolves.toEqual([400, { error: expect.stringMatching(/^body\.toolSearch: /) }]);
  });

  it('/openapi.json documents toolset and context, and every $ref in it names a component it has', async () => {
    const text = (await raw(port, 'GET', '/openapi.json')).body;
    const doc = JSON.parse(text) as { paths: Record<string, { post: { requestBody: { content: { 'application/json': { schema: { properties: Record<string, unknown> } } } } } }>; components?: { schemas?: Record<string, unknown> } };
    expect(Object.keys(doc.paths['/v1/turns']!.post.requestBody.content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['toolset', 'context']));
    const refs = [...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((r) => !doc.components?.schemas?.[r])).toEqual([]);
    expect([...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!).filter((r) => !r.startsWith('#/components/schemas/'))).toEqual([]);
  });
});

describe("ids: a conversation's are its own, every kind answers for itself", () => {
  it("nobody can take a conversation's next turn id; the conversation's next answer is its own", async () => {
    const conversation = `fd-squat-${RUN}`;
    await message(conversation, 'alice first');
    const next = `${conversation}-turn-2`;
    const squat = await call('POST', '/v1/turns', { id: next, question: 'bob was here' }, bearer(BOB));
    expect([squat.status, json(squat)]).toEqual([400, { error: expect.stringMatching(/^body\.id: ends like a conversation's turn id/) }]);
    const asConversation = await call('POST', `/v1/conversations/${next}/messages`, { text: 'bob was here' }, bearer(BOB));
    expect([asConversation.status, json(asConversation)]).toEqual([400, { error: expect.stringMatching(/^params\.id: ends like a conversation's turn id/) }]);
    const asChat = await call('POST', '/api/chat', { id: next, messages: [{ id: 'b1', role: 'user', parts: [{ type: 'text', text: 'bob' }] }] }, bearer(BOB));
    expect([asChat.status, json(asChat)]).toEqual([400, { error: expect.stringMatching(/^body\.id: ends like a conversation's turn id/) }]);

    expect(await message(conversation, 'alice second')).toBe(next);
    const turn = json(await call('GET', `/v1/turns/${next}`)) as { status: string; question: string; result: { messages: unknown[] } };
    expect([turn.status, turn.question]).toEqual(['completed', 'alice second']);
    expect(JSON.stringify(turn.result.messages)).not.toContain('bob was here');
  });

  it('an id of another kind of workflow is 404 on every read and 409 on every create, never 500', async () => {
    const plain = `fd-plain-${RUN}`;
    const started = await call('POST', '/v1/turns', { id: plain, question: 'a plain turn' });
    expect(started.status).toBe(202);
    await h.client.workflow.getHandle(plain).result();
    const conversation = `fd-kinds-${RUN}`;
    await message(conversation, 'a conversation');
    // A batch's workflow on a queue no worker polls (alice's, so she may see it): its id is all that matters here.
    const batch = `fd-batch-${RUN}`;
    await h.client.workflow.start('chatBatch', { taskQueue: `fd-nobody-${RUN}`, workflowId: batch, args: [], typedSearchAttributes: ownerSearchAttributes(tokenCaller('alice', false).owner) });

    const expectAnswer = async (method: string, path: string, body: unknown, status: number, error: RegExp) => {
      const a = await call(method, path, body);
      expect([method, path, a.status, json(a)]).toEqual([method, path, status, { error: expect.stringMatching(error) }]);
    };
    await expectAnswer('GET', `/v1/turns/${conversation}`, undefined, 404, /^no turn fd-kinds-\w+: it is a conversation$/);
    await expectAnswer('GET', `/v1/turns/${batch}`, undefined, 404, /it is a batch$/);
    await expectAnswer('GET', `/v1/turns/${batch}/events`, undefined, 404, /it is a batch$/);
    await expectAnswer('GET', `/v1/conversations/${plain}`, undefined, 404, /is not a conversation \(it is a chatTurn workflow\)/);
    await expectAnswer('GET', `/v1/conversations/${batch}`, undefined, 404, /is not a conversation/);
    await expectAnswer('POST', `/v1/approvals/${conversation}/call-1`, { approved: true }, 404, /^no turn fd-kinds-\w+: it is a conversation$/);
    await expectAnswer('POST', `/v1/approvals/${batch}/call-1`, { approved: true }, 404, /it is a batch$/);
    await expectAnswer('POST', `/v1/conversations/${plain}/messages`, { text: 'hello' }, 409, /is a turn, not a conversation$/);
    await expectAnswer('POST', '/api/chat', { id: plain, messages: [{ id: 'k1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }, 409, /is a turn, not a conversation$/);
    await expectAnswer('POST', '/v1/turns', { id: conversation, question: 'q' }, 409, /already exists/);
    expect((await call('GET', `/api/chat/${batch}/stream`)).status).toBe(204);

    // A running turn's id, sent a message: refused, the turn unharmed.
    const running = `fd-running-${RUN}`;
    expect((await call('POST', '/v1/turns', { id: running, question: 'slowly', model: 'slow' })).status).toBe(202);
    await expectAnswer('POST', `/v1/conversations/${running}/messages`, { text: 'hello' }, 409, /is a turn, not a conversation$/);
    await h.client.workflow.getHandle(running).result();
    // The turn answered before is still what it was.
    expect((json(await call('GET', `/v1/turns/${plain}`)) as { status: string }).status).toBe('completed');
    await h.client.workflow.getHandle(batch).terminate();
    await expectAnswer('POST', `/v1/conversations/${batch}/messages`, { text: 'hello' }, 409, /is a batch, not a conversation$/);
  });

  it('ids are readable up to the length they are accepted at, on every route', async () => {
    const longest = MAX_ID_LENGTH - TURN_SUFFIX_ROOM;
    const conversation = `fd-long-${RUN}-`.padEnd(longest, 'é');
    const turnId = await message(conversation, 'a long id');
    const path = encodeURIComponent(turnId);
    expect((await call('GET', `/v1/turns/${path}`)).status).toBe(200);
    expect((await call('GET', `/v1/conversations/${encodeURIComponent(conversation)}`)).status).toBe(200);
    const events = await call('GET', `/v1/turns/${path}/events`, undefined, { ...bearer(ALICE), accept: 'text/event-stream' });
    expect(events.status).toBe(200);

    const tooLong = await call('POST', `/v1/conversations/${encodeURIComponent(`${conversation}x`)}/messages`, { text: 'x' });
    expect([tooLong.status, json(tooLong)]).toEqual([400, { error: `params.id: at most ${longest} characters` }]);
    const turnTooLong = await call('POST', '/v1/turns', { id: 't'.repeat(MAX_ID_LENGTH + 1), question: 'q' });
    expect([turnTooLong.status, json(turnTooLong)]).toEqual([400, { error: `body.id: at most ${MAX_ID_LENGTH} characters` }]);
    const readTooLong = await call('GET', `/v1/turns/${'t'.repeat(MAX_ID_LENGTH + 1)}`);
    expect([readTooLong.status, json(readTooLong)]).toEqual([414, { error: `an id in the path is longer than ${MAX_ID_LENGTH} characters` }]);
    // A path of 10 KB is not repeated back.
    expect(readTooLong.body.length).toBeLessThan(200);
    const huge = await call('GET', `/v1/${'x'.repeat(10_000)}`);
    expect(huge.status).toBe(404);
    expect(huge.body.length).toBeLessThan(300);
  });
});

describe('the edges of every request', () => {
  it('refuses malformed requests with {error} and repeats little of them', async () => {
    const badUrl = await call('GET', '/v1/turns/%zz');
    expect([badUrl.status, json(badUrl)]).toEqual([400, { error: 'the path /v1/turns/%zz is not valid percent-encoding' }]);
    const origin = await call('GET', '/v1/info', undefined, { origin: `https://${'o'.repeat(15_000)}.example` });
    expect(origin.status).toBe(403);
    expect((json(origin) as { error: string }).error.length).toBeLessThan(250);
    const nested = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const history = await raw(port, 'POST', '/v1/turns', {
      headers: { ...bearer(ALICE), 'content-type': 'application/json' },
      body: `{"question":"q","history":[{"role":"user","content":[{"type":"text","text":"t","x":${nested}}]}]}`,
    });
    expect([history.status, json(history)]).toEqual([400, { error: 'the body nests deeper than 100 levels' }]);
    const empty = await call('POST', '/api/chat', { id: '', messages: [{ id: 'e', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] });
    expect([empty.status, json(empty)]).toEqual([400, { error: 'body.id: must not be empty' }]);
  });

  it('reads Last-Event-ID as strictly as ?after=', async () => {
    const conversation = `fd-offsets-${RUN}`;
    const turnId = await message(conversation, 'offsets');
    for (const bad of ['0x5', '-1', '1e1', '5.0', '+5', '5 5', '99999999999999999999']) {
      const a = await call('GET', `/v1/turns/${turnId}/events`, undefined, { ...bearer(ALICE), 'last-event-id': bad });
      expect([bad, a.status]).toEqual([bad, 400]);
      const q = await call('GET', `/v1/turns/${turnId}/events?after=${encodeURIComponent(bad)}`);
      expect([bad, q.status]).toEqual([bad, 400]);
    }
    expect((await call('GET', `/v1/turns/${turnId}/events`, undefined, { ...bearer(ALICE), 'last-event-id': '3' })).status).toBe(200);
  });

  it('resumes after offset N for Last-Event-ID: N and ?after=N alike, from 0 without either; ?from= is refused naming after', async () => {
    const turnId = await message(`fd-resume-${RUN}`, 'resume');
    /** The SSE ids of the closed turn's stream, read to its end. */
    const ids = async (query: string, headers: Record<string, string> = {}): Promise<number[]> => {
      const res = await fetch(`${base}/v1/turns/${turnId}/events${query}`, { headers: { ...bearer(ALICE), ...headers } });
      expect(res.status).toBe(200);
      return [...(await res.text()).matchAll(/^id: ?(\d+)$/gm)].map((m) => Number(m[1]));
    };
    const whole = await ids('');
    expect(whole.length).toBeGreaterThan(5);
    expect(whole).toEqual(whole.map((_, i) => i));
    expect(await ids('', { 'last-event-id': '3' })).toEqual(whole.slice(4));
    expect(await ids('?after=3')).toEqual(whole.slice(4));
    expect(await ids('?after=0')).toEqual(whole.slice(1));
    // The header wins.
    expect(await ids('?after=1', { 'last-event-id': '3' })).toEqual(whole.slice(4));

    const from = await call('GET', `/v1/turns/${turnId}/events?from=3`);
    expect([from.status, json(from)]).toEqual([400, { error: expect.stringMatching(/^from: not a parameter; after=N resumes after the event at offset N/) }]);
  });
});

describe('rate limits', () => {
  it('per client address without a token, per token with one; refused attempts count', async () => {
    const limited = await startServeApp(h, resolveServeSettings({ port: 0, tokens: [{ name: 'alice', token: ALICE }], rateLimit: { max: 5, windowSeconds: 60 } }, {}, {}));
    try {
      const p = Number(new URL(limited.base).port);
      const from = (localAddress: string, headers: Record<string, string> = {}) => raw(p, 'GET', '/v1/info', { localAddress, headers });
      for (let i = 0; i < 5; i++) expect((await from('127.0.0.2')).status).toBe(200);
      const over = await from('127.0.0.2');
      expect([over.status, json(over)]).toEqual([429, { error: expect.stringMatching(/^rate limit: 5 requests per 60 s; retry in \d+ s$/) }]);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      // Another address has its own limit; a token has its own, from any address.
      expect((await from('127.0.0.3')).status).toBe(200);
      expect((await from('127.0.0.2', bearer(ALICE))).status).toBe(200);
      // Guessing tokens: every refused attempt counts against the address.
      const guesses: number[] = [];
      for (let i = 0; i < 7; i++) guesses.push((await raw(p, 'GET', '/v1/approvals', { localAddress: '127.0.0.4', headers: { authorization: `Bearer guess-${i}-xxxxxxxxxxxxxxxx` } })).status);
      expect(guesses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    } finally {
      await limited.app.close();
    }
  });
});

describe('a fuzz pass over the documented routes', () => {
  it('odd ids, headers and bodies: never a 500, every refusal is {error}', async () => {
    const conversation = `fd-fuzz-${RUN}`;
    const turnId = await message(conversation, 'fuzz target');
    const routes = [...(await documentedRoutes('{id}')), ...OPEN_ROUTES.map((r) => ({ method: r.split(' ')[0]!, path: r.split(' ')[1]! }))];
    const initialSeed = Number(process.env.FUZZ_SEED ?? Date.now() % 0x7fffffff);
    let seed = initialSeed;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const ids = [
      '', ' ', 'a', '..', '%2e%2e', 'a%2Fb', '%00', '%0d%0a', '%zz', '%', 'null', '__proto__', 'constructor', '-turn-1', conversation, turnId,
      `${conversation}-turn-9`, encodeURIComponent('é'.repeat(MAX_ID_LENGTH)), 'x'.repeat(MAX_ID_LENGTH + 1), encodeURIComponent('😀'.repeat(60)), '%F0%9F', '%ED%A0%80',
    ];
    const odd: unknown[] = [
      null, true, 0, -1, 1e308, 'x', '', [], {}, [[[]]], { __proto__: { polluted: true } }, { constructor: { prototype: {} } }, 'x'.repeat(5000), '\u0000',
      '\ud800', { type: 'text' }, [{ role: 'user', content: 'h' }], { a: { b: { c: {} } } },
    ];
    const bodies = (): unknown =>
      pick([
        () => pick(odd),
        () => ({ question: pick(odd) }),
        () => ({ question: 'fuzz', model: pick(odd), maxSteps: pick(odd), history: pick(odd), stream: pick(odd), id: pick(odd) }),
        () => ({ text: pick(odd), messageId: pick(odd), options: pick([...odd, { model: 'x'.repeat(300) }, { maxSteps: 0 }, { question: 'q' }]) }),
        () => ({ approved: pick(odd), reason: pick(odd) }),
        () => ({ id: pick([...odd, conversation, turnId]), messages: pick([...odd, [{ id: pick(odd), role: pick(['user', 'assistant', 'x']), parts: pick(odd) }]]), trigger: pick(odd) }),
        () => ({ id: conversation, messages: [{ id: 'a', role: 'assistant', parts: [{ type: 'dynamic-tool', toolCallId: 'c', state: 'approval-responded', approval: { id: pick([...odd, `${turnId}/c`, '/c', 'x/']), approved: true } }], metadata: pick(odd) }] }),
      ])();
    const headerSets = (): Record<string, string> => ({
      ...(random() < 0.85 ? bearer(pick([ALICE, BOB])) : random() < 0.5 ? { authorization: pick(['Bearer', 'Bearer ', `Bearer ${ALICE} x`, 'x'.repeat(3000)]) } : {}),
      ...(random() < 0.5 ? { accept: pick(['application/json', 'text/event-stream', '*/*', 'x/y;;', '']) } : {}),
      ...(random() < 0.3 ? { 'last-event-id': pick(['0', '7', '-1', '0x1', 'x', '1'.repeat(40), '']) } : {}),
      ...(random() < 0.15 ? { origin: pick([`http://127.0.0.1:${port}`, 'null', 'https://evil.example', 'x'.repeat(500)]) } : {}),
    });
    const deadline = Date.now() + 15_000;
    const seen: string[] = [];
    let n = 0;
    while (Date.now() < deadline && n < 2500) {
      n++;
      const route = pick(routes);
      const method = random() < 0.9 ? route.method : pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);
      let path = route.path.replace(/\{id\}/g, () => pick(ids));
      if (random() < 0.2) path += pick(['?from=', '?from=12', '?after=', '?after=-1', '?after=12', '?limit=0', '?limit=x', '?limit=200', '?batch=', `?batch=${'b'.repeat(300)}`, '?x[y]=1', '?%zz']);
      const headers = headerSets();
      const send = method !== 'GET' && method !== 'HEAD';
      const body = send ? (random() < 0.1 ? pick(['{', '{"a":1}{', 'null', '"x"', `${'['.repeat(200)}${']'.repeat(200)}`]) : JSON.stringify(bodies())) : undefined;
      const a = await raw(port, method, path, {
        headers: { ...headers, ...(send ? { 'content-type': pick(['application/json', 'application/json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded']) } : {}) },
        ...(body !== undefined ? { body } : {}),
      });
      const what = `seed ${initialSeed}, request ${n}: ${method} ${path.slice(0, 120)} ${JSON.stringify(headers).slice(0, 120)} ${String(body).slice(0, 200)}`;
      seen.push(`${a.status}`);
      expect([what, a.status < 500]).toEqual([what, true]);
      if (a.status >= 400 && method !== 'HEAD') {
        const parsed = (() => {
          try {
            return JSON.parse(a.body) as unknown;
          } catch {
            return a.body;
          }
        })();
        expect([what, parsed]).toEqual([what, { error: expect.any(String) }]);
      }
    }
    const statuses = new Set(seen);
    console.log(`fuzz (FUZZ_SEED=${initialSeed}): ${n} requests, statuses ${[...statuses].sort().join(' ')}`);
    expect(n).toBeGreaterThan(100);
    expect([...statuses].filter((s) => s.startsWith('4')).length).toBeGreaterThanOrEqual(4);
  });
});
