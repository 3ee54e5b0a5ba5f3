/**
 * Tools written in code (src/tools/): a module's `tools` export read into one form (defineTool
 * results, AI SDK `tool()` records with every kind of input schema), listed like a server's tools and
 * called in the worker's process with the error contract of a server's: a ToolError and bad input are
 * `is_error` results, anything else thrown a retryable CodeToolFailed, a call past its timeout a
 * retryable CodeToolTimeout, a cancelled call rejected with the cancellation's reason.
 *
 * Tools given in code need no file. The config's policies (allow/exclude, approval, timeout) apply to
 * modules named by path: those are loaded here from CommonJS files (`.cjs`), which Jest's require can
 * run; an ES module (`.mjs`) needs Node's native `import()`, which Jest's CommonJS sandbox does not
 * provide, so that one is loaded through the built dist/ in a child `node` process.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { jsonSchema, tool } from 'ai';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import type { CallToolInput, CallToolOutput, McpToolDescriptor } from '../../src/core/contracts';
import { ArgumentValidator } from '../../src/mcp/argument-validation';
import { McpPool, parseMcpServers } from '../../src/mcp';
import type { McpLogger } from '../../src/mcp/logger';
import { readCodeTools, type CodeTool } from '../../src/tools/code-tool';
import { CodeTools, type ModuleListing } from '../../src/tools/code-tools';
import { defineTool, ToolError, type JsonValue, type ToolContext } from '../../src/tools/define-tool';
import { defaultModuleConfig, parseToolModules, type ToolModuleConfig } from '../../src/tools/tool-modules-config';
import { Toolbox } from '../../src/tools/toolbox';

const validator = new ArgumentValidator();

/** A call's context, as the activity passes it. */
function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  return { toolCallId: 'toolu_1', turnId: 'turn-1', context: {}, abortSignal: new AbortController().signal, ...overrides };
}

/** The one tool a `tools` export reads into, with no problems. */
function only(exported: unknown): CodeTool {
  const read = readCodeTools(exported, validator);
  expect(read.problems).toEqual([]);
  expect(read.tools).toHaveLength(1);
  return read.tools[0]!;
}

async function listed(tools: CodeTools, name: string): Promise<ModuleListing> {
  const r = await tools.list(name);
  if ('reason' in r) throw new Error(`module ${name} unavailable: ${r.reason}`);
  return r;
}

function descriptor(listing: ModuleListing, name: string): McpToolDescriptor {
  const d = listing.tools.find((t) => t.name === name);
  if (!d) throw new Error(`${name} not listed (listed: ${listing.tools.map((t) => t.name).join(', ')})`);
  return d;
}

function callInput(server: string, toolName: string, args: Record<string, unknown> = {}, context?: Record<string, unknown>): CallToolInput {
  return { server, tool: toolName, arguments: args, toolUseId: 'toolu_42', ...(context ? { context } : {}) };
}

/** The text of a call's result. */
function textOf(result: Pick<CallToolOutput, 'content'>): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject');
}

/** Records what a logger is told (a real logger object, not a mock). */
function recorder(): McpLogger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-tools-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes a module file into the test's directory; returns its path. */
function moduleFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** The config of tool modules as a camelCase file would give it, resolved against the test's directory. */
function modulesConfig(section: Record<string, unknown>): ToolModuleConfig[] {
  const parsed = parseToolModules(section, 'toolModules', dir);
  expect(parsed.problems).toEqual([]);
  return parsed.modules!;
}

