/**
 * `serve` end to end: the real dev server, a real MCP server (server-everything), the stub Claude
 * behind the real Anthropic SDK, and the HTTP server bound beyond loopback (0.0.0.0) with a token.
 * The `ai` package from npm is the client of `/api/chat` (`DefaultChatTransport`,
 * `readUIMessageStream`), `curl -N` the client of the SSE resume, and two `mcp-turns serve`
 * processes on the same cluster show that either resumes a stream the other started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import type { FastifyInstance } from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import type { TurnStreamEvent } from '../../src/core/stream-events';
import { startServeApp, words } from '../support/serve-app';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';
import { payloadsIn } from '../support/history-payloads';
import { startServeProcess } from '../support/serve-process';
import { until } from '../support/until';
import { sendMessage, sendOrFindMessage, startConversation } from '../../src/client/conversation-client';
import { tokenCaller } from '../../src/serve/caller';

jest.setTimeout(240_000);

const TOKEN = 'serve-test-token-9c1e57-never-in-history';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const RUN = Date.now().toString(36);

let h: TurnHarness;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: {
      // A conversation: each turn echoes its question, then answers slowly enough to be seen arriving.
      chat: {
        perTurn: true,
        streamDelayMs: 15,
        steps: [
          { content: [{ type: 'text', text: 'Echoing it.' }, { type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
          { content: [{ type: 'text', text: `Done: {{toolResults}} ${words(20, 'w')}` }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'Answer: {{toolResults}}' }] },
      },
      // get-sum waits for approval (the worker's config says so).
      approve: {
        perTurn: true,
        steps: [
          { content: [{ type: 'text', text: 'Adding.' }, { type: 'tool_use', name: 'everything__get-sum', input: { a: 20, b: 22 } }] },
          { content: [{ type: 'text', text: 'The sum is {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'Sum: {{toolResults}}' }] },
      },
      // A typed answer, written slowly enough to be seen growing.
      'claude-sonnet-4-6-typed': {
        perTurn: true,
        streamDelayMs: 60,
        steps: [{ content: [{ type: 'text', text: 'Counting.' }] }],
        output: JSON.stringify({ city: 'Oslo', days: [{ day: 'Mon', high: 4 }, { day: 'Tue', high: 2 }] }, null, 2),
      },
      // Long enough to drop a connection in the middle of it.
      slow: {
        perTurn: true,
        streamDelayMs: 40,
        steps: [{ content: [{ type: 'text', text: words(60, 'slow') }] }],
        formatter: { conversation: [{ type: 'text', content: 'Slow answer done.' }] },
      },
    },
    servers: { everything: everythingStdio({ approval: { always: ['get-sum'] } }) },
  });
  const settings = resolveServeSettings({ host: '0.0.0.0', port: 0, tokens: [{ name: 'alice', token: TOKEN }] }, {}, process.env);
  ({ app, base } = await startServeApp(h, settings));
});

afterAll(async () => {
  await app?.close();
  await h?.close();
});

function transport(): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport<UIMessage>({ api: `${base}/api/chat`, headers: AUTH });
}

const userMessage = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

/** Every snapshot of the message `stream` builds (the last is the whole message). */
async function snapshots(stream: ReadableStream<UIMessageChunk>, message?: UIMessage): Promise<UIMessage[]> {
  const out: UIMessage[] = [];
  for await (const m of readUIMessageStream<UIMessage>({ stream, ...(message ? { message } : {}), terminateOnError: true }))
    out.push(structuredClone(m));
  return out;
}

const textOf = (m: UIMessage): string =>
  m.parts
    .filter((p): p is Extract<UIMessage['parts'][number], { type: 'text' }> => p.type === 'text')
    .map((p) => p.text)
    .join('|');

type ToolPart = Extract<UIMessage['parts'][number], { type: 'dynamic-tool' }>;
const toolParts = (m: UIMessage): ToolPart[] => m.parts.filter((p): p is ToolPart => p.type === 'dynamic-tool');

/** The SSE events of a `curl -N` run (killed once `stopAfter` events came, when given). */
function curlEvents(url: string, headers: string[], stopAfter?: number): Promise<{ ids: number[]; events: TurnStreamEvent[] }> {
  return new Promise((resolve, reject) => {
    const args = ['-sN', ...headers.flatMap((x) => ['-H', x]), url];
    const curl: ChildProcess = spawn('curl', args);
    let buffer = '';
    const ids: number[] = [];
    const events: TurnStreamEvent[] = [];
    curl.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (id === undefined || data === undefined || (stopAfter !== undefined && ids.length >= stopAfter)) continue;
        ids.push(Number(id));
        events.push(JSON.parse(data) as TurnStreamEvent);
        if (stopAfter !== undefined && ids.length === stopAfter) curl.kill('SIGKILL');
      }
    });
    curl.on('error', reject);
    curl.on('close', () => resolve({ ids, events }));
  });
}

