/**
 * Server tools (web search, web fetch, code execution, tool search) in the stub, through the real
 * Anthropic SDK over HTTP: the blocks it answers, pause_turn, streaming, batches, and the requests
 * it refuses as the API does (with the API's 400 naming the field).
 */
import Anthropic from '@anthropic-ai/sdk';
import { startStubModel, type Scenario, type StubModel } from '../../src/stub';

type Params = Anthropic.MessageCreateParamsNonStreaming;
type Block = Anthropic.ContentBlock;

const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 } as const;
const webFetch = { type: 'web_fetch_20250910', name: 'web_fetch', max_content_tokens: 1000 } as const;
const echo = { name: 'everything__echo', input_schema: { type: 'object' as const, properties: { message: { type: 'string' } } } };
const webTools = [webSearch, webFetch] as Anthropic.ToolUnion[];

const fetched = {
  type: 'web_fetch_result',
  url: 'https://example.com/a',
  retrieved_at: null,
  content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A says hello' }, title: 'A', citations: null },
};

const scenarios: Record<string, Scenario> = {
  search: {
    steps: [
      {
        content: [
          { type: 'text', text: 'Let me search.' },
          { type: 'server_tool_use', name: 'web_search', input: { query: '{{question}}' } },
          {
            type: 'web_search_tool_result',
            content: [
              { url: 'https://example.com/a', title: 'A about {{question}}', page_age: '2 days ago' },
              { url: 'https://example.com/b', title: 'B' },
            ],
          },
        ],
        stopReason: 'pause_turn',
      },
      {
        content: [
          { type: 'server_tool_use', name: 'web_fetch', input: { url: 'https://example.com/a' } },
          { type: 'web_fetch_tool_result', content: fetched },
          {
            type: 'text',
            text: 'A says hello.',
            citations: [{ type: 'web_search_result_location', url: 'https://example.com/a', title: 'A about {{question}}', cited_text: 'A says hello' }],
          },
        ],
      },
    ],
  },
  twice: {
    steps: [
      {
        content: [
          { type: 'server_tool_use', name: 'web_search', input: { query: 'one' } },
          { type: 'server_tool_use', name: 'web_search', input: { query: 'two' } },
          { type: 'web_search_tool_result', content: [{ url: 'https://one.example', title: 'One' }] },
          { type: 'web_search_tool_result', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } },
          { type: 'server_tool_use', name: 'web_fetch', input: { url: 'https://one.example' } },
          { type: 'web_fetch_tool_result', content: fetched },
          { type: 'text', text: 'done' },
        ],
      },
    ],
  },
  mixed: {
    steps: [
      {
        content: [
          { type: 'text', text: 'Searching and echoing.' },
          { type: 'server_tool_use', name: 'web_search', input: { query: '{{question}}' } },
          { type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } },
        ],
      },
      {
        content: [
          { type: 'web_search_tool_result', content: [{ url: 'https://example.com/m', title: 'M' }] },
          { type: 'text', text: 'Found it; the echo said {{toolResults}}' },
        ],
      },
    ],
  },
  code: {
    steps: [
      {
        content: [
          { type: 'server_tool_use', name: 'bash_code_execution', input: { command: 'ls' } },
          { type: 'bash_code_execution_tool_result', content: { type: 'bash_code_execution_result', stdout: 'a.txt\n', stderr: '', return_code: 0, content: [] } },
          { type: 'text', text: 'One file.' },
        ],
      },
    ],
  },
  'tool-search': {
    steps: [
      {
        content: [
          { type: 'server_tool_use', name: 'tool_search_tool_regex', input: { query: 'echo' } },
          {
            type: 'tool_search_tool_result',
            content: { type: 'tool_search_tool_search_result', tool_references: [{ type: 'tool_reference', tool_name: 'everything__echo' }] },
          },
          { type: 'tool_use', name: 'everything__echo', input: { message: 'hi' } },
        ],
      },
    ],
  },
  plain: { steps: [{ content: [{ type: 'text', text: 'fine' }] }] },
};

let stub: StubModel;
let client: Anthropic;

beforeAll(async () => {
  stub = await startStubModel({ scenarios, messageBatches: { processingMs: 20 } });
  client = new Anthropic({ apiKey: 'test', baseURL: stub.url, maxRetries: 0 });
});
afterAll(() => stub.close());