describe('defineTool with a zod 4 schema', () => {
  const search = defineTool({
    name: 'search',
    description: 'Searches the CRM',
    inputSchema: z.object({ query: z.string().min(1).describe('what to look for'), limit: z.number().int().default(10) }),
    execute: (input, c) => ({ input, context: c.context as Record<string, JsonValue>, turnId: c.turnId, toolCallId: c.toolCallId }),
  });

  it('is listed with its JSON Schema in the form Claude takes: no $schema', async () => {
    const tools = new CodeTools([], { crm: [search] });
    const listing = await listed(tools, 'crm');
    const d = descriptor(listing, 'search');
    expect(d).toMatchObject({ server: 'crm', name: 'search', description: 'Searches the CRM' });
    expect(d.inputSchema).not.toHaveProperty('$schema');
    expect(d.inputSchema).toMatchObject({
      type: 'object',
      properties: { query: { type: 'string', minLength: 1, description: 'what to look for' }, limit: { type: 'integer', default: 10 } },
      required: ['query'],
    });
    expect(d).not.toHaveProperty('approval');
    expect(listing.unusable).toEqual([]);
    expect(listing.policy).toMatchObject({ localTools: expect.any(Array), unseenTools: expect.any(Array) });
  });

  it('parses the input (defaults applied), and gives execute the context, the turn id and the call id', async () => {
    const tools = new CodeTools([], { crm: [search] });
    const result = await tools.callTool(callInput('crm', 'search', { query: 'acme' }, { tenant: 't1', user: { id: 7 } }), { turnId: 'turn-9' });
    expect(result.isError).toBe(false);
    expect(JSON.parse(textOf(result))).toEqual({
      input: { query: 'acme', limit: 10 },
      context: { tenant: 't1', user: { id: 7 } },
      turnId: 'turn-9',
      toolCallId: 'toolu_42',
    });
  });

  it('gives execute an empty context when the turn sets none', async () => {
    const tools = new CodeTools([], { crm: [search] });
    const result = await tools.callTool(callInput('crm', 'search', { query: 'acme' }), { turnId: 't' });
    expect(JSON.parse(textOf(result)).context).toEqual({});
  });

  it('refuses input the schema rejects as an is_error result naming the field, without calling execute', async () => {
    let calls = 0;
    const counted = defineTool({ name: 'search', inputSchema: z.object({ query: z.string().min(1) }), execute: () => ++calls });
    const tools = new CodeTools([], { crm: [counted] });
    const result = await tools.callTool(callInput('crm', 'search', { query: 42 }), { turnId: 't' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Invalid arguments for search: query: /);
    expect(calls).toBe(0);
  });
});

describe('defineTool with a plain JSON Schema', () => {
  const add = defineTool({
    name: 'add',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
    execute: (input) => (input.a as number) + (input.b as number),
  });

  it('is listed with the schema as written', async () => {
    const listing = await listed(new CodeTools([], { math: [add] }), 'math');
    expect(descriptor(listing, 'add').inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
  });

  it('checks the input with ajv: each problem, naming the field, in an is_error result', async () => {
    const tools = new CodeTools([], { math: [add] });
    const bad = await tools.callTool(callInput('math', 'add', { a: 'one', c: 1 }), { turnId: 't' });
    expect(bad.isError).toBe(true);
    const text = textOf(bad);
    expect(text).toMatch(/^Invalid arguments for add: /);
    expect(text).toContain('/a must be number');
    expect(text).toContain("must have required property 'b'");
    expect(text).toContain('must NOT have additional properties (c)');
    const good = await tools.callTool(callInput('math', 'add', { a: 1, b: 2 }), { turnId: 't' });
    expect(good).toMatchObject({ isError: false, content: [{ type: 'text', text: '3' }] });
  });
});

describe('AI SDK tools (the `ai` package)', () => {
  it('reads a zod 4 schema: JSON Schema listed, input parsed with defaults', async () => {
    const t = only({
      weather: tool({
        description: 'The weather',
        inputSchema: z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('c') }),
        execute: async (input) => `${input.city} in ${input.unit}`,
      }),
    });
    expect(t.name).toBe('weather');
    expect(t.description).toBe('The weather');
    expect(t.inputSchema).not.toHaveProperty('$schema');
    expect(t.inputSchema).toMatchObject({ type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } }, required: ['city'] });
    expect(await t.check({ city: 'Oslo' })).toEqual({ ok: true, value: { city: 'Oslo', unit: 'c' } });
    const bad = await t.check({ city: 3 });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problems).toEqual([expect.stringMatching(/^city: /)]);
    expect(await t.run({ city: 'Oslo', unit: 'c' }, ctx())).toEqual({ content: [{ type: 'text', text: 'Oslo in c' }], isError: false });
  });

  it('reads a zod 3 schema', async () => {
    const t = only({
      greet: tool({
        inputSchema: z3.object({ name: z3.string().describe('who'), times: z3.number().default(1) }),
        execute: async ({ name, times }) => `hello ${name} x${times}`,
      }),
    });
    expect(t.inputSchema).not.toHaveProperty('$schema');
    expect(t.inputSchema).toMatchObject({ type: 'object', properties: { name: { type: 'string', description: 'who' }, times: { type: 'number' } } });
    expect(await t.check({ name: 'Ann' })).toEqual({ ok: true, value: { name: 'Ann', times: 1 } });
    const bad = await t.check({ name: 5 });
    expect(!bad.ok && bad.problems).toEqual([expect.stringMatching(/^name: /)]);
  });

  it("reads the AI SDK's jsonSchema(), with its validate", async () => {
    const t = only({
      echo: tool({
        inputSchema: jsonSchema<{ text: string }>(
          { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          {
            validate: (value) =>
              typeof (value as { text?: unknown }).text === 'string'
                ? { success: true, value: value as { text: string } }
                : { success: false, error: new Error('text must be a string') },
          },
        ),
        execute: async ({ text }) => text.toUpperCase(),
      }),
    });
    expect(t.inputSchema).toEqual({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(await t.check({ text: 'hi' })).toEqual({ ok: true, value: { text: 'hi' } });
    expect(await t.check({ text: 1 })).toEqual({ ok: false, problems: ['text must be a string'] });
    expect(await t.run({ text: 'hi' }, ctx())).toEqual({ content: [{ type: 'text', text: 'HI' }], isError: false });
  });

  it('reads a hand-made Standard Schema with its JSON Schema; its issues name the field', async () => {
    const standard = {
      '~standard': {
        version: 1 as const,
        vendor: 'x',
        validate: (value: unknown) => {
          const v = value as { n?: unknown };
          return typeof v?.n === 'number' ? { value: { n: v.n * 2 } } : { issues: [{ message: 'must be a number', path: ['n'] }] };
        },
        jsonSchema: { input: () => ({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }) },
      },
    };
    const t = only({ double: tool({ inputSchema: standard as never, execute: async (input: { n: number }) => input.n }) });
    expect(t.inputSchema).toMatchObject({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] });
    expect(await t.check({ n: 2 })).toEqual({ ok: true, value: { n: 4 } });
    expect(await t.check({ n: 'two' })).toEqual({ ok: false, problems: ['n: must be a number'] });
  });

  it('gives execute the context as experimental_context, the call id, the abortSignal and no messages', async () => {
    let seen: Record<string, unknown> | undefined;
    const t = only({
      probe: tool({
        inputSchema: z.object({}),
        execute: async (_input, options) => {
          seen = { ...options };
          return 'ok';
        },
      }),
    });
    const abort = new AbortController();
    await t.run({}, ctx({ context: { tenant: 'acme' }, toolCallId: 'toolu_7', abortSignal: abort.signal }));
    expect(seen).toEqual({ toolCallId: 'toolu_7', messages: [], abortSignal: abort.signal, experimental_context: { tenant: 'acme' } });
  });

  it('calls onInputStart and onInputAvailable before execute', async () => {
    const order: string[] = [];
    const t = only({
      hooked: tool({
        inputSchema: z.object({ a: z.number() }),
        onInputStart: () => void order.push('start'),
        onInputAvailable: ({ input }) => void order.push(`available ${JSON.stringify(input)}`),
        execute: async () => {
          order.push('execute');
          return 1;
        },
      }),
    });
    await t.run({ a: 1 }, ctx());
    expect(order).toEqual(['start', 'available {"a":1}', 'execute']);
  });

  it('takes the last value an async-generator execute yields as the output', async () => {
    const t = only({
      stream: tool({
        inputSchema: z.object({}),
        execute: async function* () {
          yield { status: 'working' };
          yield { status: 'done', items: 3 };
        },
      }),
    });
    expect(await t.run({}, ctx())).toEqual({ content: [{ type: 'text', text: '{"status":"done","items":3}' }], isError: false });
  });

  it('passes the output through toModelOutput: text, json, error-text (is_error), content with an image', async () => {
    const withOutput = (toModelOutput: (o: { output: unknown }) => unknown) =>
      only({ t: tool({ inputSchema: z.object({}), execute: async () => ({ n: 1 }), toModelOutput: toModelOutput as never }) });
    expect(await withOutput(({ output }) => ({ type: 'text', value: `n is ${(output as { n: number }).n}` })).run({}, ctx())).toEqual({
      content: [{ type: 'text', text: 'n is 1' }],
      isError: false,
    });
    expect(await withOutput(({ output }) => ({ type: 'json', value: { wrapped: output } })).run({}, ctx())).toEqual({
      content: [{ type: 'text', text: '{"wrapped":{"n":1}}' }],
      isError: false,
    });
    expect(await withOutput(() => ({ type: 'error-text', value: 'no such customer' })).run({}, ctx())).toEqual({
      content: [{ type: 'text', text: 'no such customer' }],
      isError: true,
    });
    expect(
      await withOutput(() => ({
        type: 'content',
        value: [
          { type: 'text', text: 'a chart' },
          { type: 'media', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
        ],
      })).run({}, ctx()),
    ).toEqual({
      content: [
        { type: 'text', text: 'a chart' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      ],
      isError: false,
    });
  });

  it("gives toModelOutput the call id, the input and execute's output", async () => {
    let seen: unknown;
    const t = only({
      t: tool({
        inputSchema: z.object({ q: z.string() }),
        execute: async ({ q }) => ({ answer: q.length }),
        toModelOutput: (options) => {
          seen = options;
          return { type: 'text', value: 'x' };
        },
      }),
    });
    await t.run({ q: 'abc' }, ctx({ toolCallId: 'toolu_3' }));
    expect(seen).toEqual({ toolCallId: 'toolu_3', input: { q: 'abc' }, output: { answer: 3 } });
  });

  it('asks for approval for needsApproval: true and for a function (which is said not to be honoured as such)', async () => {
    const read = readCodeTools(
      {
        always: tool({ inputSchema: z.object({}), needsApproval: true, execute: async () => 1 }),
        sometimes: tool({ inputSchema: z.object({ amount: z.number() }), needsApproval: async ({ amount }) => amount > 100, execute: async () => 1 }),
        never: tool({ inputSchema: z.object({}), needsApproval: false, execute: async () => 1 }),
      },
      validator,
    );
    expect(read.problems).toEqual([]);
    const byName = Object.fromEntries(read.tools.map((t) => [t.name, t]));
    expect(byName.always!.approval).toEqual({});
    expect(byName.always!.notHonoured).toEqual([]);
    expect(byName.sometimes!.approval).toEqual({});
    expect(byName.sometimes!.notHonoured).toEqual([expect.stringMatching(/^needsApproval as a function/)]);
    expect(byName.never!.approval).toBeUndefined();

    const listing = await listed(new CodeTools([], { pay: { always: byNameTool(true), sometimes: byNameTool(async () => true) } }), 'pay');
    expect(descriptor(listing, 'always').approval).toEqual({});
    expect(descriptor(listing, 'sometimes').approval).toEqual({});
  });

  it('says what it does not honour: onInputDelta, strict, providerOptions', () => {
    const t = only({
      t: tool({
        inputSchema: z.object({}),
        strict: true,
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
        onInputDelta: () => undefined,
        execute: async () => 1,
      }),
    });
    expect(t.notHonoured).toEqual(['onInputDelta (the input is whole when the call starts)', 'strict', 'providerOptions']);
  });

  it('leaves out a provider-defined tool and one without execute, with the reason, and keeps the others', async () => {
    const exported = {
      web_search: tool({ type: 'provider', id: 'anthropic.web_search_20250305', args: {}, inputSchema: z.object({ query: z.string() }) }),
      client_side: tool({ inputSchema: z.object({}), outputSchema: z.string() }),
      fine: tool({ inputSchema: z.object({}), execute: async () => 'fine' }),
    };
    const read = readCodeTools(exported, validator);
    expect(read.tools.map((t) => t.name)).toEqual(['fine']);
    expect(read.problems).toEqual([
      "web_search: a provider-defined tool runs at the model's provider, not in the worker",
      'client_side: has no execute function',
    ]);
    const log = recorder();
    const tools = new CodeTools([], { mixed: exported }, [], log);
    expect((await listed(tools, 'mixed')).tools.map((t) => t.name)).toEqual(['fine']);
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      expect.stringMatching(/^tool module mixed \(given in code\): web_search: a provider-defined tool/),
      expect.stringMatching(/^tool module mixed \(given in code\): client_side: has no execute function/),
    ]);
  });

  it('adds inputExamples to the description', () => {
    const t = only({
      lookup: tool({
        description: 'Looks a customer up',
        inputSchema: z.object({ id: z.string() }),
        inputExamples: [{ input: { id: 'c-1' } }, { input: { id: 'c-2' } }],
        execute: async () => 1,
      }),
    });
    expect(t.description).toBe('Looks a customer up\n\nExamples of input:\n{"id":"c-1"}\n{"id":"c-2"}');
    const bare = only({ lookup: tool({ inputSchema: z.object({ id: z.string() }), inputExamples: [{ input: { id: 'c-1' } }], execute: async () => 1 }) });
    expect(bare.description).toBe('Examples of input:\n{"id":"c-1"}');
  });

  it('takes a defineTool result in a record under the record key', async () => {
    const t = only({ renamed: defineTool({ name: 'ignored', inputSchema: { type: 'object' }, execute: () => 'x' }) });
    expect(t.name).toBe('renamed');
    expect(t.notHonoured).toEqual([]);
  });
});

