/**
 * Answers in the caller's shape, and requests as the caller sets them, in real turns (dev server,
 * the real SDK over HTTP to the stub, which refuses what the API refuses): a nested schema written
 * without `additionalProperties` answered with structured outputs; an answer that does not validate
 * repaired once, or reported; the instructed path for a model without structured outputs and for a
 * schema that refers to itself; a web search before a typed answer; a typed answer through Message
 * Batches and as a stream; a zod schema typing `result.output`; effort, stop sequences, tool choice,
 * the cache's lifetime (and its price) reaching the requests; controls refused before anything runs.
 * Scenario names are model ids the capability table knows (`claude-sonnet-4-6-…`, `claude-3-5-…`).
 */
import { WorkflowFailedError, type ApplicationFailure } from '@temporalio/client';
import { z } from 'zod';
import type { Scenario } from '../../src/stub';
import { defineTool } from '../../src/tools/define-tool';
import { executeChatTurn, startChatTurn } from '../../src/client/chat-turn-client';
import { sendMessage } from '../../src/client/conversation-client';
import { subscribeTurn } from '../../src/client/subscribe';
import { OUTPUT_REPAIR_ASK } from '../../src/core/output-spec';
import { LEGACY_SAMPLING_MESSAGE } from '../../src/core/request-controls';
import { INVALID_TURN_INPUT } from '../../src/core/failure-types';
import { ChatTurnInputError } from '../../src/schemas/turn-input';
import { startTurnHarness, TEST_API_KEY, type TurnHarness } from '../support/turn-harness';
import { collect } from '../support/stream-events';

jest.setTimeout(120_000);

/** The schema as a caller writes it: no `additionalProperties`, and keywords structured outputs do not take. */
const ORDER_SCHEMA = {
  type: 'object',
  properties: {
    customer: { type: 'object', properties: { name: { type: 'string' }, id: { type: 'integer', minimum: 1 } }, required: ['name', 'id'] },
    orders: {
      type: 'array',
      items: { type: 'object', properties: { sku: { type: 'string', pattern: '^[A-Z][0-9]$' }, qty: { type: 'integer' } }, required: ['sku', 'qty'] },
    },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['customer', 'orders'],
};

const ORDER = { customer: { name: 'Ada', id: 42 }, orders: [{ sku: 'A1', qty: 2 }, { sku: 'B2', qty: 1 }], tags: ['vip'] };
/** Valid for the transformed schema (which lost `minimum`), not for the caller's. */
const ORDER_ID_ZERO = { customer: { name: 'Ada', id: 0 }, orders: [] };

const looked: Scenario['steps'] = [
  { content: [{ type: 'text', text: 'Looking it up.' }, { type: 'tool_use', name: 'crm__lookup', input: { id: '42' } }] },
  { content: [{ type: 'text', text: 'Ada has two orders.' }] },
];

const SEARCHED: Scenario['steps'] = [
  {
    content: [
      { type: 'server_tool_use', name: 'web_search', input: { query: 'ada orders' } },
      { type: 'web_search_tool_result', content: [{ url: 'https://example.com/ada', title: 'Ada orders' }] },
      { type: 'text', text: 'Ada ordered twice.', citations: [{ type: 'web_search_result_location', url: 'https://example.com/ada', title: 'Ada orders', cited_text: 'two orders' }] },
    ],
  },
];

const scenarios: Record<string, Scenario> = {
  'claude-sonnet-4-6-nested': { steps: looked, output: ORDER },
  'claude-sonnet-4-6-repair': { steps: looked, output: [ORDER_ID_ZERO, ORDER] },
  'claude-sonnet-4-6-invalid': { steps: looked, output: [ORDER_ID_ZERO, ORDER_ID_ZERO] },
  'claude-3-5-haiku-instructed': { steps: looked, output: '```json\n' + JSON.stringify(ORDER, null, 2) + '\n```' },
  'claude-sonnet-4-6-recursive': { steps: [{ content: [{ type: 'text', text: 'a tree' }] }], output: { name: 'root', children: [{ name: 'leaf', children: [] }] } },
  'claude-sonnet-4-6-search': { steps: SEARCHED, output: ORDER },
  'claude-sonnet-4-6-batched': { steps: looked, output: [ORDER_ID_ZERO, ORDER] },
  'claude-sonnet-4-6-stream': { steps: looked, output: JSON.stringify(ORDER, null, 2), streamDelayMs: 5 },
  'claude-sonnet-4-6-conversation': { steps: [{ content: [{ type: 'text', text: 'noted' }] }], output: { total: 3, lines: [] }, perTurn: true },
  'claude-sonnet-4-6-zod': { steps: looked, output: { total: 12.5, lines: [{ sku: 'A1', qty: 2 }] } },
  'claude-sonnet-4-6-controls': {
    steps: [looked[0]!, { content: [{ type: 'text', text: 'The answer is 42. ### and more after the stop' }] }],
    formatter: { conversation: [{ type: 'text', content: 'The answer is 42.' }] },
  },
  'claude-sonnet-4-6-every': {
    steps: [
      { content: [{ type: 'tool_use', name: 'crm__lookup', input: { id: '42' } }] },
      { content: [{ type: 'tool_use', name: 'crm__lookup', input: { id: '43' } }] },
      looked[1]!,
    ],
    formatter: { conversation: [{ type: 'text', content: 'forced' }] },
  },
  'claude-sonnet-4-6-cache': { steps: looked, formatter: { conversation: [{ type: 'text', content: 'cached' }] } },
};

let h: TurnHarness;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios,
    servers: {},
    tools: { crm: [defineTool({ name: 'lookup', inputSchema: z.object({ id: z.string() }), execute: ({ id }) => `customer ${id}: Ada, orders A1 ×2, B2 ×1` })] },
    claude: { messageBatches: { maxWaitMs: 200, pollInitialMs: 100, pollMaxMs: 200 } },
  });
});
afterAll(async () => {
  await h?.close();
});