const ask = (extra: Partial<Params> = {}): Promise<Anthropic.Message> =>
  client.messages.create({ model: 'search', max_tokens: 100, tools: webTools, messages: [{ role: 'user', content: 'q' }], ...extra });

/** The 400 the stub answers `extra` with: its status and type checked, its message returned. */
async function refusal(extra: Partial<Params>): Promise<string> {
  const err = await ask(extra).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof Anthropic.APIError)) throw new Error('the request was accepted');
  expect(err.status).toBe(400);
  const body = err.error as { error: { type: string; message: string } };
  expect(body.error.type).toBe('invalid_request_error');
  return body.error.message;
}

/** A JSON copy of the content with `edit` applied to block `index` (another copy each call). */
function edited(content: Block[], index: number, edit: (b: Record<string, unknown>) => void): Anthropic.ContentBlockParam[] {
  const copy = JSON.parse(JSON.stringify(content)) as Array<Record<string, unknown>>;
  edit(copy[index]!);
  return copy as never;
}

const history = (assistant: Anthropic.ContentBlockParam[] | Block[], ...more: Anthropic.MessageParam[]): Anthropic.MessageParam[] => [
  { role: 'user', content: 'q' },
  { role: 'assistant', content: assistant },
  ...more,
];

describe('answers', () => {
  it('a web search with pause_turn, then the continuation that sends the paused content back', async () => {
    const first = await ask();
    expect(first.stop_reason).toBe('pause_turn');
    expect(first.content.map((b) => b.type)).toEqual(['text', 'server_tool_use', 'web_search_tool_result']);
    const [, use, result] = first.content as [Anthropic.TextBlock, Anthropic.ServerToolUseBlock, Anthropic.WebSearchToolResultBlock];
    expect(use).toEqual({ type: 'server_tool_use', id: expect.stringMatching(/^srvtoolu_[0-9a-f]{24}$/), name: 'web_search', input: { query: 'q' }, caller: { type: 'direct' } });
    expect(result).toEqual({
      type: 'web_search_tool_result',
      tool_use_id: use.id,
      caller: { type: 'direct' },
      content: [
        { type: 'web_search_result', url: 'https://example.com/a', title: 'A about q', page_age: '2 days ago', encrypted_content: expect.any(String) },
        { type: 'web_search_result', url: 'https://example.com/b', title: 'B', page_age: null, encrypted_content: expect.any(String) },
      ],
    });
    expect(first.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
    expect('container' in first).toBe(false);
    // Deterministic per request, different per question.
    expect((await ask()).content).toEqual(first.content);
    const other = await ask({ messages: [{ role: 'user', content: 'other' }] });
    expect((other.content[1] as Anthropic.ServerToolUseBlock).id).not.toBe(use.id);

    const second = await ask({ messages: history(first.content) });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content.map((b) => b.type)).toEqual(['server_tool_use', 'web_fetch_tool_result', 'text']);
    expect(second.content[1]).toMatchObject({ tool_use_id: (second.content[0] as Anthropic.ServerToolUseBlock).id, content: fetched });
    expect(second.content[2]).toEqual({
      type: 'text',
      text: 'A says hello.',
      citations: [{ type: 'web_search_result_location', url: 'https://example.com/a', title: 'A about q', cited_text: 'A says hello', encrypted_index: expect.any(String) }],
    });
    expect(second.usage.server_tool_use).toEqual({ web_search_requests: 0, web_fetch_requests: 1 });

    // The whole transcript goes back with the next question, cache markers and all.
    const marked = JSON.parse(JSON.stringify(second.content)) as Array<Record<string, unknown>>;
    marked[1]!.cache_control = { type: 'ephemeral' };
    await expect(
      ask({ messages: history(first.content, { role: 'assistant', content: marked as never }, { role: 'user', content: 'thanks' }) }),
    ).resolves.toMatchObject({ type: 'message' });
  });

  it('counts the web searches and fetches of a step in usage.server_tool_use; results answer their calls in order', async () => {
    const m = await ask({ model: 'twice' });
    expect(m.usage.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 1 });
    const ids = m.content.filter((b) => b.type === 'server_tool_use').map((b) => b.id);
    const answered = m.content.filter((b) => b.type.endsWith('_tool_result')).map((b) => (b as { tool_use_id: string }).tool_use_id);
    expect(answered).toEqual(ids);
    expect(m.content[3]).toMatchObject({ content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } });
    await expect(ask({ model: 'twice', messages: history(m.content, { role: 'user', content: 'more' }) })).resolves.toMatchObject({ type: 'message' });
    // Without server tool blocks, usage.server_tool_use stays null.
    expect((await ask({ model: 'plain' })).usage.server_tool_use).toBeNull();
  });

  it('a server_tool_use without its result beside a client tool_use stops with tool_use; the result comes after the tool_result', async () => {
    const tools = [webSearch, echo] as Anthropic.ToolUnion[];
    const first = await ask({ model: 'mixed', tools });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content.map((b) => b.type)).toEqual(['text', 'server_tool_use', 'tool_use']);
    const search = first.content[1] as Anthropic.ServerToolUseBlock;
    const call = first.content[2] as Anthropic.ToolUseBlock;
    const answered = history(first.content, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Echo: q' }] });
    const second = await ask({ model: 'mixed', tools, messages: answered });
    expect(second.content).toMatchObject([
      { type: 'web_search_tool_result', tool_use_id: search.id },
      { type: 'text', text: 'Found it; the echo said Echo: q' },
    ]);
    await expect(
      ask({ model: 'mixed', tools, messages: [...answered, { role: 'assistant', content: second.content }, { role: 'user', content: 'next' }] }),
    ).resolves.toMatchObject({ type: 'message' });
  });

  it('names the container of a step that runs code; a request naming one gets it back', async () => {
    const tools = [{ type: 'code_execution_20250825', name: 'code_execution' }] as Anthropic.ToolUnion[];
    const m = await ask({ model: 'code', tools });
    expect(m.content.map((b) => b.type)).toEqual(['server_tool_use', 'bash_code_execution_tool_result', 'text']);
    expect(m.container).toEqual({ id: expect.stringMatching(/^container_[0-9a-f]{24}$/), expires_at: expect.any(String), skills: null });
    expect(Date.parse(m.container!.expires_at)).toBeGreaterThan(Date.now());
    expect(m.usage.server_tool_use).toEqual({ web_search_requests: 0, web_fetch_requests: 0 });
    expect((await ask({ model: 'code', tools, container: 'container_mine' })).container?.id).toBe('container_mine');
    // A web search version that filters by running code allows the code execution blocks too.
    const filtering = [{ type: 'web_search_20260318', name: 'web_search' }] as Anthropic.ToolUnion[];
    await expect(ask({ model: 'code', tools: filtering, messages: history(m.content, { role: 'user', content: 'more' }) })).resolves.toMatchObject({ type: 'message' });
    expect(await refusal({ model: 'code', tools: webTools, messages: history(m.content, { role: 'user', content: 'more' }) })).toBe(
      'messages.1.content.0: `server_tool_use` block calls `bash_code_execution`, a server tool not defined in `tools`',
    );
  });

  it('a tool search result, whose tool_reference must name a tool of the request', async () => {
    const search = { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' };
    const tools = [search, { ...echo, defer_loading: true }] as Anthropic.ToolUnion[];
    const first = await ask({ model: 'tool-search', tools });
    expect(first.content.map((b) => b.type)).toEqual(['server_tool_use', 'tool_search_tool_result', 'tool_use']);
    const call = first.content[2] as Anthropic.ToolUseBlock;
    const answered = history(first.content, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Echo: hi' }] });
    await expect(ask({ model: 'tool-search', tools, messages: answered })).resolves.toMatchObject({ type: 'message' });
    const other = { name: 'other', input_schema: { type: 'object' as const } };
    expect(await refusal({ model: 'tool-search', tools: [search, other] as Anthropic.ToolUnion[], messages: answered })).toBe(
      "messages.1.content.1.content.tool_references.0: Tool reference 'everything__echo' not found in available tools",
    );
    // Client-side tool search answers with tool_reference blocks in a tool_result.
    const clientSearch = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_find', name: 'find_tools', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_find', content: [{ type: 'tool_reference', tool_name: 'missing' }] }] },
    ] as Anthropic.MessageParam[];
    expect(await refusal({ model: 'plain', tools: [{ name: 'find_tools', input_schema: { type: 'object' } }], messages: clientSearch })).toBe(
      "messages.2.content.0.content.0: Tool reference 'missing' not found in available tools",
    );
  });

  it('streams server tool blocks as the API does, and the SDK reassembles the plain message', async () => {
    const cases: Array<Partial<Params>> = [
      {},
      { messages: history((await ask()).content) },
      { model: 'twice' },
      { model: 'mixed', tools: [webSearch, echo] as Anthropic.ToolUnion[] },
      { model: 'code', tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] as Anthropic.ToolUnion[] },
    ];
    const sent = (m: Anthropic.Message): unknown => {
      const { id: _id, parsed_output: _parsed, ...rest } = m as Anthropic.Message & { parsed_output?: unknown };
      return JSON.parse(JSON.stringify(rest));
    };
    for (const extra of cases) {
      const plain = await ask(extra);
      const stream = client.messages.stream({ model: 'search', max_tokens: 100, tools: webTools, messages: [{ role: 'user', content: 'q' }], ...extra });
      const events: Anthropic.MessageStreamEvent[] = [];
      for await (const e of stream) events.push(e);
      const final = await stream.finalMessage();
      expect(sent(final)).toEqual(sent(plain));

      const starts = events.flatMap((e) => (e.type === 'content_block_start' ? [e] : []));
      const deltas = (index: number) => events.flatMap((e) => (e.type === 'content_block_delta' && e.index === index ? [e.delta] : []));
      plain.content.forEach((block, index) => {
        const start = starts[index]!.content_block;
        if (block.type === 'server_tool_use') {
          // The block with an empty input, then its input as JSON in pieces.
          expect(start).toEqual({ ...block, input: {} });
          const json = deltas(index).map((d) => (d.type === 'input_json_delta' ? d.partial_json : '?'));
          expect(json.join('')).toBe(JSON.stringify(block.input));
        } else if (block.type.endsWith('_tool_result')) {
          expect(start).toEqual(block);
          expect(deltas(index)).toEqual([]);
        } else if (block.type === 'text') {
          expect(start).toEqual({ type: 'text', text: '', citations: null });
          const citations = deltas(index).flatMap((d) => (d.type === 'citations_delta' ? [d.citation] : []));
          expect(citations).toEqual(block.citations ?? []);
        }
      });
      const delta = events.find((e) => e.type === 'message_delta')!;
      expect(delta.type === 'message_delta' && delta.delta.container).toEqual(plain.container ?? undefined);
    }
  });

  it('answers the same server blocks and pause_turn in a Message Batch', async () => {
    const paused = await ask();
    const requests = [
      { custom_id: 'first', params: { model: 'search', max_tokens: 100, tools: webTools, messages: [{ role: 'user' as const, content: 'q' }] } },
      { custom_id: 'continued', params: { model: 'search', max_tokens: 100, tools: webTools, messages: history(paused.content) } },
      { custom_id: 'edited', params: { model: 'search', max_tokens: 100, tools: webTools, messages: history(edited(paused.content, 1, (b) => (b.input = { query: 'x' }))) } },
    ];
    const batch = await client.messages.batches.create({ requests });
    while ((await client.messages.batches.retrieve(batch.id)).processing_status !== 'ended') await new Promise((r) => setTimeout(r, 20));
    const results = new Map<string, Anthropic.Messages.MessageBatchResult>();
    for await (const r of await client.messages.batches.results(batch.id)) results.set(r.custom_id, r.result);
    const first = results.get('first')!;
    if (first.type !== 'succeeded') throw new Error(first.type);
    expect(first.message.stop_reason).toBe('pause_turn');
    expect(first.message.content).toEqual(paused.content);
    expect(first.message.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
    const continued = results.get('continued')!;
    if (continued.type !== 'succeeded') throw new Error(continued.type);
    expect(continued.message.content).toEqual((await ask({ messages: history(paused.content) })).content);
    expect(results.get('edited')).toMatchObject({ type: 'errored', error: { error: { type: 'invalid_request_error', message: expect.stringMatching(/^messages\.1\.content\.1: `server_tool_use` block/) } } });
  });
});