/** An AI SDK tool with the given needsApproval. */
function byNameTool(needsApproval: boolean | (() => Promise<boolean>)) {
  return tool({ inputSchema: z.object({}), needsApproval, execute: async () => 1 });
}

describe("a tools export that cannot be read", () => {
  it('is a problem per entry, the others staying', () => {
    const read = readCodeTools(
      [defineTool({ name: 'a', inputSchema: { type: 'object' }, execute: () => 1 }), { nope: true }, defineTool({ name: 'a', inputSchema: { type: 'object' }, execute: () => 2 })],
      validator,
    );
    expect(read.tools.map((t) => t.name)).toEqual(['a']);
    expect(read.problems).toEqual(['tools[1]: not a tool (make it with defineTool from mcp-turns/tools)', 'a: a second tool named a']);
  });

  it('is one problem when nothing is exported', () => {
    expect(readCodeTools(undefined, validator)).toEqual({ tools: [], problems: [expect.stringMatching(/^exports no tools/)] });
  });

  it('names a Standard Schema without JSON Schema', () => {
    const noJson = { '~standard': { version: 1, vendor: 'y', validate: (value: unknown) => ({ value }) } };
    const read = readCodeTools({ t: { inputSchema: noJson, execute: () => 1 } }, validator);
    expect(read.tools).toEqual([]);
    expect(read.problems).toEqual(["t: Standard schema vendor 'y' does not support JSON Schema conversion."]);
  });

  it('makes a module whose every tool fails unavailable, naming the problems', async () => {
    const tools = new CodeTools([], { broken: [{ nope: true }] });
    expect(await tools.list('broken')).toEqual({ server: 'broken', reason: 'module given in code: tools[0]: not a tool (make it with defineTool from mcp-turns/tools)' });
    const err = await rejectionOf(tools.callTool(callInput('broken', 'x'), { turnId: 't' }));
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'CodeToolFailed', nonRetryable: true });
  });
});

