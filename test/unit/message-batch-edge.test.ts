/**
 * The edges of Message Batch calls: custom_ids, how a result becomes its turn's outcome (the same
 * failure types as an interactive call), creating a batch without paying twice when a create
 * response is lost, the formatter planned over batched replies, and a turn's batch request.
 * The API is the stub's, through the real SDK.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageBatchResult } from '@anthropic-ai/sdk/resources/messages/batches';
import { ApplicationFailure } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { buildMessageParams, callClaude } from '../../src/claude/call-claude';
import { makePriceTable } from '../../src/claude/pricing';
import { AUTO_INSTRUCTIONS, FINAL_ANSWER_REQUEST } from '../../src/claude/response-formatter';
import type { ClaudeCallOutput, ContentBlock, FormatRequest, MessageParam, Tool } from '../../src/core/contracts';
import { ClaudeFailureType } from '../../src/core/failure-types';
import { BatchedOutcomeType, type BatchRequestEntry } from '../../src/core/message-batches';
import { segment, toolsSegment } from '../../src/core/transcript-segment';
import { addUsage, fromApiUsage, type TokenUsage } from '../../src/core/usage';
import { outcomeOfResult, type BatchedResult } from '../../src/message-batches/batch-outcome';
import { batchRequestOf } from '../../src/message-batches/batch-request';
import { createOrAdoptBatch, type CreateAttempt } from '../../src/message-batches/create-batch';
import { batchCustomId } from '../../src/message-batches/custom-id';
import { planFormatterCall, type FormatterReply } from '../../src/message-batches/formatter-plan';
import { FORMATTER_INSTRUCTIONS, FORMATTER_TOOL, FORMATTER_TOOL_NAME } from '../../src/schemas/response-formatter-tool';
import { startStubModel, type Scenario, type StubModel } from '../../src/stub';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const prices = makePriceTable();

/** A workflow id a custom_id must never carry: spaces, unicode, slashes. */
const WORKFLOW_ID = 'batch/März report ✓/turn 7 — ünïcødé/日本語';
const RUN_ID = '0193a6f2-7c1e-7d3a-9f00-3b1c2d4e5f60';

describe('batchCustomId', () => {
  it('matches the API pattern, is stable, differs by key and run, and carries nothing of the workflow id', () => {
    const id = batchCustomId(WORKFLOW_ID, RUN_ID, 'call-1/attempt-1');
    expect(id).toMatch(CUSTOM_ID);
    expect(batchCustomId(WORKFLOW_ID, RUN_ID, 'call-1/attempt-1')).toBe(id);
    const others = [
      batchCustomId(WORKFLOW_ID, RUN_ID, 'call-1/attempt-2'),
      batchCustomId(WORKFLOW_ID, RUN_ID, 'call-2/attempt-1'),
      batchCustomId(WORKFLOW_ID, '0193a6f2-7c1e-7d3a-9f00-3b1c2d4e5f61', 'call-1/attempt-1'),
      batchCustomId(`${WORKFLOW_ID}x`, RUN_ID, 'call-1/attempt-1'),
      batchCustomId('', '', ''),
    ];
    for (const other of others) {
      expect(other).toMatch(CUSTOM_ID);
      expect(other).not.toBe(id);
    }
    // No piece of the workflow id (3 characters or more, split at its separators) is in the custom_id.
    const pieces = WORKFLOW_ID.split(/[\s/—]+/).filter((p) => p.length >= 3);
    expect(pieces.length).toBeGreaterThan(3);
    for (const p of pieces) expect(id).not.toContain(p);
    // Nor any 4-character window of it, whatever the separators.
    for (let i = 0; i + 4 <= WORKFLOW_ID.length; i++) expect(id).not.toContain(WORKFLOW_ID.slice(i, i + 4));
    // A workflow id far longer than 64 characters still gives a valid id.
    expect(batchCustomId('w'.repeat(10_000), RUN_ID, 'k')).toMatch(CUSTOM_ID);
  });
});