/** A GET naming `host` as its Host (fetch cannot): what a page whose DNS name was rebound sends. */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { host } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('useChat through the ai package (DefaultChatTransport, readUIMessageStream)', () => {
  const chatId = `serve-chat-${RUN}`;

  it('streams the text as it is written and the tool parts; a second message sees the first', async () => {
    const first = userMessage('u1', 'lighthouse');
    const stream = await transport().sendMessages({
      chatId,
      messages: [first],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
      body: { options: { model: 'chat' } },
    });
    const seen = await snapshots(stream);
    const last = seen.at(-1)!;
    // Progressive: the step's text grew over several snapshots before the answer was whole.
    const stepTexts = new Set(seen.map((m) => textOf(m)).filter((t) => t.includes('Done:')));
    expect(stepTexts.size).toBeGreaterThan(3);
    expect(last.id).toBe(`${chatId}-turn-1`);
    const [echo] = toolParts(last);
    expect(echo).toMatchObject({ toolName: 'everything__echo', state: 'output-available', input: { message: 'lighthouse' } });
    expect(echo!.output).toBe('Echo: lighthouse');
    expect(textOf(last)).toContain('Answer: Echo: lighthouse');
    expect(last.metadata).toMatchObject({ turnId: `${chatId}-turn-1`, status: 'completed' });
    // What the turn offered Claude: the message's first part, before its first step.
    expect(last.parts.slice(0, 2).map((p) => p.type)).toEqual(['data-tools', 'step-start']);
    expect(last.parts[0]).toMatchObject({
      data: {
        offered: expect.arrayContaining([{ name: 'everything__echo', server: 'everything', tool: 'echo' }]),
        deferred: [],
        dropped: [],
        unavailable: [],
      },
    });

    const second = await snapshots(
      await transport().sendMessages({
        chatId,
        messages: [first, last, userMessage('u2', 'harbour')],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
        body: { options: { model: 'chat' } },
      }),
    );
    expect(textOf(second.at(-1)!)).toContain('Answer: Echo: harbour');
    // The second turn's Claude request carried the first exchange (the conversation holds it).
    const turn2 = h.stub.requests.filter((r) => r.kind === 'step' && JSON.stringify(r.body.messages).includes('harbour'));
    expect(turn2.length).toBeGreaterThan(0);
    expect(JSON.stringify(turn2[0]!.body.messages)).toContain('lighthouse');
  });

  it('asks for approval, and the approval sent back through the protocol runs the call', async () => {
    const id = `${chatId}-approve`;
    const question = userMessage('a1', 'add them');
    const paused = (
      await snapshots(
        await transport().sendMessages({
          chatId: id,
          messages: [question],
          trigger: 'submit-message',
          messageId: undefined,
          abortSignal: undefined,
          body: { options: { model: 'approve' } },
        }),
      )
    ).at(-1)!;
    const [sum] = toolParts(paused);
    expect(sum).toMatchObject({ toolName: 'everything__get-sum', state: 'approval-requested' });
    expect(sum!.approval!.id).toBe(`${id}-turn-1/${sum!.toolCallId}`);
    expect(paused.metadata).toMatchObject({ turnId: `${id}-turn-1`, offset: expect.any(Number) });

    // What useChat's addToolApprovalResponse does to the part, then the re-POST.
    const answered: UIMessage = structuredClone(paused);
    const part = toolParts(answered)[0]!;
    Object.assign(part, { state: 'approval-responded', approval: { id: sum!.approval!.id, approved: true, reason: 'fine' } });
    const resumed = (
      await snapshots(
        await transport().sendMessages({ chatId: id, messages: [question, answered], trigger: 'submit-message', messageId: answered.id, abortSignal: undefined }),
        answered,
      )
    ).at(-1)!;
    expect(toolParts(resumed)[0]).toMatchObject({ state: 'output-available' });
    expect(String(toolParts(resumed)[0]!.output)).toContain('42');
    expect(textOf(resumed)).toContain('Sum: ');
    // The token's name is the approver, in the turn's result.
    const result = await h.client.workflow.getHandle(`${id}-turn-1`).result();
    expect(JSON.stringify(result)).toContain('"alice"');
  });

  it('reconnectToStream resumes an answer in flight from its start; nothing runs: no stream', async () => {
    const id = `${chatId}-resume`;
    const abort = new AbortController();
    const stream = await transport().sendMessages({
      chatId: id,
      messages: [userMessage('r1', 'go slowly')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: abort.signal,
      body: { options: { model: 'slow' } },
    });
    // Read until some text has arrived, then drop the connection (as a reloaded page does).
    const reader = stream.getReader();
    for (let texts = 0; texts < 5; ) if ((await reader.read()).value?.type === 'text-delta') texts++;
    abort.abort();
    await reader.cancel().catch(() => {});

    const again = await transport().reconnectToStream({ chatId: id });
    expect(again).not.toBeNull();
    const last = (await snapshots(again!)).at(-1)!;
    expect(textOf(last)).toContain(words(60, 'slow'));
    expect(textOf(last)).toContain('Slow answer done.');
    expect(toolParts(last)).toEqual([]);
    // Finished: nothing to resume.
    expect(await transport().reconnectToStream({ chatId: id })).toBeNull();
  });
});

describe('the /v1 API', () => {
  it('resumes an SSE stream with Last-Event-ID after a dropped connection (curl -N): no gap, no duplicate', async () => {
    const started = await fetch(`${base}/v1/turns`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'slowly please', model: 'slow' }),
    });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    const url = `${base}/v1/turns/${id}/events`;
    const firstPart = await curlEvents(url, [`Authorization: Bearer ${TOKEN}`], 12);
    expect(firstPart.ids).toEqual(Array.from({ length: 12 }, (_, i) => i));
    const rest = await curlEvents(url, [`Authorization: Bearer ${TOKEN}`, `Last-Event-ID: ${firstPart.ids.at(-1)}`]);
    const ids = [...firstPart.ids, ...rest.ids];
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i));
    const events = [...firstPart.events, ...rest.events];
    expect(events.at(-1)).toMatchObject({ type: 'finish', status: 'completed' });
    const status = (await (await fetch(`${base}/v1/turns/${id}`, { headers: AUTH })).json()) as { status: string; result: { response: unknown } };
    expect(status.status).toBe('completed');
  });

  it('lists every conversation by its first question, however it was started (as `chat` starts one, or started empty)', async () => {
    const run = Date.now().toString(36);
    // As `mcp-turns chat` sends: the conversation is created with the message, no summary given.
    const chatId = `title-chat-${run}`;
    // Both are alice's (the client API starts them for her), so her token lists them.
    const owner = tokenCaller('alice', false).owner;
    const sent = await sendOrFindMessage(h.client, chatId, 'What does chat call me?', { messageId: `m-${run}`, options: { model: 'slow' }, conversation: { taskQueue: h.taskQueue, owner } });
    await sent.sent!.outcome();
    // Started without a message, then sent one.
    const emptyId = `title-empty-${run}`;
    await startConversation(h.client, emptyId, { taskQueue: h.taskQueue, owner });
    await sendMessage(h.client, emptyId, 'A question after an empty start', { options: { model: 'slow' } });

    const listed = async () => {
      const res = await fetch(`${base}/v1/conversations?limit=200`, { headers: AUTH });
      expect(res.status).toBe(200);
      return ((await res.json()) as { conversations: Array<{ id: string; summary?: string }> }).conversations;
    };
    let rows: Awaited<ReturnType<typeof listed>> = [];
    await until(async () => {
      rows = await listed();
      return rows.some((c) => c.id === chatId) && rows.some((c) => c.id === emptyId);
    }, 'both conversations listed', 20_000);
    expect(rows.find((c) => c.id === chatId)?.summary).toBe('What does chat call me?');
    expect(rows.find((c) => c.id === emptyId)?.summary).toBe('A question after an empty start');
  });

  it('answers in the body\'s output schema: data-output parts grow in place, the last is the whole object; the token holder is the requests\' user', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'array', items: { type: 'object', properties: { day: { type: 'string' }, high: { type: 'number' } } } } }, required: ['city', 'days'] };
    const seen = await snapshots(
      await transport().sendMessages({
        chatId: `typed-chat-${RUN}`,
        messages: [userMessage('t1', 'forecast')],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
        body: { options: { model: 'claude-sonnet-4-6-typed', output: { schema } } },
      }),
    );
    const outputs = seen.map((m) => m.parts.filter((p) => p.type === 'data-output') as Array<{ data: { output: unknown; partial: boolean } }>);
    // One part, replaced as it grows.
    expect(outputs.every((parts) => parts.length <= 1)).toBe(true);
    const grown = outputs.flat().map((p) => JSON.stringify(p.data.output));
    expect(new Set(grown).size).toBeGreaterThan(2);
    expect(outputs.at(-1)![0]!.data).toEqual({ partial: false, output: { city: 'Oslo', days: [{ day: 'Mon', high: 4 }, { day: 'Tue', high: 2 }] } });
    const typed = h.stub.requests.filter((r) => r.scenario === 'claude-sonnet-4-6-typed');
    expect(typed.length).toBeGreaterThan(1);
    expect(typed.every((r) => r.body.metadata?.user_id === tokenCaller('alice', false).owner.key)).toBe(true);
  });

  it('refuses what it must, each with one line', async () => {
    const noToken = await fetch(`${base}/v1/turns/x`);
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toEqual({ error: 'missing Authorization: Bearer <token>' });
    expect((await fetch(`${base}/v1/turns/x`, { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status).toBe(401);

    const unknown = await fetch(`${base}/v1/turns/no-such-turn-${Date.now()}`, { headers: AUTH });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()) as { error: string }).toEqual({ error: expect.stringMatching(/^no turn no-such-turn-/) });

    const big = await fetch(`${base}/v1/turns`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'x'.repeat(20 * 1024 * 1024) }),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: string }).error).toMatch(/larger than 1048576 bytes/);

    const bad = await fetch(`${base}/v1/turns`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{"question": 42}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^body\.question: /);
    const notJson = await fetch(`${base}/v1/turns`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{"question": ' });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: string }).error).toMatch(/not valid JSON/);

    // A page on another origin, and a page whose DNS name was rebound to this address.
    const foreign = await fetch(`${base}/v1/approvals`, { headers: { ...AUTH, origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: string }).error).toMatch(/Origin https:\/\/evil.example may not call/);
    const rebound = await getWithHost(`${base}/v1/info`, 'evil.example:80');
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toEqual({ error: expect.stringMatching(/^Host evil.example:80 is not one of this server's names/) });

    const openapi = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    for (const p of ['/v1/turns', '/v1/turns/{id}', '/v1/turns/{id}/events', '/v1/conversations/{id}/messages', '/v1/conversations/{id}', '/v1/approvals', '/v1/approvals/{turn}/{call}', '/api/chat', '/api/chat/{id}/stream'])
      expect(Object.keys(openapi.paths)).toContain(p);
    // Every turn option is documented, from the one schema the client and the CLI check too.
    type Body = { requestBody: { content: { 'application/json': { schema: { properties: Record<string, { properties?: Record<string, unknown> }> } } } } };
    const bodyOf = (p: string): Body['requestBody']['content']['application/json']['schema'] => (openapi.paths[p] as { post: Body }).post.requestBody.content['application/json'].schema;
    const options = ['model', 'system', 'servers', 'toolset', 'context', 'maxSteps', 'maxTokens', 'format', 'tools', 'approval', 'stream', 'messageBatches'];
    expect(Object.keys(bodyOf('/v1/conversations/{id}/messages').properties.options!.properties ?? {})).toEqual(expect.arrayContaining(options));
    expect(Object.keys(bodyOf('/api/chat').properties.options!.properties ?? {})).toEqual(expect.arrayContaining(options));
    expect(Object.keys(bodyOf('/v1/turns').properties)).toEqual(expect.arrayContaining(['id', 'question', 'history', ...options]));
  });

  it('keeps the token out of every history it wrote to', async () => {
    const chats = ['', '-approve', '-resume'].map((s) => `serve-chat-${RUN}${s}`);
    for (const id of [...chats, ...chats.map((c) => `${c}-turn-1`), `serve-chat-${RUN}-turn-2`]) {
      const history = await h.client.workflow.getHandle(id).fetchHistory();
      const text = payloadsIn(history).map((p) => Buffer.from(p.data ?? []).toString('utf8')).join('\n');
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toContain(TOKEN);
      expect(JSON.stringify(history)).not.toContain(TOKEN);
    }
  });
});

describe('two serve processes on one cluster', () => {
  const servers: ChildProcess[] = [];
  afterAll(() => servers.forEach((s) => s.kill('SIGTERM')));

  /** `mcp-turns serve` on its own port against the test server; resolves with its base URL. */
  async function startServe(): Promise<string> {
    const { url, child } = await startServeProcess(h.taskQueue, { MCP_TURNS_SERVE_TOKENS: `bob:${TOKEN}` });
    servers.push(child);
    return url;
  }

  it('a stream started through one is resumed through the other', async () => {
    const [one, two] = await Promise.all([startServe(), startServe()]);
    const conversation = `serve-two-${Date.now().toString(36)}`;
    const res = await fetch(`${one}/v1/conversations/${conversation}/messages`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ text: 'from one to two', options: { model: 'slow' } }),
    });
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/^id: /gm) ?? []).length < 8) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    const turnId = (JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as TurnStreamEvent).turnId;
    const rest = await curlEvents(`${two}/v1/turns/${turnId}/events`, [`Authorization: Bearer ${TOKEN}`, `Last-Event-ID: ${ids.at(-1)}`]);
    const all = [...ids, ...rest.ids];
    expect(all).toEqual(Array.from({ length: all.length }, (_, i) => i));
    expect(rest.events.at(-1)).toMatchObject({ type: 'finish', status: 'completed' });
  });
});
