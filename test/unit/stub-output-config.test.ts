/**
 * The stub refuses `output_config` as the Messages API does: effort levels and the models that take
 * them, the `format` shape and the models with structured outputs, the JSON Schema rules of
 * structured outputs, and what cannot go with a format (citations, a prefill). A schema the SDK's
 * `transformJSONSchema` made is accepted, over HTTP with the SDK's own helper too.
 */
import Anthropic from '@anthropic-ai/sdk';
import { jsonSchemaOutputFormat } from '@anthropic-ai/sdk/helpers/json-schema';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import { startStubModel } from '../../src/stub';
import { validateRequest } from '../../src/stub/validate-request';

type Schema = Record<string, unknown>;

const closed = (properties: Record<string, unknown>, extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});
const answerSchema = closed({ answer: { type: 'string' } });

const request = (outputConfig: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'claude-opus-4-8',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'q' }],
  output_config: outputConfig,
  ...extra,
});
const withSchema = (schema: unknown, extra: Record<string, unknown> = {}) => validateRequest(request({ format: { type: 'json_schema', schema } }, extra));

describe('output_config', () => {
  it('takes effort, format, both, neither, and nulls', () => {
    for (const config of [{}, { effort: 'high' }, { format: { type: 'json_schema', schema: answerSchema } }, { effort: 'max', format: null }, { effort: null }, null]) {
      expect(validateRequest(request(config))).toBeUndefined();
    }
  });

  it('refuses another key, and a config that is not an object', () => {
    expect(validateRequest(request({ effort: 'low', verbosity: 'low' }))).toBe('output_config.verbosity: Extra inputs are not permitted');
    expect(validateRequest(request('high'))).toBe('output_config: Input should be a valid dictionary');
  });

  it('refuses an effort that is not a level, or that the model does not take (a model not known takes any)', () => {
    expect(validateRequest(request({ effort: 'extreme' }))).toBe("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh', 'max'");
    expect(validateRequest(request({ effort: 'xhigh' }, { model: 'claude-haiku-5' }))).toBe(
      'output_config.effort: claude-haiku-5 does not take effort "xhigh": use one of low, medium, high',
    );
    expect(validateRequest(request({ effort: 'low' }, { model: 'claude-sonnet-4-5' }))).toMatch(/^output_config\.effort: claude-sonnet-4-5 takes no effort setting/);
    expect(validateRequest(request({ effort: 'xhigh' }, { model: 'my-scenario' }))).toBeUndefined();
  });

  it('takes a format only as { type: "json_schema", schema }', () => {
    expect(validateRequest(request({ format: { type: 'json_schema', schema: answerSchema, name: 'answer' } }))).toBe(
      'output_config.format.name: Extra inputs are not permitted',
    );
    expect(validateRequest(request({ format: { type: 'json_object', schema: answerSchema } }))).toBe("output_config.format.type: Input should be 'json_schema'");
    expect(validateRequest(request({ format: { type: 'json_schema' } }))).toBe('output_config.format.schema: Field required');
    expect(validateRequest(request({ format: { type: 'json_schema', schema: 'x' } }))).toBe('output_config.format.schema: Input should be a valid dictionary');
    expect(validateRequest(request({ format: 'json' }))).toBe('output_config.format: Input should be a valid dictionary');
  });

  it('refuses a format for a model without structured outputs; a model not known is accepted', () => {
    const format = { type: 'json_schema', schema: answerSchema };
    expect(validateRequest(request({ format }, { model: 'claude-sonnet-4-0' }))).toBe('output_config.format: claude-sonnet-4-0 does not support structured outputs');
    expect(validateRequest(request({ format }, { model: 'claude-3-5-haiku-latest' }))).toMatch(/does not support structured outputs/);
    expect(validateRequest(request({ format }, { model: 'my-scenario' }))).toBeUndefined();
  });
});

