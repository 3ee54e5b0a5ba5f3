/**
 * MCP servers as they are in the wild, in real turns (dev server, real stdio server written with the
 * MCP SDK, the stub refusing tool definitions as the Messages API does): tools whose input schemas
 * have top-level allOf, anyOf and oneOf are offered in a form Claude accepts, Claude's calls are
 * checked against the original schemas and run; a tool no form fits is dropped with the reason;
 * a tool call records the attempts it made; a server that dies at start is reported with its
 * traceback's last line. The schema server runs in each protocol era and the same holds in both
 * (in the modern era a non-object root schema crosses the SDK's wire codec through
 * src/mcp/lenient-transport.ts).
 */
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import type { Scenario } from '../../src/stub';
import { questionOf, startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { MCP_ERAS, SCHEMAS, crashingStdio, schemasStdio, type McpEra } from '../support/mcp-servers';

jest.setTimeout(120_000);

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, name, input });
const answer = (content: string) => ({ conversation: [{ type: 'text', content }] });

const scenarios: Record<string, Scenario> = {
  schemas: {
    steps: [
      {
        content: [
          use('s__create_event', { title: 'Standup', date: '2026-01-05', attendees: ['ana'] }),
          use('s__find_project', { full_path: 'group/project' }),
          use('s__draw', { color: 'red', shape: 'circle', radius: 2 }),
        ],
      },
      // Valid for the merged form Claude sees (radius and side are both optional there), not for the original oneOf.
      { content: [use('s__draw', { color: 'red', shape: 'circle', side: 2 })] },
      { content: [text('done: {{toolResults}}')] },
    ],
    formatter: answer('{{toolResults}}'),
  },
  'no-tools': { steps: [{ content: [text('answered without tools')] }], formatter: answer('answered without tools') },
  attempts: {
    steps: [{ content: [use('s__refuse', {}), use('s__broken', {}), use('s__echo', { message: 'hi' })] }, { content: [text('seen')] }],
    formatter: answer('seen'),
  },
};

const DB_PASSWORD = 'db-pass-40c2d1-worker-only';
const RETRY = { maximum_attempts: 3, initial_interval_ms: 100, backoff_coefficient: 1, maximum_interval_ms: 100 };

/**
 * The schema server's tools exactly as it publishes them in `era`, read as raw JSON-RPC over its
 * stdio: legacy after `initialize`; modern with the revision's `_meta` on the request itself. (No
 * SDK client: the modern one's wire codec refuses a list with a non-object root schema.)
 */
async function publishedTools(era: McpEra): Promise<Array<{ name: string; inputSchema: Record<string, unknown> }>> {
  const child = spawn(process.execPath, [SCHEMAS], {
    env: { ...process.env, MCP_FIXTURE_ERA: era },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const answers = new Map<number, (result: unknown) => void>();
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as { id?: number; result?: unknown };
    if (m.id !== undefined) answers.get(m.id)?.(m.result ?? m);
  });
  const send = (message: Record<string, unknown>) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  const request = (id: number, method: string, params: Record<string, unknown>) =>
    new Promise<unknown>((resolve) => {
      answers.set(id, resolve);
      send({ id, method, params });
    });
  const clientInfo = { name: 'test', version: '1.0.0' };
  try {
    if (era === 'legacy') {
      await request(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo });
      send({ method: 'notifications/initialized' });
    }
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': clientInfo,
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const list = (await request(2, 'tools/list', era === 'modern' ? { _meta: meta } : {})) as {
      tools: Array<{ name: string; inputSchema: Record<string, unknown> }>;
    };
    return list.tools.map(({ name, inputSchema }) => ({ name, inputSchema }));
  } finally {
    child.kill();
  }
}

