/**
 * Claude's server tools in real turns (dev server, the real SDK over HTTP to the stub, which signs
 * every server block it writes and refuses one not sent back as it came): a web search across
 * `pause_turn`, its citation in the answer's bibliography and its calls in the stream as
 * provider-executed tool events; a reply that mixes a server tool call and a call of the turn's own
 * tool; the formatter sent the server tools the transcript names; a turn through Message Batches
 * that pauses; a toolset's and the worker's server tools layered with the turn's.
 */
import { z } from 'zod';
import type { Scenario } from '../../src/stub';
import { defineTool } from '../../src/tools/define-tool';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { subscribeTurn } from '../../src/client/subscribe';
import type { TurnStreamEvent } from '../../src/core/stream-events';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { collect } from '../support/stream-events';

jest.setTimeout(120_000);

const answer = (content: string) => ({ conversation: [{ type: 'text', content }] });

const SEARCH_AND_CITE: Scenario = {
  steps: [
    {
      content: [
        { type: 'text', text: 'Searching.' },
        { type: 'server_tool_use', name: 'web_search', input: { query: '{{question}}' } },
        { type: 'web_search_tool_result', content: [{ url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows', page_age: '3 days ago' }] },
      ],
      stopReason: 'pause_turn',
    },
    {
      content: [
        {
          type: 'text',
          text: 'A workflow is durable.',
          citations: [{ type: 'web_search_result_location', url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows', cited_text: 'Workflows are durable' }],
        },
      ],
    },
  ],
  formatter: answer('A workflow is durable [1].'),
};

const MIXED: Scenario = {
  steps: [
    {
      content: [
        { type: 'server_tool_use', name: 'web_search', input: { query: 'customer 42' } },
        { type: 'tool_use', id: 'toolu_crm', name: 'crm__lookup', input: { id: '42' } },
      ],
    },
    {
      content: [
        { type: 'web_search_tool_result', content: [{ url: 'https://example.com/42', title: 'Customer 42 news' }] },
        { type: 'text', text: 'Found both: {{toolResults}}' },
      ],
    },
  ],
  formatter: answer('both'),
};

const CODE: Scenario = {
  steps: [
    {
      content: [
        { type: 'server_tool_use', name: 'bash_code_execution', input: { command: 'python -c "print(6*7)"' } },
        { type: 'bash_code_execution_tool_result', content: { type: 'bash_code_execution_result', stdout: '42\n', stderr: '', return_code: 0, content: [] } },
      ],
      stopReason: 'pause_turn',
    },
    { content: [{ type: 'text', text: 'It is 42.' }] },
  ],
  formatter: answer('It is 42.'),
};

const lookups: string[] = [];
let h: TurnHarness;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: { search: SEARCH_AND_CITE, mixed: MIXED, 'batched-search': SEARCH_AND_CITE, 'batched-mixed': MIXED, code: CODE },
    servers: {},
    tools: {
      crm: [
        defineTool({
          name: 'lookup',
          inputSchema: z.object({ id: z.string() }),
          execute: ({ id }) => {
            lookups.push(id);
            return `customer ${id}: Ada`;
          },
        }),
      ],
    },
    toolsets: { research: { serverTools: { web_fetch: { maxUses: 2 } } } },
    claude: { serverTools: { code_execution: true }, messageBatches: { maxWaitMs: 200, pollInitialMs: 100, pollMaxMs: 200 } },
  });
});
afterAll(async () => {
  await h?.close();
});

const providerEvents = (events: readonly TurnStreamEvent[]) =>
  events.filter((e) => (e.type === 'tool-input-available' || e.type === 'tool-output-available') && e.providerExecuted);

it('runs a web search across pause_turn: the paused reply goes back as it came, the citation becomes a source, the stream shows the calls as Claude\'s', async () => {
  const turnId = `search-${Date.now()}`;
  const handle = await startChatTurn(
    h.client,
    { question: 'what is a workflow', model: 'search', stream: true, servers: [], serverTools: { web_search: { maxUses: 3 }, code_execution: false } },
    { taskQueue: h.taskQueue, workflowId: turnId },
  );
  const [result, events] = await Promise.all([handle.result(), collect(subscribeTurn(h.client, turnId))]);
  expect(result.stopReason).toBe('completed');
  expect(result.steps).toBe(2);
  expect(result.usage.webSearchRequests).toBe(1);

  // The second call was sent the paused reply as its last message, unchanged (the stub verified its signatures).
  const calls = h.stub.requests.filter((r) => r.body?.model === 'search');
  const [first, second, formatter] = calls;
  expect(first!.body!.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 3, cache_control: { type: 'ephemeral' } }]);
  const resent = (second!.body!.messages as Array<{ role: string; content: unknown }>).at(-1)!;
  expect(resent.role).toBe('assistant');
  expect((resent.content as Array<{ type: string }>).map((b) => b.type)).toEqual(['text', 'server_tool_use', 'web_search_tool_result']);
  // The formatter is sent the server tool its transcript names, beside its own.
  expect((formatter!.body!.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['web_search', 'response_formatter']);

  expect(result.response.artifacts).toContainEqual(
    expect.objectContaining({
      type: 'application/vnd.bibliography',
      title: 'Sources',
      content: JSON.stringify([{ url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows', citedText: ['Workflows are durable'] }]),
    }),
  );
  const tools = events.find((e) => e.type === 'data-tools');
  expect(tools).toMatchObject({ offered: [{ name: 'web_search', providerExecuted: true }] });
  expect(providerEvents(events)).toEqual([
    expect.objectContaining({ type: 'tool-input-available', toolName: 'web_search', input: { query: 'what is a workflow' }, step: 1, providerExecuted: true }),
    expect.objectContaining({ type: 'tool-output-available', toolName: 'web_search', isError: false, output: 'Temporal Workflows · https://docs.temporal.io/workflows', providerExecuted: true }),
  ]);
});

it('runs a reply that mixes a server tool call and a call of the turn\'s own tool: only the own call gets a tool_result, the search ends in the next reply', async () => {
  lookups.length = 0;
  const turnId = `mixed-${Date.now()}`;
  const handle = await startChatTurn(h.client, { question: 'customer 42', model: 'mixed', stream: true, serverTools: { web_search: true } }, { taskQueue: h.taskQueue, workflowId: turnId });
  const [result, events] = await Promise.all([handle.result(), collect(subscribeTurn(h.client, turnId))]);
  expect(lookups).toEqual(['42']);
  expect(result.toolCalls).toEqual([expect.objectContaining({ name: 'crm__lookup', isError: false })]);
  const second = h.stub.requests.filter((r) => r.body?.model === 'mixed')[1]!;
  const results = (second.body!.messages as Array<{ role: string; content: Array<{ type: string; tool_use_id?: string }> }>).at(-1)!;
  expect(results.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id)).toEqual(['toolu_crm']);
  const provider = providerEvents(events);
  expect(provider.map((e) => [e.type, 'step' in e ? e.step : undefined])).toEqual([
    ['tool-input-available', 1],
    ['tool-output-available', undefined],
  ]);
  // The search's result came with the second reply, after the own tool's round.
  const order = events.map((e) => (e.type === 'tool-output-available' ? `${e.toolName}${e.providerExecuted ? '*' : ''}` : e.type === 'start-step' ? `step ${e.step}` : undefined)).filter(Boolean);
  expect(order).toEqual(['step 1', 'crm__lookup', 'step 2', 'web_search*']);
});

it('layers the worker\'s, the toolset\'s and the turn\'s server tools', async () => {
  await h.run({ question: 'layers', model: 'search', toolset: 'research', serverTools: { web_search: true }, format: false });
  const first = h.stub.requests.filter((r) => r.body?.model === 'search').at(-2)!;
  const serverTools = (first.body!.tools as Array<{ type?: string; name: string; max_uses?: number }>).filter((t) => t.type !== undefined);
  expect(serverTools.map(({ type, name, max_uses }) => ({ type, name, ...(max_uses ? { max_uses } : {}) }))).toEqual([
    { type: 'web_search_20250305', name: 'web_search' },
    { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 },
    { type: 'code_execution_20250825', name: 'code_execution' },
  ]);
});

it('runs a search that pauses, and a reply mixing a search with a code tool, in turns through Message Batches: each pause is another batch round', async () => {
  lookups.length = 0;
  const [result, mixed] = await Promise.all([
    h.run({ question: 'batched', model: 'batched-search', messageBatches: {}, serverTools: { web_search: true, code_execution: false } }),
    h.run({ question: 'batched mixed', model: 'batched-mixed', messageBatches: {}, serverTools: { web_search: true, code_execution: false } }),
  ]);
  expect(mixed.toolCalls).toEqual([expect.objectContaining({ name: 'crm__lookup', isError: false })]);
  expect(lookups).toEqual(['42']);
  expect(result.stopReason).toBe('completed');
  expect(result.steps).toBe(2);
  expect(result.usage.webSearchRequests).toBe(1);
  expect(result.response.artifacts.map((a) => a.type)).toContain('application/vnd.bibliography');
  const batched = h.stub.messageBatches.batches.flatMap((b) => b.requests).filter((r) => r.question === 'batched');
  expect(batched.length).toBe(3); // two steps, the formatter
});

it('runs code: the turn goes on in the container its first call ran in, and counts the code it ran (billed by container time, outside the cost)', async () => {
  const result = await h.run({ question: 'six times seven', model: 'code', servers: [] });
  expect(result.usage.codeExecutions).toBe(1);
  const [first, second, formatter] = h.stub.requests.filter((r) => r.body?.model === 'code');
  expect(first!.body!.container).toBeUndefined();
  expect(second!.body!.container).toMatch(/^container_/);
  expect(formatter!.body!.container).toBe(second!.body!.container);
  expect(result.response.conversation).toBe('It is 42.');
});