describe('the schema rules of structured outputs', () => {
  it('takes the supported keywords, formats and minItems, nested, in $defs and through $ref', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Report',
      description: 'a report',
      type: 'object',
      properties: {
        when: { type: 'string', format: 'date-time', default: '1970-01-01T00:00:00Z' },
        kind: { enum: ['a', 'b'] },
        fixed: { const: 1 },
        tags: { type: 'array', items: { type: 'string', format: 'uuid' }, minItems: 1 },
        maybe: { anyOf: [{ type: 'string', format: 'email' }, { type: 'null' }] },
        both: { allOf: [{ $ref: '#/$defs/point' }] },
        old: { $ref: '#/definitions/legacy' },
        where: { $ref: '#/$defs/point' },
      },
      required: ['when', 'kind'],
      additionalProperties: false,
      $defs: { point: closed({ x: { type: 'number' }, y: { type: 'integer' } }) },
      definitions: { legacy: closed({ name: { type: 'string' } }) },
    };
    expect(withSchema(schema)).toBeUndefined();
  });

  it('refuses an object schema, at any depth, without additionalProperties: false', () => {
    const message = (at: string) => `output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false (at ${at})`;
    expect(withSchema({ type: 'object', properties: { a: { type: 'string' } } })).toBe(message('#'));
    expect(withSchema({ ...answerSchema, additionalProperties: true })).toBe(message('#'));
    expect(withSchema(closed({ address: { type: 'object', properties: { city: { type: 'string' } } } }))).toBe(message('#/properties/address'));
    expect(withSchema(closed({ list: { type: 'array', items: { type: 'object', properties: {} } } }))).toBe(message('#/properties/list/items'));
    expect(withSchema(closed({ one: { anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: {} }] } }))).toBe(message('#/properties/one/anyOf/1'));
    expect(withSchema(closed({}, { $defs: { 'a/b': { properties: {} } } }))).toBe(message('#/$defs/a~1b'));
  });

  it.each([
    ['minimum', { type: 'integer', minimum: 0 }],
    ['maximum', { type: 'number', maximum: 9 }],
    ['pattern', { type: 'string', pattern: '^a' }],
    ['minLength', { type: 'string', minLength: 1 }],
    ['maxLength', { type: 'string', maxLength: 9 }],
    ['maxItems', { type: 'array', maxItems: 3 }],
    ['oneOf', { oneOf: [{ type: 'string' }, { type: 'null' }] }],
    ['not', { not: { type: 'string' } }],
    ['if', { if: { type: 'string' }, then: { type: 'string' } }],
    ['patternProperties', { type: 'object', additionalProperties: false, patternProperties: { '^x': { type: 'string' } } }],
    ['uniqueItems', { type: 'array', uniqueItems: true }],
  ])('refuses %s, naming it and where it is', (keyword, field) => {
    expect(withSchema(closed({ field }))).toBe(`output_config.format.schema: '${keyword}' is not supported in structured outputs (at #/properties/field)`);
  });

  it('refuses a format it does not take, and minItems other than 0 or 1', () => {
    expect(withSchema(closed({ re: { type: 'string', format: 'regex' } }))).toBe(
      "output_config.format.schema: format 'regex' is not supported; use one of date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid (at #/properties/re)",
    );
    expect(withSchema(closed({ list: { type: 'array', items: { type: 'string' }, minItems: 2 } }))).toBe(
      'output_config.format.schema: minItems 2 is not supported, only 0 or 1 (at #/properties/list)',
    );
  });

  it('refuses a $ref outside the schema, or to nothing', () => {
    expect(withSchema(closed({ a: { $ref: 'https://example.com/s.json' } }))).toMatch(/\$ref 'https:\/\/example\.com\/s\.json' does not point to a schema in this document.*\(at #\/properties\/a\)$/);
    expect(withSchema(closed({ a: { $ref: '#/$defs/missing' } }))).toMatch(/\$ref '#\/\$defs\/missing' does not point to a schema/);
  });

  it('refuses recursive schemas: to itself, to an ancestor, through other $refs', () => {
    const recursive = /^output_config\.format\.schema: recursive schemas are not supported \(\$ref '.*' at #.*\)$/;
    expect(withSchema(closed({ self: { $ref: '#' } }))).toMatch(recursive);
    const tree = { $defs: { node: closed({ children: { type: 'array', items: { $ref: '#/$defs/node' } } }) }, $ref: '#/$defs/node' };
    expect(withSchema(tree)).toBe("output_config.format.schema: recursive schemas are not supported ($ref '#/$defs/node' at #/$defs/node/properties/children/items)");
    const mutual = closed({ a: { $ref: '#/$defs/a' } }, { $defs: { a: closed({ b: { $ref: '#/$defs/b' } }), b: closed({ a: { $ref: '#/$defs/a' } }) } });
    expect(withSchema(mutual)).toMatch(recursive);
    // The same definition used twice, side by side, is not recursion.
    expect(withSchema(closed({ from: { $ref: '#/$defs/p' }, to: { $ref: '#/$defs/p' } }, { $defs: { p: closed({ x: { type: 'number' } }) } }))).toBeUndefined();
  });

  it('refuses a schema too complex: more than 24 levels, 1000 properties or 5000 characters of enum values', () => {
    const nested = (levels: number): Schema => (levels === 0 ? { type: 'string' } : closed({ down: nested(levels - 1) }));
    expect(withSchema(nested(24))).toBeUndefined();
    expect(withSchema(nested(25))).toBe('output_config.format.schema: schema is too complex (more than 24 levels of nesting)');
    // A definition counts where a $ref uses it: unused, its 13 levels are its own; used 12 levels deep, they add up.
    expect(withSchema({ ...nested(12), $defs: { deep: nested(13) } })).toBeUndefined();
    const viaRef = (levels: number): Schema => (levels === 0 ? { $ref: '#/$defs/deep' } : closed({ down: viaRef(levels - 1) }));
    expect(withSchema({ ...viaRef(12), $defs: { deep: nested(12) } })).toBeUndefined();
    expect(withSchema({ ...viaRef(12), $defs: { deep: nested(13) } })).toBe('output_config.format.schema: schema is too complex (more than 24 levels of nesting)');

    const many = (count: number): Schema => closed(Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'boolean' }])));
    expect(withSchema(many(1000))).toBeUndefined();
    expect(withSchema(many(1001))).toBe('output_config.format.schema: schema is too complex (1001 properties in total; at most 1000)');

    const values = (chars: number): string[] => Array.from({ length: chars / 10 }, (_, i) => `v${String(i).padStart(9, '0')}`);
    expect(withSchema(closed({ e: { enum: values(5000) } }))).toBeUndefined();
    expect(withSchema(closed({ e: { enum: values(2500) }, f: { enum: [...values(2500), 'x'] } }))).toBe(
      'output_config.format.schema: schema is too complex (5001 characters of enum values in total; at most 5000)',
    );
  });

  it('refuses a schema that is not valid JSON Schema 2020-12', () => {
    expect(withSchema({ ...answerSchema, required: 'answer' })).toMatch(/^output_config\.format\.schema: JSON schema is invalid/);
  });
});