describe('outputs', () => {
  async function outputOf(value: unknown) {
    const tools = new CodeTools([], { out: [defineTool({ name: 'o', inputSchema: { type: 'object' }, execute: () => value as never })] });
    return tools.callTool(callInput('out', 'o'), { turnId: 't' });
  }

  it('takes a string as text', async () => {
    expect(await outputOf('plain text')).toMatchObject({ content: [{ type: 'text', text: 'plain text' }], isError: false });
  });

  it('takes any other JSON value as its JSON', async () => {
    expect(await outputOf({ a: [1, 'b', null], ok: true })).toMatchObject({ content: [{ type: 'text', text: '{"a":[1,"b",null],"ok":true}' }], isError: false });
    expect(await outputOf(42)).toMatchObject({ content: [{ type: 'text', text: '42' }] });
    expect(await outputOf([1, 2])).toMatchObject({ content: [{ type: 'text', text: '[1,2]' }] });
    expect(await outputOf(null)).toMatchObject({ content: [{ type: 'text', text: 'null' }] });
  });

  it('takes content blocks as they are (an image as Claude\'s image block)', async () => {
    const result = await outputOf([
      { type: 'text', text: 'see:' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]);
    expect(result.isError).toBe(false);
    expect(result.content).toEqual([
      { type: 'text', text: 'see:' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ]);
  });

  it('takes {content, isError: true} as an is_error result', async () => {
    expect(await outputOf({ content: [{ type: 'text', text: 'no such customer' }], isError: true })).toMatchObject({
      content: [{ type: 'text', text: 'no such customer' }],
      isError: true,
    });
  });

  it('says "(no output)" for undefined', async () => {
    expect(await outputOf(undefined)).toMatchObject({ content: [{ type: 'text', text: '(no output)' }], isError: false });
  });

  it('writes a BigInt inside JSON as its digits', async () => {
    expect(await outputOf({ id: 12345678901234567890n })).toMatchObject({ content: [{ type: 'text', text: '{"id":"12345678901234567890"}' }] });
  });

  it('says when a value is not JSON (a cycle)', async () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(textOf(await outputOf(cycle))).toMatch(/^\(the tool returned a value that is not JSON: /);
  });
});

describe('errors', () => {
  const SECRET = 'sk-live-0123456789';
  const failing = (fail: () => never) => new CodeTools([], { crm: [defineTool({ name: 'lookup', inputSchema: { type: 'object' }, execute: fail })] }, [SECRET]);

  it('gives a ToolError to Claude as an is_error result, not thrown, its secrets redacted', async () => {
    const tools = failing(() => {
      throw new ToolError(`customer 7 does not exist (key ${SECRET})`);
    });
    const result = await tools.callTool(callInput('crm', 'lookup'), { turnId: 't' });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'customer 7 does not exist (key [redacted])' }], isError: true });
  });

  it('recognises a ToolError of another copy of the package by its mark', async () => {
    const foreign = Object.assign(new Error('gone'), { [Symbol.for('mcp-turns.code-tool')]: 'ToolError' });
    const tools = failing(() => {
      throw foreign;
    });
    expect(await tools.callTool(callInput('crm', 'lookup'), { turnId: 't' })).toMatchObject({ content: [{ type: 'text', text: 'gone' }], isError: true });
  });

  it('throws any other error as a retryable CodeToolFailed naming module/tool, its secrets redacted', async () => {
    const log = recorder();
    const tools = new CodeTools(
      [],
      {
        crm: [
          defineTool({
            name: 'lookup',
            inputSchema: { type: 'object' },
            execute: () => {
              throw new Error(`connect ECONNREFUSED with ${SECRET}`);
            },
          }),
        ],
      },
      [SECRET],
      log,
    );
    const err = await rejectionOf(tools.callTool(callInput('crm', 'lookup'), { turnId: 't' }));
    expect(err).toBeInstanceOf(ApplicationFailure);
    const failure = err as ApplicationFailure;
    expect(failure.type).toBe('CodeToolFailed');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe('crm/lookup: connect ECONNREFUSED with [redacted]');
    expect(JSON.stringify(log.lines)).not.toContain(SECRET);
  });

  it('redacts secrets in results', async () => {
    const tools = new CodeTools([], { crm: [defineTool({ name: 'leak', inputSchema: { type: 'object' }, execute: () => `token=${SECRET}` })] }, [SECRET]);
    const result = await tools.callTool(callInput('crm', 'leak'), { turnId: 't' });
    expect(textOf(result)).toBe('token=[redacted]');
  });

  it('refuses an unknown tool for good', async () => {
    const tools = new CodeTools([], { crm: [defineTool({ name: 'lookup', inputSchema: { type: 'object' }, execute: () => 1 })] });
    const err = await rejectionOf(tools.callTool(callInput('crm', 'delete_everything'), { turnId: 't' }));
    expect(err).toMatchObject({ nonRetryable: true, message: 'unknown tool delete_everything on server crm' });
  });

  it('refuses tools given in code under a module name the config uses too', () => {
    expect(() => new CodeTools([defaultModuleConfig('crm')], { crm: [] })).toThrow('tools given in code as crm: the config names a tool module crm too');
  });
});