describe('outcomeOfResult', () => {
  const BATCH = 'msgbatch_test_0001';
  const usage = {
    input_tokens: 1234,
    output_tokens: 567,
    cache_read_input_tokens: 2000,
    cache_creation_input_tokens: 300,
    cache_creation: { ephemeral_1h_input_tokens: 200, ephemeral_5m_input_tokens: 100 },
  };
  const succeeded = (model: string): MessageBatchResult =>
    ({
      type: 'succeeded',
      message: {
        id: 'msg_batched_1',
        type: 'message',
        role: 'assistant',
        model,
        content: [
          { type: 'text', text: 'Let me look.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: { message: 'hi' } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { ...usage, server_tool_use: null, service_tier: 'batch' },
      },
    }) as unknown as MessageBatchResult;
  const errored = (type: string, message: string): MessageBatchResult =>
    ({ type: 'errored', error: { type: 'error', error: { type, message }, request_id: null } }) as unknown as MessageBatchResult;
  const failureOf = (r: BatchedResult) => {
    if (!('failure' in r)) throw new Error(`expected a failure, got ${JSON.stringify(r)}`);
    return r.failure;
  };

  it('succeeded: the output an interactive call gives, at half its cost', () => {
    for (const model of ['claude-sonnet-4-5', 'claude-opus-4-1', 'claude-haiku-5-5']) {
      const r = outcomeOfResult(succeeded(model), BATCH, { prices });
      if (!('output' in r)) throw new Error('expected an output');
      const full = prices.costOf(fromApiUsage(usage), model).usd;
      expect(full).toBeGreaterThan(0);
      // The 1-hour cache writes are priced apart (2x input, not 1.25x), at batch prices too.
      expect(fromApiUsage(usage).cacheCreation1hInputTokens).toBe(200);
      expect(full).toBeGreaterThan(prices.costOf({ ...fromApiUsage(usage), cacheCreation1hInputTokens: 0 }, model).usd);
      expect(r.output).toEqual({
        content: [
          { type: 'text', text: 'Let me look.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: { message: 'hi' } },
        ],
        stopReason: 'tool_use',
        usage: fromApiUsage(usage),
        model,
        requestId: 'msg_batched_1',
        costUsd: full / 2,
      });
    }
    // An unpriced model costs 0, as interactively.
    const unknown = outcomeOfResult(succeeded('echo'), BATCH, { prices });
    expect('output' in unknown && unknown.output.costUsd).toBe(0);
  });

  it('errored: the failure type, retryability and retry delay the same error has interactively; the message names the batch', () => {
    const cases: Array<[errorType: string, message: string, type: string | RegExp, retryable: boolean]> = [
      ['overloaded_error', 'Overloaded', ClaudeFailureType.Overloaded, true],
      ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', /^ClaudeRateLimited/, true],
      ['invalid_request_error', 'prompt is too long: 215000 tokens > 200000 maximum', ClaudeFailureType.PromptTooLong, false],
      ['invalid_request_error', 'messages.0.role: the first message must use the "user" role', ClaudeFailureType.InvalidRequest, false],
      ['authentication_error', 'invalid x-api-key', ClaudeFailureType.Auth, false],
      ['permission_error', 'no access', ClaudeFailureType.Auth, false],
      ['billing_error', 'credit balance too low', ClaudeFailureType.Billing, false],
      ['api_error', 'Internal server error', ClaudeFailureType.ServerError, true],
      ['timeout_error', 'took too long', ClaudeFailureType.ServerError, true],
      ['some_new_error', 'who knows', ClaudeFailureType.ServerError, true],
    ];
    for (const [errorType, message, type, retryable] of cases) {
      const f = failureOf(outcomeOfResult(errored(errorType, message), BATCH, { prices }));
      if (typeof type === 'string') expect(f.type).toBe(type);
      else expect(f.type).toMatch(type);
      expect({ errorType, retryable: f.retryable }).toEqual({ errorType, retryable });
      expect(f.message).toContain(BATCH);
      expect(f.message).toContain(message);
      expect(f.message).toContain(errorType);
      if (errorType !== 'rate_limit_error') expect(f.nextRetryDelayMs).toBeUndefined();
    }
    // A 429 in a result has no retry-after: the policy's delay for one without it.
    const limited = failureOf(outcomeOfResult(errored('rate_limit_error', 'slow down'), BATCH, { prices }));
    expect(limited).toMatchObject({ type: ClaudeFailureType.RateLimitedNoRetryAfter, nextRetryDelayMs: 30_000 });
    const custom = failureOf(outcomeOfResult(errored('rate_limit_error', 'slow down'), BATCH, { prices, errorPolicy: { noRetryAfterDelayMs: 1234 } }));
    expect(custom.nextRetryDelayMs).toBe(1234);
    // A result without an error body is a server error, retried.
    const bare = failureOf(outcomeOfResult({ type: 'errored', error: undefined } as unknown as MessageBatchResult, BATCH, { prices }));
    expect(bare).toMatchObject({ type: ClaudeFailureType.ServerError, retryable: true });
    expect(bare.message).toContain(BATCH);
  });

  it('expired may be sent again; canceled ends the call', () => {
    const expired = failureOf(outcomeOfResult({ type: 'expired' }, BATCH, { prices }));
    expect(expired).toEqual({ type: BatchedOutcomeType.Expired, message: expect.stringContaining(BATCH), retryable: true });
    expect(expired.type).toBe('ClaudeBatchExpired');
    const canceled = failureOf(outcomeOfResult({ type: 'canceled' }, BATCH, { prices }));
    expect(canceled).toEqual({ type: BatchedOutcomeType.Canceled, message: expect.stringContaining(BATCH), retryable: false });
    expect(canceled.type).toBe('ClaudeBatchCanceled');
  });

  describe('against the stub: a batched error maps as the same error from /v1/messages', () => {
    const step = { content: [{ type: 'text' as const, text: 'fine' }] };
    const faults: Record<string, { status: number; message?: string }> = {
      overloaded: { status: 529 },
      limited: { status: 429 },
      server: { status: 500 },
      auth: { status: 401 },
      denied: { status: 403 },
      tooLong: { status: 400, message: 'prompt is too long: 215000 tokens > 200000 maximum' },
      invalid: { status: 400, message: 'max_tokens: must be at most 8192' },
    };
    let stub: StubModel;
    let client: Anthropic;
    beforeAll(async () => {
      const scenarios: Record<string, Scenario> = {};
      for (const [name, f] of Object.entries(faults)) scenarios[name] = { steps: [step], faults: [{ step: 0, times: -1, ...f }] };
      stub = await startStubModel({ scenarios, messageBatches: { processingMs: 30 } });
      client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
    });
    afterAll(() => stub.close());

    it('type, retryable and retry delay agree for every error', async () => {
      const request = (model: string) => ({ model, maxTokens: 100, tools: [], messages: [{ role: 'user' as const, content: 'q' }] });
      const created = await client.messages.batches.create({
        requests: Object.keys(faults).map((name) => ({ custom_id: name, params: buildMessageParams(request(name)) })),
      });
      while ((await client.messages.batches.retrieve(created.id)).processing_status !== 'ended') await sleep(10);
      const batched: Record<string, BatchedResult> = {};
      for await (const r of await client.messages.batches.results(created.id)) batched[r.custom_id] = outcomeOfResult(r.result, created.id, { prices });

      for (const name of Object.keys(faults)) {
        const interactive = await callClaude(client, request(name)).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(interactive).toBeInstanceOf(ApplicationFailure);
        const i = interactive as ApplicationFailure;
        const b = failureOf(batched[name]!);
        expect({ name, type: b.type, retryable: b.retryable, delay: b.nextRetryDelayMs }).toEqual({
          name,
          type: i.type,
          retryable: !i.nonRetryable,
          delay: i.nextRetryDelay != null ? msToNumber(i.nextRetryDelay) : undefined,
        });
        expect(b.message).toContain(created.id);
      }
      expect(Object.fromEntries(Object.entries(batched).map(([k, v]) => [k, failureOf(v).type]))).toEqual({
        overloaded: ClaudeFailureType.Overloaded,
        limited: ClaudeFailureType.RateLimitedNoRetryAfter,
        server: ClaudeFailureType.ServerError,
        auth: ClaudeFailureType.Auth,
        denied: ClaudeFailureType.Auth,
        tooLong: ClaudeFailureType.PromptTooLong,
        invalid: ClaudeFailureType.InvalidRequest,
      });
    });
  });
});

describe('createOrAdoptBatch', () => {
  const tools = [{ name: 'everything__echo', input_schema: { type: 'object' as const } }];
  const entry = (i: number): BatchRequestEntry => {
    const params = { model: 'echo', max_tokens: 100, tools, messages: [{ role: 'user', content: `question ${i}` }] };
    return { batchRequest: batchCustomId(WORKFLOW_ID, RUN_ID, `call-${i}`), params, bytes: Buffer.byteLength(JSON.stringify(params)) };
  };
  const entries = (n: number, from = 0): BatchRequestEntry[] => Array.from({ length: n }, (_, i) => entry(from + i));
  const step = { content: [{ type: 'text' as const, text: 'fine' }] };

  let stub: StubModel;
  let client: Anthropic;
  /** Every HTTP call the client made, as `METHOD path`. */
  let calls: string[];
  let recorded: string[];
  // A fresh stub for each test: the list holds only this test's batches.
  beforeEach(async () => {
    stub = await startStubModel({ scenarios: { echo: { steps: [step] } }, messageBatches: { processingMs: 5000 } });
    calls = [];
    recorded = [];
    client = new Anthropic({
      apiKey: 'x',
      baseURL: stub.url,
      maxRetries: 0,
      fetch: (async (url: string | URL | Request, init?: RequestInit) => {
        calls.push(`${init?.method ?? 'GET'} ${new URL(String(url)).pathname}`);
        return fetch(url, init);
      }) as typeof fetch,
    });
  });
  afterEach(() => stub.close());

  const attempt = (n: number, firstScheduledAtMs: number, more: Partial<CreateAttempt> = {}): CreateAttempt => ({
    attempt: n,
    firstScheduledAtMs,
    record: (id) => recorded.push(id),
    ...more,
  });
  /** Creates a batch as an earlier attempt whose response was lost would have. */
  const createDirectly = async (es: BatchRequestEntry[]) => {
    const b = await client.messages.batches.create({ requests: es.map((e) => ({ custom_id: e.batchRequest, params: e.params as never })) });
    calls.length = 0;
    return b;
  };

  it('attempt 1 creates, records the id once, and lists nothing', async () => {
    const es = entries(3);
    const created = await createOrAdoptBatch(client, es, attempt(1, Date.now()));
    expect(created).toEqual({ id: expect.stringMatching(/^msgbatch_stub_/), adopted: false, duplicateSuspects: [] });
    expect(recorded).toEqual([created.id]);
    expect(calls).toEqual(['POST /v1/messages/batches']);
    expect(stub.messageBatches.batches.map((b) => [b.id, b.requests.map((r) => r.customId)])).toEqual([
      [created.id, es.map((e) => e.batchRequest)],
    ]);
  });

  it('attempt 2 adopts the batch an earlier attempt created since it was first scheduled (same request count)', async () => {
    const t0 = Date.now();
    const es = entries(2);
    const earlier = await createDirectly(es);
    const created = await createOrAdoptBatch(client, es, attempt(2, t0));
    expect(created).toEqual({ id: earlier.id, adopted: true, duplicateSuspects: [] });
    expect(recorded).toEqual([earlier.id]);
    expect(calls.every((c) => c.startsWith('GET /v1/messages/batches'))).toBe(true);
    expect(stub.messageBatches.batches).toHaveLength(1);
    expect(stub.messageBatches.createsReceived).toBe(1);
  });

  it('attempt 2 creates when no batch matches: another request count, or created before the window', async () => {
    const es = entries(2);
    const other = await createDirectly(entries(3, 10));
    const t0 = Date.now();
    const first = await createOrAdoptBatch(client, es, attempt(2, t0));
    expect(first).toMatchObject({ adopted: false, duplicateSuspects: [] });
    expect(first.id).not.toBe(other.id);
    expect(stub.messageBatches.batches).toHaveLength(2);

    // That batch (2 requests) is older than the window of a later first schedule (5 s clock slack).
    const createdAt = stub.messageBatches.batches[1]!.createdAt;
    const late = await createOrAdoptBatch(client, es, attempt(3, createdAt + 5_001));
    expect(late).toMatchObject({ adopted: false });
    expect(stub.messageBatches.batches).toHaveLength(3);
    // Within the slack it is adopted (this worker's clock may run ahead of the API's).
    // Both 2-request batches are then in the window: the older is adopted, the newer suspected.
    const slack = await createOrAdoptBatch(client, es, attempt(2, createdAt + 4_000));
    expect(slack).toEqual({ id: first.id, adopted: true, duplicateSuspects: [late.id] });
    expect(stub.messageBatches.batches).toHaveLength(3);
    expect(recorded).toEqual([first.id, late.id, first.id]);
  });

  it('a recorded batch id is returned without any API call', async () => {
    const created = await createOrAdoptBatch(client, entries(1), attempt(1, Date.now()));
    const receivedBefore = stub.messageBatches.createsReceived;
    calls.length = 0;
    recorded.length = 0;
    for (const n of [2, 5]) {
      const again = await createOrAdoptBatch(client, entries(1), attempt(n, Date.now(), { recordedBatchId: created.id }));
      expect(again).toEqual({ id: created.id, adopted: true, duplicateSuspects: [] });
    }
    expect(calls).toEqual([]);
    expect(recorded).toEqual([]);
    expect(stub.messageBatches.createsReceived).toBe(receivedBefore);
    expect(stub.messageBatches.batches).toHaveLength(1);
  });

  it('two matching batches: the oldest is adopted, the other is a suspected duplicate', async () => {
    const t0 = Date.now();
    const es = entries(4);
    const older = await createDirectly(es);
    const newer = await createDirectly(es);
    await createDirectly(entries(5, 20)); // another count: no suspect
    const created = await createOrAdoptBatch(client, es, attempt(3, t0));
    expect(created).toEqual({ id: older.id, adopted: true, duplicateSuspects: [newer.id] });
    expect(recorded).toEqual([older.id]);
    expect(stub.messageBatches.batches).toHaveLength(3);
  });

  it('a create response lost (the worker went away after the API took it): the next attempt adopts, one batch in all', async () => {
    stub.messageBatches.settings.createDelayMs = 300;
    const es = entries(3);
    const t0 = Date.now();
    const abort = new AbortController();
    const first = createOrAdoptBatch(client, es, attempt(1, t0, { signal: abort.signal }));
    while (stub.messageBatches.createsReceived === 0) await sleep(5);
    abort.abort();
    await expect(first).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    expect(recorded).toEqual([]);
    expect(stub.messageBatches.batches).toHaveLength(1);

    const second = await createOrAdoptBatch(client, es, attempt(2, t0));
    const [only] = stub.messageBatches.batches;
    expect(second).toEqual({ id: only!.id, adopted: true, duplicateSuspects: [] });
    expect(recorded).toEqual([only!.id]);
    expect(stub.messageBatches.batches).toHaveLength(1);
    expect(stub.messageBatches.createsReceived).toBe(1);
    expect(only!.createResponded).toBe(false);
    expect(stub.messageBatches.duplicateSubmissions()).toEqual([]);
  });
});

describe('planFormatterCall', () => {
  const good = { thinking: 'short', conversation: [{ type: 'text', content: 'The echo said **hi**.' }] };
  const bad = { conversation: 'The echo said hi.' };
  const transcript = (): MessageParam[] => [
    { role: 'user', content: 'What does echo say?' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me call echo.' },
        { type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: { message: 'hi' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Echo: hi' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Echo answered: hi.' }] },
  ];
  const input = (over: Partial<FormatRequest> = {}): FormatRequest => ({
    model: 'claude-sonnet-4-5',
    system: 'Be helpful.',
    messages: transcript(),
    maxTokens: 1000,
    ...over,
  });
  const usageA: TokenUsage = { inputTokens: 500, outputTokens: 40, cacheReadInputTokens: 100, cacheCreationInputTokens: 10 };
  const usageB: TokenUsage = { inputTokens: 700, outputTokens: 60, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  const formatterReply = (formatterInput: unknown, usage: TokenUsage, costUsd: number, id = 'toolu_f1'): ClaudeCallOutput => ({
    content: [{ type: 'tool_use', id, name: FORMATTER_TOOL_NAME, input: formatterInput }] as unknown as ContentBlock[],
    stopReason: 'tool_use',
    usage,
    model: 'claude-sonnet-4-5',
    costUsd,
  });
  const refusal: FormatterReply = {
    failure: {
      type: ClaudeFailureType.InvalidRequest,
      message: "Claude API 400 invalid_request_error: tool_choice of type 'tool' is not supported with this model; use 'auto' (in Message Batch msgbatch_1)",
      retryable: false,
    },
  };
  const requestOf = (planned: Awaited<ReturnType<typeof planFormatterCall>>) => {
    if (!('request' in planned)) throw new Error(`expected a request, got ${JSON.stringify(planned)}`);
    return planned.request;
  };
  const doneOf = (planned: Awaited<ReturnType<typeof planFormatterCall>>) => {
    if (!('done' in planned)) throw new Error(`expected done, got ${JSON.stringify(planned)}`);
    return planned.done;
  };

  it('no replies: the forced formatter request', async () => {
    const i = input();
    const before = structuredClone(i);
    const request = requestOf(await planFormatterCall(i, []));
    expect(request).toEqual({
      model: 'claude-sonnet-4-5',
      maxTokens: 1000,
      tools: [FORMATTER_TOOL],
      toolChoice: { type: 'tool', name: FORMATTER_TOOL_NAME },
      system: `Be helpful.\n\n${FORMATTER_INSTRUCTIONS}`,
      messages: [...transcript(), { role: 'user', content: FINAL_ANSWER_REQUEST }],
    });
    expect(i).toEqual(before);
  });

  it('with extended thinking the first request is the auto path', async () => {
    const thinking = { type: 'enabled' as const, budget_tokens: 2000 };
    const request = requestOf(await planFormatterCall(input({ thinking }), []));
    expect(request.toolChoice).toBeUndefined();
    expect(request.thinking).toEqual(thinking);
    expect(request.system).toContain(AUTO_INSTRUCTIONS);
  });

  it('a valid reply: done, forced, with the reply usage and cost', async () => {
    const done = doneOf(await planFormatterCall(input(), [formatterReply(good, usageA, 0.0125)]));
    expect(done).toEqual({ output: good, mode: 'forced', usage: usageA, calls: 1, notes: [], costUsd: 0.0125 });
  });

  it('an invalid reply: the next request is the repair call; its valid reply makes it repaired, usage and cost summed', async () => {
    const first = formatterReply(bad, usageA, 0.01);
    const request = requestOf(await planFormatterCall(input(), [first]));
    expect(request.toolChoice).toEqual({ type: 'tool', name: FORMATTER_TOOL_NAME });
    expect(request.maxTokens).toBe(1000);
    expect(request.messages).toHaveLength(transcript().length + 3);
    expect(request.messages.at(-2)).toEqual({ role: 'assistant', content: first.content });
    const results = request.messages.at(-1)!.content as unknown as Array<Record<string, unknown>>;
    expect(results).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_f1', is_error: true, content: expect.stringContaining('invalid') }),
    ]);

    const done = doneOf(await planFormatterCall(input(), [first, formatterReply(good, usageB, 0.02, 'toolu_f2')]));
    expect(done).toMatchObject({ output: good, mode: 'repaired', calls: 2, usage: addUsage(usageA, usageB) });
    expect(done.costUsd).toBeCloseTo(0.03, 12);

    // An answer cut at max_tokens is repaired with twice the tokens.
    const cut = requestOf(await planFormatterCall(input(), [{ ...formatterReply(bad, usageA, 0.01), stopReason: 'max_tokens' }]));
    expect(cut.maxTokens).toBe(2000);
  });

  it('a refusal of forced tool_choice: the next request is the auto path, and its reply finishes it', async () => {
    const request = requestOf(await planFormatterCall(input(), [refusal]));
    expect(request.toolChoice).toBeUndefined();
    expect(request.tools).toEqual([FORMATTER_TOOL]);
    expect(request.system).toBe(`Be helpful.\n\n${FORMATTER_INSTRUCTIONS}\n\n${AUTO_INSTRUCTIONS}`);

    const done = doneOf(await planFormatterCall(input(), [refusal, formatterReply(good, usageB, 0.02)]));
    expect(done).toMatchObject({ output: good, mode: 'auto', usage: usageB, costUsd: 0.02 });
    expect(done.notes.join(' ')).toMatch(/forced tool_choice was refused/);
  });

  it('any other final failure is thrown with its type', async () => {
    const cases: FormatterReply[] = [
      { failure: { type: ClaudeFailureType.PromptTooLong, message: 'prompt is too long (in Message Batch b)', retryable: false } },
      { failure: { type: ClaudeFailureType.InvalidRequest, message: 'max_tokens: too large (in Message Batch b)', retryable: false } },
      { failure: { type: BatchedOutcomeType.Canceled, message: 'Message Batch b was cancelled', retryable: false } },
    ];
    for (const reply of cases) {
      const err = await planFormatterCall(input(), [reply]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApplicationFailure);
      const failure = err as ApplicationFailure;
      if (!('failure' in reply)) throw new Error('unreachable');
      expect({ type: failure.type, message: failure.message, nonRetryable: failure.nonRetryable }).toEqual({
        type: reply.failure.type,
        message: reply.failure.message,
        nonRetryable: true,
      });
    }
    // A failure of the repair call is thrown too.
    const err = await planFormatterCall(input(), [formatterReply(bad, usageA, 0.01), cases[0]!]).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: ClaudeFailureType.PromptTooLong });
  });
});