describe("the SDK's transformJSONSchema", () => {
  /** What a caller writes: constraints structured outputs do not take, objects left open. */
  const original = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 80, pattern: '^[A-Z]' },
      age: { type: 'integer', minimum: 0, maximum: 150 },
      born: { type: 'string', format: 'date' },
      site: { type: 'string', format: 'hostname-ish' },
      tags: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 5, uniqueItems: true },
      address: {
        type: 'object',
        properties: { city: { type: 'string' }, geo: { type: 'object', properties: { lat: { type: 'number', exclusiveMinimum: -90 } } } },
        required: ['city'],
      },
      pets: { type: 'array', items: { type: 'object', properties: { kind: { enum: ['cat', 'dog'] } } } },
      contact: { oneOf: [{ type: 'string', format: 'email' }, { type: 'object', properties: { phone: { type: 'string' } } }] },
      place: { $ref: '#/$defs/place' },
    },
    required: ['name', 'age'],
    $defs: { place: { type: 'object', properties: { label: { type: 'string', default: '-' } }, patternProperties: { '^x-': {} } } },
  };

  it('turns a schema the stub refuses into one it accepts', () => {
    expect(withSchema(original)).toMatch(/^output_config\.format\.schema: /);
    const transformed = transformJSONSchema(original);
    expect(withSchema(transformed)).toBeUndefined();
  });

  it('is accepted over HTTP through messages.parse with jsonSchemaOutputFormat, and answered with a minimal instance', async () => {
    const stub = await startStubModel({ scenarios: { any: { steps: [{ content: [{ type: 'text', text: 'unused' }] }] } }, defaultScenario: 'any' });
    try {
      const client = new Anthropic({ apiKey: 'x', baseURL: stub.url, maxRetries: 0 });
      const parsed = await client.messages.parse({
        model: 'claude-opus-4-8',
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'Who?' }],
        output_config: { format: jsonSchemaOutputFormat(original as never) },
      });
      expect(parsed.parsed_output).toEqual({ name: '', age: 0 });
      const sent = stub.requests[0]!.body as { output_config: { format: { schema: Schema } } };
      expect(sent.output_config.format.schema).toEqual(transformJSONSchema(original));
      // The untransformed schema is refused by name.
      const err = await client.messages
        .create({ model: 'claude-opus-4-8', max_tokens: 1000, messages: [{ role: 'user', content: 'Who?' }], output_config: { format: { type: 'json_schema', schema: original } } })
        .catch((e: unknown) => e as InstanceType<typeof Anthropic.APIError>);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect((err as InstanceType<typeof Anthropic.APIError>).message).toMatch(/output_config\.format\.schema: /);
    } finally {
      await stub.close();
    }
  });
});