describe('timeout and cancellation', () => {
  it("rejects a call past the module's timeoutMs with a retryable CodeToolTimeout, the tool's abortSignal aborted", async () => {
    const file = moduleFile(
      'slow.cjs',
      `exports.tools = [{
        name: 'wait',
        inputSchema: { type: 'object', properties: {} },
        execute: (_input, ctx) => new Promise((resolve) => {
          globalThis.__codeToolsProbe = { signal: ctx.abortSignal };
          ctx.abortSignal.addEventListener('abort', () => { globalThis.__codeToolsProbe.aborted = ctx.abortSignal.reason; resolve('too late'); });
        }),
      }];`,
    );
    const [config] = modulesConfig({ slow: { module: path.basename(file), timeoutMs: 100 } });
    expect(config).toMatchObject({ name: 'slow', path: file, timeoutMs: 100 });
    const tools = new CodeTools([config!]);
    const started = Date.now();
    const err = await rejectionOf(tools.callTool(callInput('slow', 'wait'), { turnId: 't' }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'CodeToolTimeout', nonRetryable: false, message: 'slow/wait timed out after 100 ms' });
    const probe = (globalThis as { __codeToolsProbe?: { signal: AbortSignal; aborted?: unknown } }).__codeToolsProbe;
    expect(probe?.signal.aborted).toBe(true);
    expect(probe?.aborted).toBe(err);
    delete (globalThis as { __codeToolsProbe?: unknown }).__codeToolsProbe;
  });

  it("rejects a cancelled call with the cancellation's reason, the tool's abortSignal fired", async () => {
    let toolSignal: AbortSignal | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const tools = new CodeTools([], {
      slow: [
        defineTool({
          name: 'wait',
          inputSchema: { type: 'object' },
          execute: (_input, c) =>
            new Promise<string>((resolve) => {
              toolSignal = c.abortSignal;
              started();
              c.abortSignal.addEventListener('abort', () => setTimeout(() => resolve('ignored'), 20));
            }),
        }),
      ],
    });
    const cancel = new AbortController();
    const call = tools.callTool(callInput('slow', 'wait'), { turnId: 't', signal: cancel.signal });
    await running;
    expect(toolSignal?.aborted).toBe(false);
    const reason = new Error('activity cancelled');
    cancel.abort(reason);
    expect(await rejectionOf(call)).toBe(reason);
    expect(toolSignal?.aborted).toBe(true);
    expect(toolSignal?.reason).toBe(reason);
  });

  it('rejects a call whose signal was aborted before it started, even when the tool only listens for the abort event', async () => {
    let ran = false;
    const tools = new CodeTools([], {
      slow: [
        defineTool({
          name: 'wait',
          inputSchema: { type: 'object' },
          execute: (_input, c) => {
            ran = true;
            return new Promise<string>((resolve) => c.abortSignal.addEventListener('abort', () => resolve('late')));
          },
        }),
      ],
    });
    const cancel = new AbortController();
    const reason = new Error('cancelled before the call');
    cancel.abort(reason);
    const outcome = await Promise.race([
      rejectionOf(tools.callTool(callInput('slow', 'wait'), { turnId: 't', signal: cancel.signal })),
      new Promise((resolve) => setTimeout(() => resolve('still running after 1 s'), 1000)),
    ]);
    expect(outcome).toBe(reason);
    expect(ran).toBe(false);
    // A reason that is not an Error: an Error naming the call.
    const other = new AbortController();
    other.abort('stop');
    expect(await rejectionOf(tools.callTool(callInput('slow', 'wait'), { turnId: 't', signal: other.signal }))).toEqual(new Error('slow/wait cancelled'));
    expect(ran).toBe(false);
  });
});

