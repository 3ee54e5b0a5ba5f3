/**
 * Tools written in code in real turns (dev server, the real SDK over HTTP to the stub, a real MCP
 * server): a defineTool with zod input gets the turn's context, id and call id, its input parsed by
 * its schema, a bad input answered as an is_error result without running it; the context reaches an
 * MCP server through an inject template and never any Claude request; a worker credential a tool
 * returns never reaches history; a tool that asks for approval waits for a person; a tool cancelled
 * mid-run sees its abortSignal fire; a toolset narrows what a turn is offered.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { z } from 'zod';
import type { Scenario } from '../../src/stub';
import { defineTool, ToolError, type ToolContext } from '../../src/tools/define-tool';
import { approveToolCall } from '../../src/client/approvals';
import { startChatTurn } from '../../src/client/chat-turn-client';
import { pendingApprovalsQuery } from '../../src/core/workflow-handlers';
import { rawHistoryEvents } from '../support/history-payloads';
import { everythingStdio } from '../support/mcp-servers';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { until } from '../support/until';
import { collect } from '../support/stream-events';
import { subscribeTurn } from '../../src/client/subscribe';

jest.setTimeout(120_000);

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (name: string, input: Record<string, unknown>, id?: string) => ({ type: 'tool_use' as const, name, input, ...(id ? { id } : {}) });
const answer = (content: string) => ({ conversation: [{ type: 'text', content }] });

/** A worker credential (as the worker's environment would hold it): a tool may use it, history never holds it. */
const CRM_TOKEN = 'crm-token-7d1e0a-worker-only';
const TENANT = 'tenant-acme-5c3b';

const scenarios: Record<string, Scenario> = {
  lookup: {
    steps: [
      { content: [text('Looking.'), use('crm__lookup', { id: '42' }, 'toolu_lookup'), use('crm__lookup', { id: 42 }, 'toolu_bad')] },
      { content: [text('found: {{toolResults}}')] },
    ],
    formatter: answer('{{toolResults}}'),
  },
  tenant: {
    steps: [{ content: [use('everything__echo', {}, 'toolu_echo')] }, { content: [text('echoed: {{toolResults}}')] }],
    formatter: answer('{{toolResults}}'),
  },
  remove: {
    steps: [{ content: [use('crm__remove', { id: '7' }, 'toolu_remove')] }, { content: [text('removed: {{toolResults}}')] }],
    formatter: answer('{{toolResults}}'),
  },
  slow: {
    steps: [{ content: [use('crm__slow', {}, 'toolu_slow')] }, { content: [text('never')] }],
    formatter: answer('never'),
  },
  plain: { steps: [{ content: [text('no tools needed')] }], formatter: answer('no tools needed') },
};

/** What each lookup call was given. */
const lookups: Array<{ input: unknown; ctx: Omit<ToolContext, 'abortSignal'> }> = [];
const removed: string[] = [];
let slowStarted: (() => void) | undefined;
let slowAborted: ((reason: unknown) => void) | undefined;

const crm = [
  defineTool({
    name: 'lookup',
    description: 'Look up a customer by id',
    inputSchema: z.object({ id: z.string().describe('customer id'), fields: z.array(z.string()).default(['name']) }),
    async execute(input, { abortSignal: _signal, ...ctx }) {
      lookups.push({ input, ctx });
      // The tool uses the worker's credential; what it returns goes to Claude and history, redacted.
      return { id: input.id, name: 'Ada Lovelace', via: `crm with ${CRM_TOKEN}` };
    },
  }),
  defineTool({
    name: 'remove',
    description: 'Remove a customer',
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    approval: true,
    async execute(input) {
      if (input.id === 'missing') throw new ToolError('no such customer');
      removed.push(String(input.id));
      return `removed ${String(input.id)}`;
    },
  }),
  defineTool({
    name: 'slow',
    inputSchema: z.object({}),
    execute: (_input, { abortSignal }) =>
      new Promise<string>((resolve) => {
        slowStarted?.();
        abortSignal.addEventListener('abort', () => slowAborted?.(abortSignal.reason), { once: true });
        setTimeout(() => resolve('finished'), 60_000).unref();
      }),
  }),
];

let h: TurnHarness;

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios,
    servers: {
      everything: everythingStdio({ inject: { message: '${context.tenant}' } }),
      // A server that cannot start: it exits at once.
      ledger: { command: process.execPath, args: ['-e', 'process.exit(3)'], connect_timeout_ms: 5000 },
    },
    tools: { crm },
    toolsets: { lookups: { servers: ['crm'], allow: ['lookup'] } },
    credentials: [CRM_TOKEN],
  });
});
afterAll(async () => {
  await h?.close();
});