describe('what cannot go with a format', () => {
  const format = { type: 'json_schema', schema: answerSchema };
  const document = (citations: unknown) => ({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A says hi' }, citations });

  it('refuses citations: a document in a message or a tool result, or a web fetch tool, with citations enabled', () => {
    const citing = { enabled: true };
    expect(validateRequest(request({ format }, { messages: [{ role: 'user', content: [document(citing), { type: 'text', text: 'q' }] }] }))).toBe(
      'messages.0.content.0.citations: Citations are not supported together with structured outputs (output_config.format)',
    );
    const withResult = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'docs__read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [document(citing)] }] },
    ];
    const tools = [{ name: 'docs__read', input_schema: { type: 'object' } }];
    expect(validateRequest(request({ format }, { tools, messages: withResult, tool_choice: { type: 'none' } }))).toBe(
      'messages.2.content.0.content.0.citations: Citations are not supported together with structured outputs (output_config.format)',
    );
    expect(validateRequest(request({ format }, { tools: [{ type: 'web_fetch_20250910', name: 'web_fetch', citations: citing }] }))).toBe(
      'tools.0.web_fetch_20250910.citations: Citations are not supported together with structured outputs (output_config.format)',
    );
    // Citations off, or no format: accepted.
    expect(validateRequest(request({ format }, { messages: [{ role: 'user', content: [document({ enabled: false }), { type: 'text', text: 'q' }] }] }))).toBeUndefined();
    expect(validateRequest(request({ format }, { tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }] }))).toBeUndefined();
    expect(validateRequest(request({ effort: 'low' }, { messages: [{ role: 'user', content: [document(citing), { type: 'text', text: 'q' }] }] }))).toBeUndefined();
  });

  it('refuses a prefill', () => {
    const prefilled = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '{"answer": "' },
    ];
    expect(validateRequest(request({ format }, { messages: prefilled }))).toBe(
      'messages.1: a prefill (a final assistant message) is not supported together with structured outputs (output_config.format)',
    );
    expect(validateRequest(request({}, { messages: prefilled }))).toBeUndefined();
  });
});
