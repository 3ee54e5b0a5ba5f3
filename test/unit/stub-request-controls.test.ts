/**
 * The stub refuses a request's controls as the Messages API (version 2026-10-21) does: the legacy
 * sampling fields, `tool_choice`, `stop_sequences`, `metadata`, and tool blocks without tools. Most
 * checks go through validateRequest; the SDK's view (400 invalid_request_error) over HTTP.
 */
import Anthropic from '@anthropic-ai/sdk';
import { startStubModel, type StubModel } from '../../src/stub';
import { validateRequest } from '../../src/stub/validate-request';

const echo = { name: 'everything__echo', input_schema: { type: 'object', properties: { message: { type: 'string' } } } };
const base = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'plain',
  max_tokens: 100,
  tools: [echo],
  messages: [{ role: 'user', content: 'q' }],
  ...extra,
});

describe('legacy sampling', () => {
  it.each(['temperature', 'top_p', 'top_k'])('refuses %s with any value, null too', (field) => {
    for (const value of [0, 0.7, 1, null]) {
      expect(validateRequest(base({ [field]: value }))).toBe(`${field}: this field is not supported in API version 2026-10-21`);
    }
  });

  it('answers the SDK with a 400 invalid_request_error naming the field', async () => {
    const stub = await startStubModel({ scenarios: { plain: { steps: [{ content: [{ type: 'text', text: 'fine' }] }] } } });
    try {
      const client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
      const err = (await client.messages
        .create({ ...base(), temperature: 0.2 } as unknown as Anthropic.MessageCreateParamsNonStreaming)
        .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error).toMatchObject({ error: { type: 'invalid_request_error', message: 'temperature: this field is not supported in API version 2026-10-21' } });
      await expect(client.messages.create(base() as unknown as Anthropic.MessageCreateParamsNonStreaming)).resolves.toMatchObject({ content: [{ text: 'fine' }] });
    } finally {
      await stub.close();
    }
  });
});

describe('tool_choice', () => {
  it('takes auto, any, tool and none, with disable_parallel_tool_use on all but none', () => {
    for (const choice of [
      { type: 'auto' },
      { type: 'auto', disable_parallel_tool_use: true },
      { type: 'any', disable_parallel_tool_use: false },
      { type: 'tool', name: 'everything__echo', disable_parallel_tool_use: true },
      { type: 'none' },
    ]) {
      expect(validateRequest(base({ tool_choice: choice }))).toBeUndefined();
    }
  });

  it('refuses an unknown type, a field the type does not take, and a non-boolean disable_parallel_tool_use', () => {
    expect(validateRequest(base({ tool_choice: { type: 'required' } }))).toBe(
      "tool_choice: Input tag 'required' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'",
    );
    expect(validateRequest(base({ tool_choice: { type: 'none', disable_parallel_tool_use: true } }))).toBe(
      'tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted',
    );
    expect(validateRequest(base({ tool_choice: { type: 'auto', name: 'everything__echo' } }))).toBe('tool_choice.auto.name: Extra inputs are not permitted');
    expect(validateRequest(base({ tool_choice: { type: 'any', disable_parallel_tool_use: 'yes' } }))).toBe(
      'tool_choice.any.disable_parallel_tool_use: Input should be a valid boolean',
    );
    expect(validateRequest(base({ tool_choice: { type: 'tool', name: 'absent' } }))).toBe("tool_choice.name: Tool 'absent' not found in the provided tools");
  });

  it('refuses any and tool without tools', () => {
    for (const choice of [{ type: 'any' }, { type: 'tool', name: 'everything__echo' }]) {
      expect(validateRequest(base({ tools: undefined, tool_choice: choice }))).toBe(
        `tool_choice: tool_choice of type '${choice.type}' forces a tool call, which requires \`tools\` to be defined`,
      );
      expect(validateRequest(base({ tools: [], tool_choice: choice }))).toMatch(/requires `tools` to be defined/);
    }
    expect(validateRequest(base({ tools: [], tool_choice: { type: 'auto' } }))).toBeUndefined();
  });

  it('refuses a forced tool while thinking is on, enabled or adaptive', () => {
    for (const thinking of [{ type: 'enabled', budget_tokens: 1024 }, { type: 'adaptive' }]) {
      for (const choice of [{ type: 'any' }, { type: 'tool', name: 'everything__echo' }]) {
        expect(validateRequest(base({ thinking, tool_choice: choice }))).toBe('Thinking may not be enabled when tool_choice forces tool use.');
      }
      expect(validateRequest(base({ thinking, tool_choice: { type: 'auto' } }))).toBeUndefined();
      expect(validateRequest(base({ thinking, tool_choice: { type: 'none' } }))).toBeUndefined();
    }
    expect(validateRequest(base({ thinking: { type: 'disabled' }, tool_choice: { type: 'any' } }))).toBeUndefined();
  });
});