describe('modules named in the config', () => {
  const TOOLS = `exports.tools = ['read', 'write', 'delete', 'admin'].map((name) => ({
    name,
    description: name + ' a record',
    inputSchema: { type: 'object', properties: {} },
    execute: (_input, ctx) => name + ' for ' + JSON.stringify(ctx.context),
  }));`;

  it('offers only allowedTools minus excludeTools, and refuses a call of a tool not offered', async () => {
    moduleFile('records.cjs', TOOLS);
    const tools = new CodeTools(modulesConfig({ records: { module: './records.cjs', allowedTools: ['read', 'write', 'delete'], excludeTools: ['delete'] } }));
    const listing = await listed(tools, 'records');
    expect(listing.tools.map((t) => t.name)).toEqual(['read', 'write']);
    expect(descriptor(listing, 'read')).toEqual({ server: 'records', name: 'read', description: 'read a record', inputSchema: { type: 'object', properties: {} } });
    const ok = await tools.callTool(callInput('records', 'read', {}, { tenant: 'acme' }), { turnId: 't' });
    expect(textOf(ok)).toBe('read for {"tenant":"acme"}');
    for (const hidden of ['delete', 'admin']) {
      expect(await rejectionOf(tools.callTool(callInput('records', hidden), { turnId: 't' }))).toMatchObject({
        nonRetryable: true,
        message: `unknown tool ${hidden} on server records`,
      });
    }
  });

  it("marks the tools the config's approval names, with its timeout", async () => {
    moduleFile('records.cjs', TOOLS);
    const tools = new CodeTools(modulesConfig({ records: { module: 'records.cjs', approval: { always: ['write', 'delete'], never: ['delete'], timeoutMs: 60_000 } } }));
    const listing = await listed(tools, 'records');
    expect(Object.fromEntries(listing.tools.map((t) => [t.name, t.approval]))).toEqual({ read: undefined, write: { timeoutMs: 60_000 }, delete: undefined, admin: undefined });
  });

  it("takes the stricter of the config's approval and the tool's own", async () => {
    moduleFile(
      'pay.cjs',
      `const t = (name, approval) => ({ name, inputSchema: { type: 'object', properties: {} }, execute: () => 1, ...(approval === undefined ? {} : { approval }) });
       exports.tools = [t('a', { timeoutMs: 5000 }), t('b', true), t('c', { timeoutMs: 90000 }), t('d')];`,
    );
    const tools = new CodeTools(modulesConfig({ pay: { module: 'pay.cjs', approval: { always: ['a', 'b', 'c', 'd'], timeoutMs: 30_000 } } }));
    const listing = await listed(tools, 'pay');
    expect(Object.fromEntries(listing.tools.map((t) => [t.name, t.approval]))).toEqual({
      a: { timeoutMs: 5000 },
      b: { timeoutMs: 30_000 },
      c: { timeoutMs: 30_000 },
      d: { timeoutMs: 30_000 },
    });
    const own = await listed(new CodeTools(modulesConfig({ pay: 'pay.cjs' })), 'pay');
    expect(Object.fromEntries(own.tools.map((t) => [t.name, t.approval]))).toEqual({ a: { timeoutMs: 5000 }, b: {}, c: { timeoutMs: 90_000 }, d: undefined });
  });

  it('reports a tool whose schema Claude cannot take as unusable, the others listed', async () => {
    moduleFile(
      'odd.cjs',
      `exports.tools = [
        { name: 'fine', inputSchema: { type: 'object', properties: {} }, execute: () => 1 },
        { name: 'stringy', inputSchema: { type: 'string' }, execute: () => 1 },
      ];`,
    );
    const listing = await listed(new CodeTools(modulesConfig({ odd: 'odd.cjs' })), 'odd');
    expect(listing.tools.map((t) => t.name)).toEqual(['fine']);
    expect(listing.unusable).toEqual([{ server: 'odd', name: 'stringy', reason: expect.stringMatching(/^input schema cannot be offered to Claude: /) }]);
  });

  it('reads a CommonJS module\'s `module.exports.tools`', async () => {
    moduleFile('commonjs.cjs', `const build = () => [{ name: 'w', inputSchema: { type: 'object', properties: {} }, execute: () => 'w' }]; module.exports = { tools: build() };`);
    const tools = new CodeTools(modulesConfig({ commonjs: 'commonjs.cjs' }));
    expect((await listed(tools, 'commonjs')).tools.map((t) => t.name)).toEqual(['w']);
    expect(textOf(await tools.callTool(callInput('commonjs', 'w'), { turnId: 't' }))).toBe('w');
  });

  it("lists a module that fails to load as unavailable, naming its path and the error; the other modules' tools stay", async () => {
    moduleFile('good.cjs', TOOLS);
    const bad = moduleFile('bad.cjs', `throw new Error('cannot reach the CRM\\nstack line');`);
    const log = recorder();
    const tools = new CodeTools(modulesConfig({ good: 'good.cjs', bad: 'bad.cjs', gone: 'missing.cjs' }), { given: [defineTool({ name: 'g', inputSchema: { type: 'object' }, execute: () => 1 })] }, [], log);
    await tools.load();
    expect(await tools.list('bad')).toEqual({ server: 'bad', reason: `module ${bad} did not load: cannot reach the CRM` });
    const gone = await tools.list('gone');
    expect('reason' in gone && gone.reason).toMatch(new RegExp(`^module ${escapeRegExp(path.join(dir, 'missing.cjs'))} did not load: .*missing\\.cjs`));
    expect((await listed(tools, 'good')).tools).toHaveLength(4);
    expect((await listed(tools, 'given')).tools.map((t) => t.name)).toEqual(['g']);
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual(
      expect.arrayContaining([`tool module bad: module ${bad} did not load: cannot reach the CRM`]),
    );
    const err = await rejectionOf(tools.callTool(callInput('bad', 'anything'), { turnId: 't' }));
    expect(err).toMatchObject({ type: 'CodeToolFailed', nonRetryable: true, message: `tool module bad: module ${bad} did not load: cannot reach the CRM` });
  });

  it('says a module it does not have is not configured', async () => {
    expect(await new CodeTools([]).list('nowhere')).toEqual({ server: 'nowhere', reason: 'not configured on the worker' });
  });

  it('loads each module once, however many listings and calls', async () => {
    moduleFile('counted.cjs', `globalThis.__codeToolsLoads = (globalThis.__codeToolsLoads ?? 0) + 1; exports.tools = [{ name: 'c', inputSchema: { type: 'object', properties: {} }, execute: () => 1 }];`);
    const tools = new CodeTools(modulesConfig({ counted: 'counted.cjs' }));
    await Promise.all([tools.list('counted'), tools.list('counted'), tools.callTool(callInput('counted', 'c'), { turnId: 't' })]);
    await tools.list('counted');
    expect((globalThis as { __codeToolsLoads?: number }).__codeToolsLoads).toBe(1);
    delete (globalThis as { __codeToolsLoads?: unknown }).__codeToolsLoads;
  });
});