it('runs a code tool with zod input and the turn context; a bad input is an is_error result and the tool does not run; nothing of the context or the credential leaves as it must not', async () => {
  lookups.length = 0;
  const turnId = `code-lookup-${Date.now()}`;
  const handle = await startChatTurn(h.client, { question: 'who is 42?', model: 'lookup', context: { tenant: TENANT, user: 'alice' } }, { taskQueue: h.taskQueue, workflowId: turnId });
  const result = await handle.result();

  expect(lookups).toEqual([{ input: { id: '42', fields: ['name'] }, ctx: { toolCallId: 'toolu_lookup', turnId, context: { tenant: TENANT, user: 'alice' } } }]);
  expect(result.toolCalls).toEqual([
    expect.objectContaining({ id: 'toolu_lookup', server: 'crm', tool: 'lookup', name: 'crm__lookup', isError: false, attempts: 1 }),
    expect.objectContaining({ id: 'toolu_bad', server: 'crm', tool: 'lookup', isError: true, error: expect.stringMatching(/^Invalid arguments for lookup: id: .*expected string/) }),
  ]);
  expect(result.response.conversation).toContain('Ada Lovelace');
  expect(result.response.conversation).toContain('[redacted]');

  // Claude is offered the tool with its zod schema as JSON Schema, and never the context.
  const requests = h.stub.requests.filter((r) => r.body?.model === 'lookup');
  const offered = (requests[0]!.body!.tools as Array<{ name: string; input_schema: unknown }>).find((t) => t.name === 'crm__lookup');
  expect(offered?.input_schema).toEqual({
    type: 'object',
    properties: { id: { type: 'string', description: 'customer id' }, fields: { type: 'array', items: { type: 'string' }, default: ['name'] } },
    required: ['id'],
    additionalProperties: false,
  });
  for (const r of requests) expect(JSON.stringify(r.body)).not.toContain(TENANT);

  // History: the context as the caller set it (the input), never the credential.
  const history = JSON.stringify(await rawHistoryEvents(h.client, turnId));
  expect(history).not.toContain(CRM_TOKEN);
  expect(Buffer.from(history).toString()).not.toContain(Buffer.from(CRM_TOKEN).toString('base64'));
});

it('hands the turn context to an MCP server through an inject template, and a turn without it goes without that server, saying why', async () => {
  const result = await h.run({ question: 'echo my tenant', model: 'tenant', context: { tenant: TENANT } });
  expect(result.toolCalls[0]).toMatchObject({ server: 'everything', tool: 'echo', isError: false });
  expect(result.response.conversation).toContain(`Echo: ${TENANT}`);
  const offered = h.stub.requests.find((r) => r.body?.model === 'tenant')!.body!.tools as Array<{ name: string; input_schema: { properties?: Record<string, unknown> } }>;
  expect(offered.find((t) => t.name === 'everything__echo')?.input_schema.properties ?? {}).not.toHaveProperty('message');

  const without = await h.run({ question: 'no context', model: 'plain', servers: ['everything', 'crm'] });
  expect(without.unavailableServers).toEqual([
    { server: 'everything', reason: 'its inject needs context.tenant, which this turn does not set (give the turn a context with it)' },
  ]);
});

it('names in its data-tools event a server that could not start, with why, beside the tools it offered', async () => {
  const turnId = `code-tools-event-${Date.now()}`;
  const handle = await startChatTurn(h.client, { question: 'which tools?', model: 'plain', stream: true, context: { tenant: TENANT } }, { taskQueue: h.taskQueue, workflowId: turnId });
  const [result, events] = await Promise.all([handle.result(), collect(subscribeTurn(h.client, turnId))]);
  const tools = events.find((e) => e.type === 'data-tools');
  expect(events.map((e) => e.type).slice(0, 3)).toEqual(['start', 'data-tools', 'start-step']);
  expect(tools).toMatchObject({
    offered: expect.arrayContaining([{ name: 'crm__lookup', server: 'crm', tool: 'lookup' }, { name: 'everything__echo', server: 'everything', tool: 'echo' }]),
    unavailable: [{ server: 'ledger', reason: expect.stringMatching(/.+/) }],
  });
  expect(result.unavailableServers).toEqual((tools as { unavailable: unknown[] }).unavailable);
});

it('waits for a person before a code tool that asks for approval runs', async () => {
  removed.length = 0;
  const turnId = `code-remove-${Date.now()}`;
  const handle = await startChatTurn(h.client, { question: 'remove 7', model: 'remove' }, { taskQueue: h.taskQueue, workflowId: turnId });
  await until(async () => (await handle.query(pendingApprovalsQuery)).some((a) => a.callId === 'toolu_remove'), 'the call to wait for approval');
  expect(removed).toEqual([]);
  await approveToolCall(h.client, turnId, 'toolu_remove', { identity: 'alice@test' });
  const result = await handle.result();
  expect(removed).toEqual(['7']);
  expect(result.approvals).toEqual([expect.objectContaining({ callId: 'toolu_remove', server: 'crm', tool: 'remove', outcome: 'approved', decidedBy: 'alice@test' })]);
  expect(result.toolCalls[0]).toMatchObject({ name: 'crm__remove', isError: false });
});

it('cancels a code tool mid-run: its abortSignal fires and the turn ends cancelled', async () => {
  const started = new Promise<void>((resolve) => (slowStarted = resolve));
  const aborted = new Promise<unknown>((resolve) => (slowAborted = resolve));
  const handle = await startChatTurn(h.client, { question: 'slow', model: 'slow' }, { taskQueue: h.taskQueue, workflowId: `code-slow-${Date.now()}` });
  await started;
  const cancelledAt = Date.now();
  await handle.cancel();
  await aborted;
  expect(Date.now() - cancelledAt).toBeLessThan(10_000);
  const failure = await handle.result().catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((await handle.describe()).status.name).toBe('CANCELLED');
});

it('offers only what the named toolset selects, and refuses a toolset the worker does not define, naming it', async () => {
  await h.run({ question: 'which tools?', model: 'plain', toolset: 'lookups' });
  const step = h.stub.requests.filter((r) => r.body?.model === 'plain' && !JSON.stringify(r.body.tool_choice ?? '').includes('response_formatter')).at(-1)!;
  expect((step.body!.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['crm__lookup']);

  const refused = await h.run({ question: 'which tools?', model: 'plain', toolset: 'nope' }).catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(WorkflowFailedError);
  expect(String((refused as WorkflowFailedError).cause?.message)).toMatch(/toolset: "nope" is not defined on the worker \(defined: lookups\)/);
});
