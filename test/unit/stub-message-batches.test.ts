/** The stub's Message Batches API, through the real Anthropic SDK over HTTP. */
import Anthropic from '@anthropic-ai/sdk';
import { startStubModel, type Scenario, type StubModel } from '../../src/stub';

const PROCESSING_MS = 100;

let stub: StubModel;
let client: Anthropic;

const scenarios: Record<string, Scenario> = {
  echo: {
    steps: [
      { content: [{ type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
      { content: [{ type: 'text', text: 'answer to {{question}}: {{toolResults}}' }] },
    ],
  },
  overloaded: {
    steps: [{ content: [{ type: 'text', text: 'fine' }] }],
    faults: [{ step: 0, status: 529, times: 1 }],
  },
  expiring: {
    steps: [{ content: [{ type: 'text', text: 'fine' }] }],
    faults: [{ step: 0, status: 500, times: 1, batchResult: 'expired' }],
  },
};

beforeAll(async () => {
  stub = await startStubModel({ scenarios, messageBatches: { processingMs: PROCESSING_MS } });
  client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
});
afterAll(() => stub.close());
beforeEach(() => {
  stub.reset();
  stub.messageBatches.settings.processingMs = PROCESSING_MS;
  stub.messageBatches.settings.createDelayMs = 0;
});
/** Requests a test sent to /v1/messages itself: the only ones the stub may log there. */
let askedDirectly = 0;
afterEach(() => {
  expect(stub.requests).toHaveLength(askedDirectly);
  askedDirectly = 0;
});

const tools = [{ name: 'everything__echo', input_schema: { type: 'object' as const } }];
const params = (question: string, model = 'echo'): Anthropic.MessageCreateParamsNonStreaming => ({
  model,
  max_tokens: 100,
  tools,
  messages: [{ role: 'user', content: question }],
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ended(id: string): Promise<Anthropic.Messages.MessageBatch> {
  for (;;) {
    const batch = await client.messages.batches.retrieve(id);
    if (batch.processing_status === 'ended') return batch;
    await sleep(20);
  }
}

async function resultsOf(id: string): Promise<Anthropic.Messages.MessageBatchIndividualResponse[]> {
  const out: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
  for await (const r of await client.messages.batches.results(id)) out.push(r);
  return out;
}

/** The message /v1/messages answers for the same params, asked of a fresh stub (the one under test logs no request). */
async function interactive(p: Anthropic.MessageCreateParamsNonStreaming): Promise<Anthropic.Message> {
  const other = await startStubModel({ scenarios });
  try {
    return await new Anthropic({ apiKey: 'x', baseURL: other.url, maxRetries: 0 }).messages.create(p);
  } finally {
    await other.close();
  }
}

it('creates a batch that is in progress, then ends with every request answered as /v1/messages answers it', async () => {
  // Long enough to see it in progress on a cold start.
  stub.messageBatches.settings.processingMs = 500;
  const requests = ['a', 'b', 'c'].map((q) => ({ custom_id: `req-${q}`, params: params(q) }));
  const before = Date.now();
  const created = await client.messages.batches.create({ requests });
  expect(created).toMatchObject({
    type: 'message_batch',
    processing_status: 'in_progress',
    request_counts: { processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
    ended_at: null,
    cancel_initiated_at: null,
    archived_at: null,
    results_url: null,
  });
  expect(created.id).toMatch(/^msgbatch_stub_[A-Za-z0-9_-]+$/);
  const createdAt = Date.parse(created.created_at);
  expect(createdAt).toBeGreaterThanOrEqual(before - 1);
  expect(Date.parse(created.expires_at) - createdAt).toBe(24 * 60 * 60 * 1000);
  expect((await client.messages.batches.retrieve(created.id)).processing_status).toBe('in_progress');
  await expect(client.messages.batches.results(created.id)).rejects.toThrow(/results_url/);
  const early = await fetch(`${stub.url}/v1/messages/batches/${created.id}/results`);
  expect(early.status).toBe(404);
  expect(await early.json()).toMatchObject({ error: { type: 'not_found_error' } });

  const done = await ended(created.id);
  expect(done.request_counts).toEqual({ processing: 0, succeeded: 3, errored: 0, canceled: 0, expired: 0 });
  expect(done.results_url).toBe(`${stub.url}/v1/messages/batches/${created.id}/results`);
  expect(Date.parse(done.ended_at!) - createdAt).toBeGreaterThanOrEqual(500 - 5);

  const results = await resultsOf(created.id);
  expect(results.map((r) => r.custom_id)).toEqual(['req-c', 'req-b', 'req-a']);
  for (const r of results) {
    if (r.result.type !== 'succeeded') throw new Error(`${r.custom_id}: ${r.result.type}`);
    const question = r.custom_id.slice('req-'.length);
    const { id: _id, ...expected } = await interactive(params(question));
    const { id: _batchId, ...message } = r.result.message;
    expect(message).toEqual(expected);
    expect(message.content).toMatchObject([{ type: 'tool_use', input: { message: question } }]);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
  }
  const [log] = stub.messageBatches.batches;
  expect(log).toMatchObject({
    id: created.id,
    status: 'ended',
    canceled: false,
    createResponded: true,
    resultsFetched: 1,
  });
  expect(log!.requests).toEqual(
    ['a', 'b', 'c'].map((q) => ({
      customId: `req-${q}`,
      scenario: 'echo',
      kind: 'step',
      step: 0,
      question: q,
      outcome: 'succeeded',
      usage: expect.objectContaining({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) }),
    })),
  );
  expect(stub.messageBatches.createsReceived).toBe(1);
  expect(stub.messageBatches.submissions('req-a')).toBe(1);
});

it('lists batches newest first, page by page', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(
      (await client.messages.batches.create({ requests: [{ custom_id: `list-${i}`, params: params('q') }] }))
        .id,
    );
  }
  const newest = [...ids].reverse();
  const first = await client.messages.batches.list({ limit: 2 });
  expect(first.data.map((b) => b.id)).toEqual(newest.slice(0, 2));
  expect(first).toMatchObject({ has_more: true, first_id: newest[0], last_id: newest[1] });

  const seen: string[] = [];
  for await (const b of client.messages.batches.list({ limit: 2 })) seen.push(b.id);
  // Earlier tests' batches come after these five.
  expect(seen.slice(0, 5)).toEqual(newest);
  expect(new Set(seen).size).toBe(seen.length);

  const newer = await client.messages.batches.list({ limit: 2, before_id: newest[3] });
  expect(newer.data.map((b) => b.id)).toEqual(newest.slice(1, 3));
  expect(newer.has_more).toBe(true);
  await expect(client.messages.batches.list({ limit: 1001 })).rejects.toBeInstanceOf(
    Anthropic.BadRequestError,
  );

  for (const id of ids) await ended(id);
  await expect(client.messages.batches.delete(ids[0]!)).resolves.toEqual({
    id: ids[0],
    type: 'message_batch_deleted',
  });
  await expect(client.messages.batches.retrieve(ids[0]!)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
});

it('cancels a batch before it is processed: every request canceled, and a resubmission is no duplicate', async () => {
  stub.messageBatches.settings.processingMs = 5000;
  const requests = [{ custom_id: 'turn-1-step-0', params: params('c') }];
  const created = await client.messages.batches.create({ requests });
  await expect(client.messages.batches.delete(created.id)).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  const canceling = await client.messages.batches.cancel(created.id);
  expect(canceling.processing_status).toBe('canceling');
  expect(canceling.cancel_initiated_at).not.toBeNull();
  const done = await ended(created.id);
  expect(done.request_counts).toEqual({ processing: 0, succeeded: 0, errored: 0, canceled: 1, expired: 0 });
  expect(await resultsOf(created.id)).toEqual([{ custom_id: 'turn-1-step-0', result: { type: 'canceled' } }]);
  // Cancelling an ended batch leaves it as it is.
  expect(await client.messages.batches.cancel(created.id)).toEqual(
    await client.messages.batches.retrieve(created.id),
  );

  stub.messageBatches.settings.processingMs = PROCESSING_MS;
  const again = await client.messages.batches.create({ requests });
  expect((await resultsOf((await ended(again.id)).id))[0]!.result.type).toBe('succeeded');
  expect(stub.messageBatches.submissions('turn-1-step-0')).toBe(2);
  expect(stub.messageBatches.duplicateSubmissions()).toEqual([]);
  expect(stub.messageBatches.batches.map((b) => b.canceled)).toEqual([true, false]);

  const third = await client.messages.batches.create({ requests });
  expect(stub.messageBatches.duplicateSubmissions()).toEqual([
    { customId: 'turn-1-step-0', batches: [again.id, third.id] },
  ]);
});

it('refuses what the API refuses, naming the request', async () => {
  const refused = async (requests: unknown, message: string | RegExp) => {
    const err = await client.messages.batches
      .create({ requests } as Anthropic.Messages.BatchCreateParams)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (err as InstanceType<typeof Anthropic.APIError>).error as {
      error: { type: string; message: string };
    };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(message);
  };
  await refused([], /requests: List should have at least 1 item/);
  await refused(undefined, /requests: Field required/);
  await refused(
    [
      { custom_id: 'ok', params: params('q') },
      { custom_id: 'not ok!', params: params('q') },
    ],
    /requests\.1\.custom_id: .*"not ok!"/,
  );
  await refused([{ custom_id: 'x'.repeat(65), params: params('q') }], /requests\.0\.custom_id/);
  await refused(
    [
      { custom_id: 'same', params: params('q') },
      { custom_id: 'other', params: params('q') },
      { custom_id: 'same', params: params('r') },
    ],
    /requests\.2\.custom_id: Duplicate custom_id "same" \(also requests\.0\.custom_id\)/,
  );
  await refused(
    [{ custom_id: 'streamed', params: { ...params('q'), stream: true } }],
    /requests\.0\.params\.stream: Streaming is not supported/,
  );
  await refused(
    [{ custom_id: 'noparams', params: 'x' }],
    /requests\.0\.params: Input should be a valid dictionary/,
  );
  expect(stub.messageBatches.batches).toEqual([]);
  expect(stub.messageBatches.createsReceived).toBe(7);
  await expect(client.messages.batches.retrieve('msgbatch_unknown')).rejects.toBeInstanceOf(
    Anthropic.NotFoundError,
  );
});

it('ends a request the API would refuse errored, and answers the others', async () => {
  const created = await client.messages.batches.create({
    requests: [
      { custom_id: 'good', params: params('q') },
      { custom_id: 'bad', params: { ...params('q'), messages: [{ role: 'assistant', content: 'hi' }] } },
      { custom_id: 'lost', params: params('q', 'no-such-scenario') },
    ],
  });
  expect((await ended(created.id)).request_counts).toMatchObject({ succeeded: 1, errored: 2 });
  const byId = Object.fromEntries((await resultsOf(created.id)).map((r) => [r.custom_id, r.result]));
  expect(byId.good!.type).toBe('succeeded');
  expect(byId.bad).toEqual({
    type: 'errored',
    error: {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'messages.0.role: the first message must use the "user" role',
      },
      request_id: null,
    },
  });
  expect(byId.lost).toMatchObject({
    type: 'errored',
    error: { error: { type: 'invalid_request_error', message: expect.stringContaining('no-such-scenario') } },
  });
  expect(stub.messageBatches.batches[0]!.requests.map((r) => r.outcome)).toEqual([
    'succeeded',
    'errored',
    'errored',
  ]);
});

it("applies the scenario's faults per request: errored with the status's type, or expired", async () => {
  const first = await client.messages.batches.create({
    requests: [
      { custom_id: 'try-1', params: params('q', 'overloaded') },
      { custom_id: 'exp-1', params: params('q', 'expiring') },
    ],
  });
  expect((await ended(first.id)).request_counts).toEqual({
    processing: 0,
    succeeded: 0,
    errored: 1,
    canceled: 0,
    expired: 1,
  });
  const results = Object.fromEntries((await resultsOf(first.id)).map((r) => [r.custom_id, r.result]));
  expect(results['try-1']).toMatchObject({
    type: 'errored',
    error: { error: { type: 'overloaded_error', message: 'Overloaded' } },
  });
  expect(results['exp-1']).toEqual({ type: 'expired' });

  // The faults are used up, as they would be by /v1/messages.
  const second = await client.messages.batches.create({
    requests: [
      { custom_id: 'try-2', params: params('q', 'overloaded') },
      { custom_id: 'exp-2', params: params('q', 'expiring') },
    ],
  });
  expect((await ended(second.id)).request_counts.succeeded).toBe(2);
  expect((await resultsOf(second.id)).map((r) => r.result.type)).toEqual(['succeeded', 'succeeded']);

  // /v1/messages and batches share the fault counters; an `expired` fault is its status to /v1/messages.
  askedDirectly = 2;
  await expect(client.messages.create(params('r', 'expiring'))).rejects.toBeInstanceOf(
    Anthropic.InternalServerError,
  );
  const third = await client.messages.batches.create({
    requests: [
      { custom_id: 'try-3', params: params('r', 'overloaded') },
      { custom_id: 'exp-3', params: params('r', 'expiring') },
    ],
  });
  const thirdResults = Object.fromEntries(
    (await resultsOf((await ended(third.id)).id)).map((r) => [r.custom_id, r.result.type]),
  );
  expect(thirdResults).toEqual({ 'try-3': 'errored', 'exp-3': 'succeeded' });
  await expect(client.messages.create(params('r', 'overloaded'))).resolves.toMatchObject({
    content: [{ type: 'text', text: 'fine' }],
  });
});

it('holds the create response for createDelayMs; the batch exists meanwhile', async () => {
  stub.messageBatches.settings.createDelayMs = 400;
  const creating = client.messages.batches.create({ requests: [{ custom_id: 'slow', params: params('q') }] });
  while (stub.messageBatches.createsReceived === 0) await sleep(5);
  const [log] = stub.messageBatches.batches;
  expect(log).toMatchObject({ status: 'in_progress', createResponded: false });
  const listed = await client.messages.batches.list({ limit: 1 });
  expect(listed.data.map((b) => b.id)).toEqual([log!.id]);
  const created = await creating;
  expect(created.id).toBe(log!.id);
  expect(created.created_at).toBe(new Date(log!.createdAt).toISOString());
  expect(log!.createResponded).toBe(true);

  // A client that goes away during the delay gets no response; the batch goes on.
  const abort = new AbortController();
  const gone = client.messages.batches.create(
    { requests: [{ custom_id: 'gone', params: params('q') }] },
    { signal: abort.signal },
  );
  while (stub.messageBatches.createsReceived < 2) await sleep(5);
  abort.abort();
  await expect(gone).rejects.toThrow();
  await sleep(500);
  expect(stub.messageBatches.batches[1]).toMatchObject({ createResponded: false, status: 'ended' });
});