describe.each(MCP_ERAS)('a schema server of the %s era', (era) => {
  let h: TurnHarness;

  beforeAll(async () => {
    h = await startTurnHarness({ scenarios, servers: { s: schemasStdio({ retry: RETRY }, era) } });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function askStub(tools: unknown[]): Promise<{ status: number; message?: string }> {
    const res = await fetch(`${h.stub.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'schemas', max_tokens: 100, tools, messages: [{ role: 'user', content: 'q' }] }),
    });
    const body = (await res.json()) as { error?: { type?: string; message?: string } };
    return { status: res.status, ...(body.error?.message ? { message: `${body.error.type}: ${body.error.message}` } : {}) };
  }

  it('offering the schemas as published (the old way: type pinned to object) fails the whole request, as the API does', async () => {
    const published = await publishedTools(era);
    expect(published.map((t) => t.name)).toEqual(['create_event', 'find_project', 'draw', 'shout', 'echo', 'refuse', 'broken']);
    const asBefore = published.map((t) => ({ name: `s__${t.name}`, input_schema: { ...t.inputSchema, type: 'object' } }));
    expect(await askStub(asBefore)).toEqual({
      status: 400,
      message: 'invalid_request_error: tools.0.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level',
    });
    // One such tool among good ones is enough.
    const echo = asBefore.find((t) => t.name === 's__echo')!;
    expect((await askStub([echo, asBefore[2]])).message).toMatch(/^invalid_request_error: tools\.1\.custom\.input_schema: input_schema does not support/);
    expect((await askStub([echo])).status).toBe(200);
  });

  it('offers the allOf, anyOf and oneOf tools in an accepted form; the calls are checked against the original schemas and run', async () => {
    const question = 'make an event, find a project, draw shapes';
    const result = await h.run({ question, model: 'schemas', servers: ['s'] });
    expect(result.stopReason).toBe('completed');

    // Every Claude request of the turn was accepted by the stub, which refuses what the API refuses.
    const requests = h.stub.requests.filter((r) => questionOf(r) === question);
    expect(requests.length).toBeGreaterThanOrEqual(4);
    expect(requests.every((r) => r.status === 200)).toBe(true);
    const offered = Object.fromEntries(
      (requests[0]!.body.tools as Array<{ name: string; input_schema: Record<string, unknown> }>).map((t) => [t.name, t.input_schema]),
    );
    expect(Object.keys(offered)).toEqual(['s__create_event', 's__find_project', 's__draw', 's__echo', 's__refuse', 's__broken']);
    for (const schema of Object.values(offered)) {
      expect(schema.type).toBe('object');
      for (const k of ['allOf', 'anyOf', 'oneOf']) expect(schema).not.toHaveProperty(k);
    }
    expect(offered.s__create_event).toMatchObject({ required: ['title', 'date'], properties: { date: { $ref: '#/$defs/when' } } });
    expect(offered.s__find_project!.description).toBe('The arguments take one or more of these forms:\n1. id (required)\n2. full_path (required)');
    expect(offered.s__draw).toMatchObject({ required: ['color', 'shape'], properties: { shape: { enum: ['circle', 'square'] } } });

    // The tool no object schema fits is left out, with the reason; the others are offered all the same.
    expect(result.droppedTools).toEqual([
      { name: 's__shout', reason: 'input schema cannot be offered to Claude: its input schema describes "string", not an object' },
    ]);

    expect(result.toolCalls.map((c) => [c.tool, c.isError, c.attempts])).toEqual([
      ['create_event', false, 1],
      ['find_project', false, 1],
      ['draw', false, 1],
      ['draw', true, 1],
    ]);
    const results = JSON.stringify(result.messages);
    expect(results).toContain('create_event ran with {\\"title\\":\\"Standup\\",\\"date\\":\\"2026-01-05\\",\\"attendees\\":[\\"ana\\"]}');
    expect(results).toContain('find_project ran with {\\"full_path\\":\\"group/project\\"}');
    expect(results).toContain('draw ran with {\\"color\\":\\"red\\",\\"shape\\":\\"circle\\",\\"radius\\":2}');
    // The second draw fits the merged form but not the server's oneOf: refused in the worker, never sent.
    expect(result.toolCalls[3]!.error).toMatch(/^Invalid arguments for draw: .*must match exactly one schema in oneOf/);
  });

  it('records the attempts each tool call made: one for a refusal that cannot succeed on retry, all for a failure retried to the end', async () => {
    const result = await h.run({ question: 'try the failing tools', model: 'attempts', servers: ['s'] });
    expect(result.toolCalls.map((c) => [c.tool, c.isError, c.attempts])).toEqual([
      ['refuse', true, 1],
      ['broken', true, 3],
      ['echo', false, 1],
    ]);
    expect(result.toolCalls[0]!.error).toMatch(/refused: these arguments can never work/);
    expect(result.toolCalls[1]!.error).toMatch(/internal trouble/);
  });

  it('connects once, in its era', () => {
    expect(h.pool.status()[0]).toMatchObject({ server: 's', era, connected: true, spawned: 1 });
  });
});

// No era: the server dies before it speaks MCP.
describe('a server that dies at start', () => {
  let h: TurnHarness;

  beforeAll(async () => {
    h = await startTurnHarness({ scenarios, servers: { inventory: crashingStdio(DB_PASSWORD) } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('reports a server that dies at start with its traceback\'s last line (secret redacted) in unavailableServers and to Claude', async () => {
    const question = 'what is in stock?';
    const result = await h.run({ question, model: 'no-tools', servers: ['inventory'] });
    expect(result.unavailableServers).toEqual([
      {
        server: 'inventory',
        reason: expect.stringMatching(
          /^connect to inventory failed: Connection closed; server stderr: .*\| ConnectionError: could not reach the database at postgres:\/\/app:\[redacted\]@db:5432\/inventory$/,
        ),
      },
    ]);
    const system = JSON.stringify(h.stub.requests.find((r) => questionOf(r) === question)!.body.system);
    expect(system).toContain('ConnectionError: could not reach the database');
    expect(JSON.stringify(result)).not.toContain(DB_PASSWORD);
  });
});