const requestsOf = (model: string) => h.stub.requests.filter((r) => r.scenario === model && r.status === 200);
/** The request that wrote the typed answer (the first one, or the repair). */
const outputRequests = (model: string) => requestsOf(model).filter((r) => r.body.output_config?.format || JSON.stringify(r.body.messages).includes('one JSON object that follows the schema'));

/** Every object schema in `schema`, with where it is. */
function objectSchemas(schema: unknown, at = '#'): Array<{ at: string; schema: Record<string, unknown> }> {
  if (schema === null || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  const own = s.type === 'object' ? [{ at, schema: s }] : [];
  return [...own, ...Object.entries(s).flatMap(([k, v]) => (Array.isArray(v) ? v.flatMap((x, i) => objectSchemas(x, `${at}/${k}/${i}`)) : objectSchemas(v, `${at}/${k}`)))];
}

it('answers a nested schema written without additionalProperties with structured outputs: output is what the model wrote', async () => {
  const model = 'claude-sonnet-4-6-nested';
  const result = await h.run({ question: 'orders of customer 42', model, output: { schema: ORDER_SCHEMA, name: 'orders' } });
  expect(result.stopReason).toBe('completed');
  expect(result.output).toEqual(ORDER);
  expect(result.outputReport).toMatchObject({ path: 'structured', calls: 1, repaired: false });
  expect(result.formatMode).toBeUndefined();
  expect(JSON.parse(result.response.conversation)).toEqual(ORDER);

  const [request] = outputRequests(model);
  const format = request!.body.output_config.format;
  expect(Object.keys(format).sort()).toEqual(['schema', 'type']);
  // Every object closed, the keywords the API does not take moved into descriptions.
  expect(objectSchemas(format.schema).map((o) => [o.at, o.schema.additionalProperties])).toEqual(objectSchemas(format.schema).map((o) => [o.at, false]));
  expect(JSON.stringify(format.schema)).not.toContain('"minimum"');
  // The transcript names the turn's tool: it stays defined, and is not called now.
  expect(request!.body.tools.map((t: { name: string }) => t.name)).toEqual(['crm__lookup']);
  expect(request!.body.tool_choice).toEqual({ type: 'none' });

  // The stub refuses the schema as the caller wrote it, as the API does.
  const raw = await fetch(`${h.stub.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 100, messages: [{ role: 'user', content: 'x' }], output_config: { format: { type: 'json_schema', schema: ORDER_SCHEMA } } }),
  });
  expect(raw.status).toBe(400);
  expect(await raw.text()).toMatch(/additionalProperties/);
});

it('repairs an answer that does not validate against the caller\'s schema once, saying what was wrong', async () => {
  const model = 'claude-sonnet-4-6-repair';
  const result = await h.run({ question: 'orders of customer 42', model, output: { schema: ORDER_SCHEMA } });
  expect(result.stopReason).toBe('completed');
  expect(result.output).toEqual(ORDER);
  expect(result.outputReport).toMatchObject({ path: 'structured', calls: 2, repaired: true });
  const [, repair] = outputRequests(model);
  const ask = repair!.body.messages.at(-1);
  expect(JSON.stringify(ask.content)).toContain(OUTPUT_REPAIR_ASK);
  expect(JSON.stringify(ask.content)).toContain('/customer/id must be >= 1');
});

it('reports an answer still invalid after the repair: stop reason invalid_output, no output, the problems', async () => {
  const result = await h.run({ question: 'orders of customer 42', model: 'claude-sonnet-4-6-invalid', output: { schema: ORDER_SCHEMA } });
  expect(result.stopReason).toBe('invalid_output');
  expect(result.output).toBeUndefined();
  expect(result.outputReport).toMatchObject({ path: 'structured', calls: 2, repaired: false, problems: ['/customer/id must be >= 1'] });
});

it('writes the answer by instructions where structured outputs cannot be used: a model without them, a schema that refers to itself', async () => {
  const instructed = await h.run({ question: 'orders of customer 42', model: 'claude-3-5-haiku-instructed', output: { schema: ORDER_SCHEMA, description: 'the customer and their orders' } });
  expect(instructed.output).toEqual(ORDER);
  expect(instructed.outputReport).toMatchObject({ path: 'instructed', calls: 1 });
  expect(instructed.outputReport!.notes.join(' ')).toMatch(/has no structured outputs/);
  const [request] = outputRequests('claude-3-5-haiku-instructed');
  expect(request!.body.output_config).toBeUndefined();
  expect(JSON.stringify(request!.body.system)).toContain('the customer and their orders');

  const tree = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } }, required: ['name', 'children'] };
  const recursive = await h.run({ question: 'a tree', model: 'claude-sonnet-4-6-recursive', output: { schema: tree } });
  expect(recursive.output).toEqual({ name: 'root', children: [{ name: 'leaf', children: [] }] });
  expect(recursive.outputReport).toMatchObject({ path: 'instructed' });
  expect(recursive.outputReport!.notes.join(' ')).toMatch(/refers to itself/);
});

it('answers in JSON after a web search: the answer has no citations, the sources stay in the artifacts, web fetch is sent without citations', async () => {
  const model = 'claude-sonnet-4-6-search';
  const result = await h.run({ question: 'ada orders', model, servers: [], serverTools: { web_search: true, web_fetch: { citations: true } }, output: { schema: ORDER_SCHEMA } });
  expect(result.output).toEqual(ORDER);
  expect(result.response.artifacts.map((a) => a.type)).toContain('application/vnd.bibliography');
  const [request] = outputRequests(model);
  const tools = request!.body.tools as Array<{ name: string; citations?: unknown }>;
  expect(tools.map((t) => t.name)).toEqual(['web_search', 'web_fetch']);
  expect(tools.every((t) => t.citations === undefined)).toBe(true);
  // The loop's own calls had web fetch's citations on.
  expect(requestsOf(model)[0]!.body.tools.find((t: { name: string }) => t.name === 'web_fetch').citations).toEqual({ enabled: true });
});

it('writes a typed answer through Message Batches, its repair a second batch round', async () => {
  const result = await h.run({ question: 'orders of customer 42', model: 'claude-sonnet-4-6-batched', messageBatches: {}, output: { schema: ORDER_SCHEMA } });
  expect(result.output).toEqual(ORDER);
  expect(result.outputReport).toMatchObject({ path: 'structured', calls: 2, repaired: true });
  const batched = h.stub.messageBatches.batches.flatMap((b) => b.requests).filter((r) => r.scenario === 'claude-sonnet-4-6-batched');
  expect(batched.filter((r) => r.kind === 'output')).toHaveLength(2);
});

it('streams the typed answer: data-output events with the object as it grows, then the whole one', async () => {
  const turnId = `typed-stream-${Date.now()}`;
  const handle = await startChatTurn(h.client, { question: 'orders of customer 42', model: 'claude-sonnet-4-6-stream', stream: true, output: { schema: ORDER_SCHEMA } }, { taskQueue: h.taskQueue, workflowId: turnId });
  const [result, events] = await Promise.all([handle.result(), collect(subscribeTurn(h.client, turnId))]);
  const outputs = events.filter((e) => e.type === 'data-output') as Array<{ output: unknown; partial: boolean }>;
  expect(outputs.length).toBeGreaterThan(2);
  expect(outputs.slice(0, -1).every((o) => o.partial)).toBe(true);
  expect(outputs.at(-1)).toEqual(expect.objectContaining({ partial: false, output: ORDER }));
  expect(result.output).toEqual(ORDER);
  const types = events.map((e) => e.type);
  expect(types.lastIndexOf('data-output')).toBeLessThan(types.indexOf('data-answer'));
});

it('types result.output from a zod schema', async () => {
  const Invoice = z.object({ total: z.number(), lines: z.array(z.object({ sku: z.string(), qty: z.number().int() })) });
  const result = await executeChatTurn(h.client, { question: 'invoice', model: 'claude-sonnet-4-6-zod', output: { schema: Invoice } }, { taskQueue: h.taskQueue });
  const total: number | undefined = result.output?.total;
  const firstSku: string | undefined = result.output?.lines[0]?.sku;
  // @ts-expect-error a field the schema does not have
  expect(result.output?.customer).toBeUndefined();
  expect(total).toBe(12.5);
  expect(firstSku).toBe('A1');
  const [request] = outputRequests('claude-sonnet-4-6-zod');
  expect(request!.body.output_config.format.schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['total', 'lines'] });
});

it('takes a zod output schema in a conversation\'s options: each message\'s turn answers in it', async () => {
  const Invoice = z.object({ total: z.number(), lines: z.array(z.object({ sku: z.string() })) });
  const conversationId = `typed-conv-${Date.now()}`;
  const conversation = { taskQueue: h.taskQueue, options: { model: 'claude-sonnet-4-6-conversation', output: { schema: Invoice } } };
  const first = await sendMessage(h.client, conversationId, 'invoice one', { conversation });
  const second = await sendMessage(h.client, conversationId, 'invoice two', { conversation });
  expect([first.result?.output, second.result?.output]).toEqual([{ total: 3, lines: [] }, { total: 3, lines: [] }]);
  expect(second.result?.outputReport?.path).toBe('structured');
});

it('sends effort on every call and stop sequences on the loop\'s; a reply that ends at one stops the turn with stop_sequence', async () => {
  const model = 'claude-sonnet-4-6-controls';
  const result = await h.run({ question: 'controls', model, effort: 'low', stopSequences: ['###'], toolChoice: 'any', userId: 'u-7f3a' });
  expect(result.stopReason).toBe('stop_sequence');
  expect(result.stopSequence).toBe('###');
  const requests = requestsOf(model);
  expect(requests.map((r) => r.kind)).toEqual(['step', 'step', 'formatter']);
  expect(requests.map((r) => r.body.output_config?.effort)).toEqual(['low', 'low', 'low']);
  expect(requests.map((r) => r.body.stop_sequences)).toEqual([['###'], ['###'], undefined]);
  expect(requests.map((r) => r.body.metadata)).toEqual(Array(3).fill({ user_id: 'u-7f3a' }));
  // `any` forces the loop's first call only.
  expect(requests.map((r) => r.body.tool_choice?.type)).toEqual(['any', undefined, 'tool']);
  const lastReply = result.messages.at(-2)!;
  expect(JSON.stringify(lastReply.content)).not.toContain('and more after the stop');
});

it('forces a named tool on every call of the loop (a deferred one is loaded up front)', async () => {
  const model = 'claude-sonnet-4-6-every';
  const result = await h.run({ question: 'every', model, maxSteps: 2, maxToolsPerRequest: 1, toolChoice: { type: 'tool', name: 'crm__lookup', on: 'every' } });
  expect(result.stopReason).toBe('max_steps');
  const steps = requestsOf(model).filter((r) => r.kind === 'step');
  expect(steps.map((r) => r.body.tool_choice)).toEqual([
    { type: 'tool', name: 'crm__lookup' },
    { type: 'tool', name: 'crm__lookup' },
  ]);
  expect(steps[0]!.body.tools.find((t: { name: string }) => t.name === 'crm__lookup').defer_loading).toBeUndefined();
});

it('puts the 1 h lifetime on the prefix\'s breakpoints and prices 1 h writes at 2x input', async () => {
  const model = 'claude-sonnet-4-6-cache';
  const result = await h.run({ question: `cache ${Date.now()}`, model, cache: { ttl: '1h' }, system: 'You answer about customers.' });
  const requests = requestsOf(model);
  const first = requests[0]!.body;
  expect(first.tools.at(-1).cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
  expect(first.system[0].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
  const last = first.messages.at(-1).content.at(-1);
  expect(last.cache_control).toEqual({ type: 'ephemeral' });
  expect(result.usage.cacheCreation1hInputTokens).toBeGreaterThan(0);

  // Sonnet 4.6: $3 input, $15 output, $0.30 cache read, $3.75 a 5 min write, $6 a 1 h write (per million).
  type StubUsage = { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number; cache_creation?: { ephemeral_1h_input_tokens: number; ephemeral_5m_input_tokens: number } };
  const usd = requests
    .map((r) => r.usage as StubUsage)
    .reduce((sum, u) => {
      const h1 = u.cache_creation?.ephemeral_1h_input_tokens ?? 0;
      return sum + (u.input_tokens * 3 + u.output_tokens * 15 + u.cache_read_input_tokens * 0.3 + (u.cache_creation_input_tokens - h1) * 3.75 + h1 * 6) / 1e6;
    }, 0);
  expect(result.costUsd).toBeCloseTo(usd, 8);
});

it('refuses controls the API would refuse before anything runs, naming the field', async () => {
  await expect(startChatTurn(h.client, { question: 'q', thinking: { budgetTokens: 2048 }, toolChoice: 'any' }, { taskQueue: h.taskQueue })).rejects.toThrow(
    /toolChoice: forcing a tool .* thinking on/,
  );
  await expect(startChatTurn(h.client, { question: 'q', model: 'claude-sonnet-4-6', effort: 'xhigh' }, { taskQueue: h.taskQueue })).rejects.toThrow(
    /effort: claude-sonnet-4-6 does not take effort "xhigh"/,
  );
  const temperature = await startChatTurn(h.client, { question: 'q', temperature: 0.3 } as never, { taskQueue: h.taskQueue }).catch((e: unknown) => e);
  expect(temperature).toBeInstanceOf(ChatTurnInputError);
  expect((temperature as Error).message).toContain(`temperature: ${LEGACY_SAMPLING_MESSAGE}`);

  // A tool the turn does not offer: the turn's start refuses it, once its tools are listed.
  const err = await h.run({ question: 'q', model: 'claude-sonnet-4-6-controls', toolChoice: 'crm__nope' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause.type).toBe(INVALID_TURN_INPUT);
  expect(cause.message).toMatch(/toolChoice: the turn does not offer a tool "crm__nope" \(offered: crm__lookup\)/);
});
