/**
 * The stub refuses tool definitions the way the Messages API does, through the real Anthropic SDK:
 * one bad tool fails the whole request with a 400 invalid_request_error naming its index.
 */
import Anthropic from '@anthropic-ai/sdk';
import { startStubModel, type StubModel } from '../../src/stub';

let stub: StubModel;
let client: Anthropic;
const good = { name: 'files__read', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } };

beforeAll(async () => {
  stub = await startStubModel({ scenarios: { plain: { steps: [{ content: [{ type: 'text', text: 'fine' }] }] } } });
  client = new Anthropic({ apiKey: 'test', baseURL: stub.url, maxRetries: 0 });
});
afterAll(() => stub.close());

async function refusal(tools: unknown[]): Promise<{ status?: number; type?: string; message?: string }> {
  const err = await client.messages
    .create({ model: 'plain', max_tokens: 100, tools: tools as Anthropic.Tool[], messages: [{ role: 'user', content: 'q' }] })
    .then(() => undefined, (e: unknown) => e);
  if (!(err instanceof Anthropic.APIError)) throw new Error('the request was accepted');
  const body = err.error as { error?: { type?: string; message?: string } };
  return { status: err.status, type: body.error?.type, message: body.error?.message };
}

it('accepts valid tools', async () => {
  const reply = await client.messages.create({ model: 'plain', max_tokens: 100, tools: [good], messages: [{ role: 'user', content: 'q' }] });
  expect(reply.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['fine']);
});

it.each([
  ['oneOf', { oneOf: [{ type: 'object', properties: { a: {} } }] }],
  ['allOf', { type: 'object', allOf: [{ required: ['a'] }] }],
  ['anyOf', { $schema: 'http://json-schema.org/draft-07/schema#', anyOf: [{ type: 'object' }, { type: 'object' }] }],
])('refuses the whole request when one tool has %s at the top level of its input_schema', async (_kind, schema) => {
  expect(await refusal([good, { name: 'x__union', input_schema: schema }])).toEqual({
    status: 400,
    type: 'invalid_request_error',
    message: 'tools.1.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level',
  });
});

it('refuses a schema that is not an object schema, a missing schema, and an invalid JSON Schema', async () => {
  expect((await refusal([{ name: 'a', input_schema: { type: 'string' } }])).message).toBe("tools.0.custom.input_schema.type: Input should be 'object'");
  expect((await refusal([good, { name: 'a' }])).message).toBe('tools.1.custom.input_schema: Field required');
  expect((await refusal([{ name: 'a', input_schema: { type: 'object', required: 'a' } }])).message).toMatch(
    /^tools\.0\.custom\.input_schema: JSON schema is invalid\. It must match JSON Schema draft 2020-12/,
  );
});

it('refuses a tool name outside ^[a-zA-Z0-9_-]{1,64}$ and a repeated name', async () => {
  expect((await refusal([good, { ...good, name: 'files.read' }])).message).toBe(
    "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
  );
  expect((await refusal([good, { ...good, name: 'x'.repeat(65) }])).message).toMatch(/^tools\.1\.custom\.name: /);
  expect((await refusal([good, good])).message).toBe('tools: Tool names must be unique. Duplicate: files__read');
});