describe('the toolbox: MCP servers and tool modules under one name space', () => {
  /** A pool of one server whose inject needs `context.tenant` (never started by these tests). */
  function poolOf(name = 'files'): McpPool {
    const parsed = parseMcpServers({ [name]: { command: path.join(dir, 'never-started'), inject: { tenant: '${context.tenant}' } } }, 'mcp_servers', dir);
    return new McpPool(parsed.servers!);
  }
  const crm = [defineTool({ name: 'lookup', inputSchema: { type: 'object' }, execute: (_i, c) => `${c.turnId} ${JSON.stringify(c.context)}` })];

  it('refuses a name that is both a server and a module', () => {
    const pool = poolOf('crm');
    expect(() => new Toolbox(pool, new CodeTools([], { crm }))).toThrow('crm: named both as an MCP server and as a tool module (one name is one of them)');
  });

  it("lists the modules' tools and policies with the servers' answers", async () => {
    const box = new Toolbox(poolOf(), new CodeTools([], { crm, broken: [{ nope: 1 }] }));
    expect(box.names).toEqual(['files', 'crm', 'broken']);
    const all = await box.listTools({ context: {} });
    expect(all.tools.map((t) => `${t.server}__${t.name}`)).toEqual(['crm__lookup']);
    expect(Object.keys(all.policies)).toEqual(['crm']);
    expect(all.unavailable).toEqual([
      { server: 'files', reason: expect.stringMatching(/^its inject needs context\.tenant/) },
      { server: 'broken', reason: expect.stringMatching(/^module given in code: tools\[0\]: not a tool/) },
    ]);
    expect(all.unknownServers).toEqual([]);
    // Asked for modules only, the servers are not asked; an unknown name is the pool's to report.
    expect(await box.listTools({ servers: ['crm', 'crm'] })).toMatchObject({ tools: [{ name: 'lookup' }], unavailable: [], unknownServers: [] });
    expect(await box.listTools({ servers: ['crm', 'nowhere'] })).toMatchObject({ tools: [{ name: 'lookup' }], unknownServers: ['nowhere'] });
    await box.close();
  });

  it("calls a module's tool with the turn's id and context; refuses an unknown name", async () => {
    const box = new Toolbox(poolOf(), new CodeTools([], { crm }));
    await box.load();
    const result = await box.callTool(callInput('crm', 'lookup', {}, { tenant: 'acme' }), { turnId: 'turn-5' });
    expect(textOf(result)).toBe('turn-5 {"tenant":"acme"}');
    expect(await rejectionOf(box.callTool(callInput('nowhere', 'x'), { turnId: 't' }))).toMatchObject({
      type: 'McpUnknownServer',
      nonRetryable: true,
      message: 'server nowhere is not configured on this worker',
    });
    await box.close();
  });

  it('without tool modules, is the pool', async () => {
    const box = new Toolbox(poolOf());
    expect(box.names).toEqual(['files']);
    expect((await box.listTools({ context: { tenant: 'x' }, servers: ['other'] })).unknownServers).toEqual(['other']);
    await box.close();
  });
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('an ES module (.mjs), loaded by Node itself through the built dist/', () => {
  const root = path.resolve(__dirname, '../..');
  const built = path.join(root, 'dist/src/tools/code-tools.js');

  it('is listed and called with the config\'s policies', () => {
    if (!fs.existsSync(built)) throw new Error(`${built} is missing: run npm run build first`);
    moduleFile(
      'esm-tools.mjs',
      `export const tools = [
        { name: 'hello', description: 'Says hello', inputSchema: { type: 'object', properties: { who: { type: 'string' } } }, execute: ({ who }, ctx) => 'hello ' + who + ' from ' + ctx.context.tenant },
        { name: 'secret_thing', inputSchema: { type: 'object', properties: {} }, execute: () => 1 },
      ];`,
    );
    moduleFile('broken.mjs', `export const tools = [; // a syntax error`);
    // Node's import() of CommonJS whose exports its lexer cannot see: the tools are under \`default\`.
    moduleFile('hidden.cjs', `const m = {}; m['to' + 'ols'] = [{ name: 'h', inputSchema: { type: 'object', properties: {} }, execute: () => 'h' }]; module.exports = m;`);
    const script = `
      const { CodeTools } = require(${JSON.stringify(built)});
      const { parseToolModules } = require(${JSON.stringify(path.join(root, 'dist/src/tools/tool-modules-config.js'))});
      (async () => {
        const { modules, problems } = parseToolModules({ esm: { module: 'esm-tools.mjs', excludeTools: ['secret_thing'], approval: 'always' }, broken: 'broken.mjs', hidden: './hidden.cjs' }, 'toolModules', ${JSON.stringify(dir)});
        const tools = new CodeTools(modules);
        const listing = await tools.list('esm');
        const broken = await tools.list('broken');
        const hidden = await tools.list('hidden');
        const result = await tools.callTool({ server: 'esm', tool: 'hello', arguments: { who: 'Ann' }, toolUseId: 'toolu_1', context: { tenant: 'acme' } }, { turnId: 't' });
        process.stdout.write(JSON.stringify({ problems, listing: listing.tools, broken, hidden: hidden.tools.map((t) => t.name), result }));
      })().catch((err) => { console.error(err); process.exit(1); });`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8', timeout: 30_000 })) as Record<string, unknown>;
    expect(out.problems).toEqual([]);
    expect(out.listing).toEqual([{ server: 'esm', name: 'hello', description: 'Says hello', inputSchema: { type: 'object', properties: { who: { type: 'string' } } }, approval: {} }]);
    expect(out.broken).toEqual({ server: 'broken', reason: expect.stringMatching(new RegExp(`^module ${escapeRegExp(path.join(dir, 'broken.mjs'))} did not load: `)) });
    expect(out.hidden).toEqual(['h']);
    expect(out.result).toEqual({ content: [{ type: 'text', text: 'hello Ann from acme' }], isError: false, artifacts: [], truncatedBytes: 0 });
  });
});