describe('refuses server blocks not sent back as the API returned them', () => {
  let paused: Anthropic.Message;
  let finished: Anthropic.Message;
  beforeAll(async () => {
    paused = await ask();
    finished = await ask({ messages: history(paused.content) });
  });
  const SEND_BACK = 'send server tool blocks back exactly as the API returned them';

  it('an edited encrypted_content, or an edited search result', async () => {
    const content = edited(paused.content, 2, (b) => ((b.content as Array<Record<string, unknown>>)[0]!.encrypted_content = 'forged'));
    const message = 'messages.1.content.2.content.0.encrypted_content: Invalid `encrypted_content` in `web_search_result` block';
    expect(await refusal({ messages: history(content) })).toBe(message);
    const url = edited(paused.content, 2, (b) => ((b.content as Array<Record<string, unknown>>)[0]!.url = 'https://evil.example'));
    expect(await refusal({ messages: history(url) })).toBe(message);
    // A search result dropped from the list: each result is still signed, the list is not as sent.
    const fewer = edited(paused.content, 2, (b) => (b.content as unknown[]).pop());
    expect(await refusal({ messages: history(fewer) })).toBe(`messages.1.content.2: \`web_search_tool_result\` block for ${(paused.content[1] as Anthropic.ServerToolUseBlock).id} was changed: ${SEND_BACK}`);
  });

  it('an edited server_tool_use, or a changed web fetch result', async () => {
    const id = (paused.content[1] as Anthropic.ServerToolUseBlock).id;
    const input = edited(paused.content, 1, (b) => (b.input = { query: 'something else' }));
    expect(await refusal({ messages: history(input) })).toBe(`messages.1.content.1: \`server_tool_use\` block ${id} was changed (its \`name\`, \`input\` or \`caller\`): ${SEND_BACK}`);
    const fetchId = (finished.content[0] as Anthropic.ServerToolUseBlock).id;
    const page = edited(finished.content, 1, (b) => ((b.content as typeof fetched).url = 'https://example.com/other'));
    expect(await refusal({ messages: history(paused.content, { role: 'assistant', content: page }, { role: 'user', content: 'more' }) })).toBe(
      `messages.2.content.1: \`web_fetch_tool_result\` block for ${fetchId} was changed: ${SEND_BACK}`,
    );
  });

  it('a dropped result or a dropped server_tool_use', async () => {
    const id = (paused.content[1] as Anthropic.ServerToolUseBlock).id;
    const noResult = (JSON.parse(JSON.stringify(paused.content)) as Block[]).slice(0, 2);
    expect(await refusal({ messages: history(noResult) })).toBe(`messages.1.content.1: the result block sent with \`server_tool_use\` ${id} is missing: ${SEND_BACK}`);
    const noCall = (JSON.parse(JSON.stringify(paused.content)) as Block[]).filter((b) => b.type !== 'server_tool_use');
    expect(await refusal({ messages: history(noCall) })).toBe(
      `messages.1.content.1: \`web_search_tool_result\` block for ${id} has no \`server_tool_use\` block with that id before it`,
    );
  });

  it('edited cited text or citation', async () => {
    const message = 'messages.2.content.2.citations.0.encrypted_index: Invalid `encrypted_index` in `web_search_result_location` citation (the citation or its text block was changed)';
    const text = edited(finished.content, 2, (b) => (b.text = 'A says goodbye.'));
    expect(await refusal({ messages: history(paused.content, { role: 'assistant', content: text }, { role: 'user', content: 'more' }) })).toBe(message);
    const cited = edited(finished.content, 2, (b) => ((b.citations as Array<Record<string, unknown>>)[0]!.cited_text = 'A says'));
    expect(await refusal({ messages: history(paused.content, { role: 'assistant', content: cited }, { role: 'user', content: 'more' }) })).toBe(message);
  });

  it('a tool_result for a server_tool_use', async () => {
    const id = (paused.content[1] as Anthropic.ServerToolUseBlock).id;
    const answered = history(paused.content, { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'results' }] });
    expect(await refusal({ messages: answered })).toBe(
      `messages.2.content.0: \`tool_result\` block for ${id}, a \`server_tool_use\` block: the API runs server tools itself and takes no \`tool_result\` for them`,
    );
  });

  it('a server_tool_use of a server tool the request does not define', async () => {
    expect(await refusal({ tools: [echo], messages: history(paused.content, { role: 'user', content: 'more' }) })).toBe(
      'messages.1.content.1: `server_tool_use` block calls `web_search`, a server tool not defined in `tools`',
    );
    expect(await refusal({ tools: [webFetch] as Anthropic.ToolUnion[], messages: history(paused.content) })).toBe(
      'messages.1.content.1: `server_tool_use` block calls `web_search`, a server tool not defined in `tools`',
    );
  });
});