describe('tool blocks need tools', () => {
  const history = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'everything__echo', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Echo' }] },
  ];

  it('refuses tool_use or tool_result blocks without tools, or with an empty list', () => {
    for (const tools of [undefined, []]) {
      expect(validateRequest(base({ tools, messages: history }))).toBe(
        'messages.1.content.0: Requests which include `tool_use` or `tool_result` blocks must define tools.',
      );
    }
  });

  it('takes them with the tools defined, tool_choice none too', () => {
    expect(validateRequest(base({ messages: history }))).toBeUndefined();
    expect(validateRequest(base({ messages: history, tool_choice: { type: 'none' } }))).toBeUndefined();
  });
});

describe('stop_sequences', () => {
  it('takes a list of strings with something besides whitespace', () => {
    expect(validateRequest(base({ stop_sequences: ['END', ' ## ', '\n\nHuman:'] }))).toBeUndefined();
    expect(validateRequest(base({ stop_sequences: [] }))).toBeUndefined();
  });

  it('refuses anything else, naming the entry', () => {
    expect(validateRequest(base({ stop_sequences: 'END' }))).toBe('stop_sequences: Input should be a valid list');
    expect(validateRequest(base({ stop_sequences: ['END', 3] }))).toBe('stop_sequences.1: Input should be a valid string');
    for (const blank of ['', ' ', '\n\t']) {
      expect(validateRequest(base({ stop_sequences: ['END', blank] }))).toBe('stop_sequences.1: each stop sequence must contain non-whitespace characters');
    }
  });
});

describe('metadata', () => {
  it('takes user_id: a string of at most 256 characters, or null', () => {
    for (const metadata of [{}, { user_id: 'u-1' }, { user_id: 'x'.repeat(256) }, { user_id: null }]) {
      expect(validateRequest(base({ metadata }))).toBeUndefined();
    }
  });

  it('refuses another key, a longer or non-string user_id, and a metadata that is not an object', () => {
    expect(validateRequest(base({ metadata: { user_id: 'u', session: 's' } }))).toBe('metadata.session: Extra inputs are not permitted');
    expect(validateRequest(base({ metadata: { user_id: 'x'.repeat(257) } }))).toBe('metadata.user_id: String should have at most 256 characters');
    expect(validateRequest(base({ metadata: { user_id: 42 } }))).toBe('metadata.user_id: Input should be a valid string');
    expect(validateRequest(base({ metadata: 'u' }))).toBe('metadata: Input should be a valid dictionary');
    expect(validateRequest(base({ metadata: null }))).toBe('metadata: Input should be a valid dictionary');
  });
});

describe('over HTTP', () => {
  let stub: StubModel;
  let client: Anthropic;
  beforeAll(async () => {
    stub = await startStubModel({ scenarios: { plain: { steps: [{ content: [{ type: 'text', text: 'fine' }] }] } } });
    client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
  });
  afterAll(() => stub.close());

  it('refuses each with a 400 invalid_request_error, and accepts the valid controls', async () => {
    const refused = async (extra: Record<string, unknown>): Promise<string | undefined> => {
      const err = await client.messages.create(base(extra) as unknown as Anthropic.MessageCreateParamsNonStreaming).then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
      );
      if (!err) return undefined;
      expect(err.status).toBe(400);
      return (err.error as { error: { type: string; message: string } }).error.message;
    };
    expect(await refused({ top_k: 5 })).toBe('top_k: this field is not supported in API version 2026-10-21');
    expect(await refused({ tool_choice: { type: 'any' }, thinking: { type: 'adaptive' } })).toBe('Thinking may not be enabled when tool_choice forces tool use.');
    expect(await refused({ stop_sequences: ['  '] })).toBe('stop_sequences.0: each stop sequence must contain non-whitespace characters');
    expect(await refused({ metadata: { user_id: 'x'.repeat(300) } })).toBe('metadata.user_id: String should have at most 256 characters');
    expect(await refused({ metadata: { user_id: 'u-1' }, stop_sequences: ['END'], tool_choice: { type: 'auto', disable_parallel_tool_use: true } })).toBeUndefined();
  });
});