describe('batchRequestOf', () => {
  const tools: Tool[] = [{ name: 'everything__echo', description: 'Echoes', input_schema: { type: 'object', properties: { message: { type: 'string' } } } }];
  const messages: MessageParam[] = [
    { role: 'user', content: 'Sag „hallo" — 日本語 ✓' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: { message: 'hallo' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Echo: hallo' }] },
  ];
  const turn = { workflowId: WORKFLOW_ID, runId: RUN_ID };
  const request = { model: 'claude-sonnet-4-5', system: 'Be brief.', maxTokens: 512, step: 3 };

  it('a step: the params an interactive call sends, their JSON bytes, and the custom_id of the turn and key', async () => {
    for (const cache of [true, false]) {
      const planned = await batchRequestOf(
        { key: 'call-3/attempt-1', taskQueue: 'q', kind: 'step', request },
        [toolsSegment(tools), segment(messages.slice(0, 1)), segment(messages.slice(1))],
        turn,
        { cache },
      );
      if (!('entry' in planned)) throw new Error('expected an entry');
      const { entry } = planned;
      const expected = buildMessageParams({ model: request.model, system: request.system, maxTokens: request.maxTokens, messages, tools }, { cache });
      expect(entry.params).toEqual(expected);
      expect(entry.params).not.toHaveProperty('stream');
      expect(entry.params).not.toHaveProperty('step');
      expect(entry.bytes).toBe(Buffer.byteLength(JSON.stringify(entry.params)));
      expect(entry.bytes).toBeGreaterThan(JSON.stringify(entry.params).length); // multi-byte characters counted as bytes
      expect(entry.batchRequest).toBe(batchCustomId(WORKFLOW_ID, RUN_ID, 'call-3/attempt-1'));
      expect(entry.batchRequest).toMatch(CUSTOM_ID);
      if (cache) expect(JSON.stringify(entry.params)).toContain('cache_control');
      else expect(JSON.stringify(entry.params)).not.toContain('cache_control');
    }
  });

  it('a formatter: the forced request as params, or done when its replies make the answer', async () => {
    const good = { conversation: [{ type: 'text', content: 'hallo' }] };
    const formatter = { key: 'formatter/round-0', taskQueue: 'q', kind: 'formatter' as const, request: { model: 'claude-sonnet-4-5', maxTokens: 512 } };
    const planned = await batchRequestOf({ ...formatter, replies: [] }, [segment(messages)], turn, { cache: true });
    if (!('entry' in planned)) throw new Error('expected an entry');
    expect(planned.entry.params).toMatchObject({ tool_choice: { type: 'tool', name: FORMATTER_TOOL_NAME }, tools: [expect.objectContaining({ name: FORMATTER_TOOL_NAME })] });
    expect(planned.entry.batchRequest).toBe(batchCustomId(WORKFLOW_ID, RUN_ID, 'formatter/round-0'));
    expect(planned.entry.bytes).toBe(Buffer.byteLength(JSON.stringify(planned.entry.params)));

    const reply: ClaudeCallOutput = {
      content: [{ type: 'tool_use', id: 'toolu_f', name: FORMATTER_TOOL_NAME, input: good }] as unknown as ContentBlock[],
      stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      model: 'claude-sonnet-4-5',
      costUsd: 0.001,
    };
    const done = await batchRequestOf({ ...formatter, key: 'formatter/round-1', replies: [reply] }, [segment(messages)], turn, { cache: true });
    expect(done).toEqual({ done: expect.objectContaining({ output: good, mode: 'forced', costUsd: 0.001 }) });
  });
});

describe("the formatter's calls through the stub's Message Batches, planned reply by reply", () => {
  const good = { conversation: [{ type: 'text', content: 'Echo answered: hi.' }] };
  const bad = { conversation: 'Echo answered: hi.' };
  const step = { content: [{ type: 'text' as const, text: 'unused' }] };
  let stub: StubModel;
  let client: Anthropic;
  const pricesForStub = makePriceTable({ refuses: { input: 3, output: 15 }, repair: { input: 3, output: 15 } });
  beforeAll(async () => {
    stub = await startStubModel({
      scenarios: {
        refuses: { steps: [step], formatter: good, formatterRefusesForcedTool: true },
        repair: { steps: [step], formatter: [bad, good] },
      },
      messageBatches: { processingMs: 20 },
    });
    client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
  });
  afterAll(() => stub.close());

  /** Sends one request in a Message Batch of its own and returns its reply as a turn gets it. */
  async function viaBatch(params: Record<string, unknown>): Promise<FormatterReply> {
    const created = await client.messages.batches.create({ requests: [{ custom_id: 'f', params: params as never }] });
    while ((await client.messages.batches.retrieve(created.id)).processing_status !== 'ended') await sleep(5);
    for await (const r of await client.messages.batches.results(created.id)) {
      const outcome = outcomeOfResult(r.result, created.id, { prices: pricesForStub });
      return 'output' in outcome ? outcome.output : outcome;
    }
    throw new Error('no result');
  }

  async function run(model: string): Promise<{ done: Awaited<ReturnType<typeof planFormatterCall>>; replies: FormatterReply[] }> {
    const input: FormatRequest = { model, system: 'Be helpful.', maxTokens: 1000, messages: [{ role: 'user', content: 'What does echo say?' }, { role: 'assistant', content: 'Echo answered: hi.' }] };
    const replies: FormatterReply[] = [];
    for (let round = 0; round < 4; round++) {
      const planned = await planFormatterCall(input, replies);
      if ('done' in planned) return { done: planned, replies };
      replies.push(await viaBatch(buildMessageParams(planned.request) as unknown as Record<string, unknown>));
    }
    throw new Error('the formatter did not finish');
  }

  it('a refusal of forced tool_choice, as the batch result carries it, turns to the auto path', async () => {
    const { done, replies } = await run('refuses');
    expect(replies).toHaveLength(2);
    expect(replies[0]).toMatchObject({ failure: { type: ClaudeFailureType.InvalidRequest, retryable: false } });
    expect('done' in done && done.done).toMatchObject({ output: good, mode: 'auto' });
    const output = replies[1] as ClaudeCallOutput;
    expect('done' in done && done.done.usage).toEqual(output.usage);
    expect('done' in done && done.done.costUsd).toBe(output.costUsd);
    expect(output.costUsd).toBe(pricesForStub.costOf(output.usage, 'refuses').usd / 2);
  });

  it('an invalid answer is repaired in a second batch; usage and cost are both replies summed', async () => {
    const { done, replies } = await run('repair');
    expect(replies).toHaveLength(2);
    const [a, b] = replies as ClaudeCallOutput[];
    if (!('done' in done)) throw new Error('not done');
    expect(done.done).toMatchObject({ output: good, mode: 'repaired', calls: 2, usage: addUsage(a!.usage, b!.usage) });
    expect(done.done.costUsd).toBeCloseTo(a!.costUsd! + b!.costUsd!, 12);
  });
});