describe('refuses requests the API refuses', () => {
  it('allowed_domains with blocked_domains, and an empty domain list', async () => {
    const both = { ...webSearch, allowed_domains: ['example.com'], blocked_domains: ['evil.example'] };
    expect(await refusal({ tools: [both] as Anthropic.ToolUnion[] })).toBe('tools.0.web_search_20250305: Cannot specify both allowed_domains and blocked_domains in the same request');
    const fetchBoth = { ...webFetch, allowed_domains: ['example.com'], blocked_domains: ['evil.example'] };
    expect(await refusal({ tools: [webSearch, fetchBoth] as Anthropic.ToolUnion[] })).toBe('tools.1.web_fetch_20250910: Cannot specify both allowed_domains and blocked_domains in the same request');
    expect(await refusal({ tools: [{ ...webSearch, blocked_domains: [] }] as Anthropic.ToolUnion[] })).toBe(
      'tools.0.web_search_20250305.blocked_domains: Empty list of domains is ambiguous. Provide at least one domain or null.',
    );
  });

  it("a field of the other web tool, a server tool's wrong name, an unknown type, a bad max_uses", async () => {
    const located = { ...webFetch, user_location: { type: 'approximate', city: 'Paris' } };
    expect(await refusal({ tools: [located] as never })).toBe('tools.0.web_fetch_20250910.user_location: Extra inputs are not permitted');
    expect(await refusal({ tools: [{ ...webSearch, max_content_tokens: 10 }] as never })).toBe('tools.0.web_search_20250305.max_content_tokens: Extra inputs are not permitted');
    expect(await refusal({ tools: [{ ...webSearch, citations: { enabled: true } }] as never })).toBe('tools.0.web_search_20250305.citations: Extra inputs are not permitted');
    expect(await refusal({ tools: [{ type: 'web_fetch_20260318', name: 'fetch' }] as never })).toBe("tools.0.web_fetch_20260318.name: Input should be 'web_fetch'");
    expect(await refusal({ tools: [{ type: 'web_search_20991231', name: 'web_search' }] as never })).toMatch(
      /^tools\.0: Input tag 'web_search_20991231' found using 'type' does not match any of the expected tags: 'custom', 'web_search_20250305', /,
    );
    expect(await refusal({ tools: [{ ...webSearch, max_uses: 0 }] as never })).toBe('tools.0.web_search_20250305.max_uses: Input should be an integer greater than 0');
    expect(await refusal({ tools: [webSearch, { name: 'web_search', input_schema: { type: 'object' } }] as never })).toBe('tools: Tool names must be unique. Duplicate: web_search');
    // Every web tool version, with its own fields, is accepted.
    const all = [
      { type: 'web_search_20260209', name: 'web_search', user_location: { type: 'approximate', city: 'Paris' }, allowed_domains: ['example.com'] },
      { type: 'web_fetch_20260309', name: 'web_fetch', citations: { enabled: true }, use_cache: false, blocked_domains: ['evil.example'] },
      { type: 'code_execution_20250825', name: 'code_execution' },
      { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
    ];
    await expect(ask({ model: 'plain', tools: all as never })).resolves.toMatchObject({ content: [{ text: 'fine' }] });
  });

  it('defer_loading without a tool search tool, and every tool deferred', async () => {
    const deferred = { ...echo, defer_loading: true };
    expect(await refusal({ model: 'plain', tools: [webSearch, deferred] as Anthropic.ToolUnion[] })).toBe(
      'tools.1.custom.defer_loading: Tools with defer_loading=true require a tool search tool (`tool_search_tool_regex_20251119` or `tool_search_tool_bm25_20251119`) in `tools`',
    );
    const search = { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25', defer_loading: true };
    expect(await refusal({ model: 'plain', tools: [search, deferred] as Anthropic.ToolUnion[] })).toBe('tools: At least one tool must have defer_loading=false. All tools cannot be deferred.');
    await expect(ask({ model: 'plain', tools: [{ ...search, defer_loading: false }, deferred] as Anthropic.ToolUnion[] })).resolves.toMatchObject({ type: 'message' });
  });

  it('citations in a user turn', async () => {
    const citation = { type: 'web_search_result_location' as const, url: 'https://example.com/a', title: 'A', cited_text: 'A', encrypted_index: 'x' };
    expect(await refusal({ model: 'plain', messages: [{ role: 'user', content: [{ type: 'text', text: 'q', citations: [citation] }] }] })).toBe(
      "messages.0.content.0.citations: text blocks in `user` messages may not carry citations; only the assistant's text does",
    );
  });

  it('tool_use and tool_result blocks without tools', async () => {
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
    ];
    expect(await refusal({ model: 'plain', tools: [], messages })).toBe('messages.1.content.0: Requests which include `tool_use` or `tool_result` blocks must define tools.');
  });
});
