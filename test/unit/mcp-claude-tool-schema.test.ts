/**
 * Tool input schemas made acceptable to Claude: every form the rewrite produces passes the stub's
 * copy of the API's tool checks, the originals with top-level combinators do not, and arguments
 * valid for the original are described by the rewritten form.
 */
import { claudeInputSchema, type ClaudeInputSchema } from '../../src/mcp/claude-tool-schema';
import { inputSchemaProblem } from '../../src/stub/validate-request';
import { ArgumentValidator } from '../../src/mcp';
import type { JsonSchemaObject } from '../../src/core/contracts';

function offered(original: unknown, hidden: string[] = []): JsonSchemaObject {
  const out: ClaudeInputSchema = claudeInputSchema(original, { hidden });
  if (!out.ok) throw new Error(`not offered: ${out.reason}`);
  expect(inputSchemaProblem(out.schema, 0)).toBeUndefined();
  return out.schema;
}

function refused(original: unknown): string {
  const out = claudeInputSchema(original);
  if (out.ok) throw new Error(`offered: ${JSON.stringify(out.schema)}`);
  return out.reason;
}

const TOP_LEVEL = 'tools.0.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level';

describe('a schema without top-level combinators', () => {
  it('is offered as published, with type pinned to object and nothing else changed', () => {
    const original = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 }, depth: { type: 'integer' } },
      required: ['path'],
      additionalProperties: false,
    };
    expect(offered(original)).toEqual(original);
    expect(offered({ type: ['object', 'null'], properties: { a: {} } })).toEqual({ type: 'object', properties: { a: {} } });
    expect(offered(undefined)).toEqual({ type: 'object' });
  });

  it('loses the injected arguments from properties and required', () => {
    const schema = offered({ type: 'object', properties: { tenant: { type: 'string' }, q: { type: 'string' } }, required: ['tenant', 'q'] }, ['tenant']);
    expect(schema).toEqual({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
  });

  it('that is not an object schema is refused with the reason', () => {
    expect(refused({ type: 'string' })).toBe('its input schema describes "string", not an object');
    expect(refused('nope')).toBe('its input schema is not a JSON object');
  });

  it('that is not valid JSON Schema 2020-12 is refused (the API refuses it too)', () => {
    const invalid = { type: 'object', properties: { a: { type: 'text' } } };
    expect(refused(invalid)).toMatch(/^its input schema is not valid JSON Schema 2020-12 \(schema\/properties\/a\/type must/);
    expect(inputSchemaProblem(invalid, 3)).toMatch(/^tools\.3\.custom\.input_schema: JSON schema is invalid\. It must match JSON Schema draft 2020-12/);
  });
});

describe('top-level allOf', () => {
  // The conformance suite's JSON Schema 2020-12 tool has this shape: a base plus allOf branches.
  const original = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: { address: { type: 'object', properties: { street: { type: 'string' } } } },
    properties: { name: { type: 'string' } },
    allOf: [
      { required: ['name'] },
      { properties: { address: { $ref: '#/$defs/address' }, age: { type: 'integer', minimum: 0 } }, required: ['age'] },
    ],
  };

  it('is refused by the API as published', () => {
    expect(inputSchemaProblem(original, 0)).toBe(TOP_LEVEL);
  });

  it('merges the branches into one object; nested $refs and $defs stay', () => {
    expect(offered(original)).toEqual({
      type: 'object',
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: original.$defs,
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' }, age: { type: 'integer', minimum: 0 } },
      required: ['name', 'age'],
    });
  });

  it('merges a property two branches define differently with allOf below the top level', () => {
    const schema = offered({
      allOf: [
        { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
        { properties: { n: { minimum: 1 } } },
      ],
    });
    expect(schema).toEqual({
      type: 'object',
      properties: { n: { allOf: [{ type: 'integer' }, { minimum: 1 }] } },
      additionalProperties: false,
    });
  });

  it('with a branch no object satisfies is refused', () => {
    expect(refused({ allOf: [{ type: 'object' }, { type: 'string' }] })).toBe(
      'no JSON object satisfies its input schema (tool arguments are an object)',
    );
  });
});

describe('top-level anyOf and oneOf', () => {
  // What a zod union of two objects serialises to: no root type, a root anyOf.
  const zodUnion = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    anyOf: [
      { type: 'object', properties: { id: { type: 'string' }, full_path: { type: 'string' } }, required: ['id'], additionalProperties: false },
      { type: 'object', properties: { full_path: { type: 'string' } }, required: ['full_path'], additionalProperties: false },
    ],
  };

  it('are refused by the API as published', () => {
    expect(inputSchemaProblem(zodUnion, 0)).toBe(TOP_LEVEL);
    expect(inputSchemaProblem({ type: 'object', oneOf: [{ required: ['a'] }] }, 0)).toBe(TOP_LEVEL);
  });

  it('become one object: the union of the properties, required only when every branch requires it, the forms described', () => {
    expect(offered(zodUnion)).toEqual({
      type: 'object',
      $schema: 'http://json-schema.org/draft-07/schema#',
      description:
        'The arguments take one or more of these forms:\n1. id (required), full_path\n2. full_path (required)',
      properties: { id: { type: 'string' }, full_path: { type: 'string' } },
      additionalProperties: false,
    });
  });

  it('keep the schema description, name each form by title, and show discriminating constants as one enum', () => {
    const schema = offered({
      type: 'object',
      description: 'Draws a shape.',
      properties: { color: { type: 'string' } },
      required: ['color'],
      oneOf: [
        { title: 'circle', properties: { kind: { const: 'circle' }, radius: { type: 'number' } }, required: ['kind', 'radius'] },
        { title: 'square', properties: { kind: { const: 'square' }, side: { type: 'number' } }, required: ['kind', 'side'] },
        { type: 'string' },
      ],
    });
    expect(schema).toEqual({
      type: 'object',
      description:
        'Draws a shape.\n\nThe arguments take exactly one of these forms:\n' +
        '1. circle: kind = "circle" (required), radius (required)\n2. square: kind = "square" (required), side (required)',
      properties: { color: { type: 'string' }, kind: { enum: ['circle', 'square'] }, radius: { type: 'number' }, side: { type: 'number' } },
      required: ['color', 'kind'],
    });
  });

  it('offer differently defined properties as anyOf of the definitions', () => {
    const schema = offered({ oneOf: [{ properties: { v: { type: 'string' } } }, { properties: { v: { type: 'number' } } }] });
    expect(schema.properties).toEqual({ v: { anyOf: [{ type: 'string' }, { type: 'number' }] } });
  });

  it('follow $refs to $defs at the top, naming the forms by their definitions', () => {
    const schema = offered({
      $defs: {
        byId: { type: 'object', properties: { id: { type: 'integer' }, tag: { $ref: '#/$defs/tag' } }, required: ['id'] },
        byName: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        tag: { type: 'string' },
      },
      oneOf: [{ $ref: '#/$defs/byId' }, { $ref: '#/$defs/byName' }],
    });
    expect(schema.properties).toEqual({ id: { type: 'integer' }, tag: { $ref: '#/$defs/tag' }, name: { type: 'string' } });
    expect(schema.description).toBe('The arguments take exactly one of these forms:\n1. byId: id (required), tag\n2. byName: name (required)');
    expect(schema.$defs).toBeDefined();
  });

  it('never mention the injected arguments', () => {
    const schema = offered({ anyOf: [{ properties: { tenant: {}, a: {} }, required: ['tenant', 'a'] }, { properties: { tenant: {}, b: {} }, required: ['tenant', 'b'] }] }, ['tenant']);
    expect(JSON.stringify(schema)).not.toContain('tenant');
  });

  it('where no branch is an object are refused', () => {
    expect(refused({ anyOf: [{ type: 'string' }, { type: 'array' }] })).toBe(
      'no JSON object satisfies its input schema (tool arguments are an object)',
    );
  });
});

describe('$ref at the top', () => {
  it('is replaced by the schema it names, the definitions kept', () => {
    const defs = { Args: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } };
    expect(offered({ $ref: '#/$defs/Args', $defs: defs })).toEqual({ type: 'object', $defs: defs, properties: { q: { type: 'string' } }, required: ['q'] });
  });

  it('that refers to itself, or to nothing, is refused', () => {
    expect(refused({ $ref: '#/$defs/A', $defs: { A: { allOf: [{ $ref: '#/$defs/A' }] } } })).toBe(
      'its input schema refers to itself at the top level (#/$defs/A)',
    );
    expect(refused({ $ref: '#/$defs/missing' })).toBe("its input schema's top level refers to #/$defs/missing, which it does not define");
  });

  it('a nested $ref into a rewritten branch is replaced by what it pointed at', () => {
    const schema = offered({
      allOf: [{ type: 'object', properties: { a: { type: 'string' } } }],
      properties: { b: { $ref: '#/allOf/0/properties/a' } },
    });
    expect(schema.properties).toEqual({ b: { type: 'string' }, a: { type: 'string' } });
  });

  it('a recursive definition in $defs is kept as a reference', () => {
    const defs = { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } };
    const schema = offered({ anyOf: [{ properties: { tree: { $ref: '#/$defs/node' } } }, { properties: { id: { type: 'string' } } }], $defs: defs });
    expect(schema.properties).toEqual({ tree: { $ref: '#/$defs/node' }, id: { type: 'string' } });
    expect(schema.$defs).toEqual(defs);
  });
});

it('arguments valid for the original are valid for the form Claude is offered', () => {
  const original = {
    type: 'object',
    properties: { mode: { type: 'string' } },
    oneOf: [
      { properties: { mode: { const: 'a' }, x: { type: 'number' } }, required: ['mode', 'x'] },
      { properties: { mode: { const: 'b' }, y: { type: 'string' } }, required: ['mode', 'y'] },
    ],
  } as unknown as JsonSchemaObject;
  const validator = new ArgumentValidator();
  const schema = offered(original);
  for (const args of [{ mode: 'a', x: 1 }, { mode: 'b', y: 'z' }]) {
    expect(validator.check(original, args)).toEqual({ ok: true });
    expect(validator.check(schema, args)).toEqual({ ok: true });
  }
  // The original still refuses what the merged form cannot express.
  expect(validator.check(original, { mode: 'a', y: 'z' }).ok).toBe(false);
});

it('does not modify the schema it is given', () => {
  const original = { anyOf: [{ properties: { a: {} } }], $defs: { x: { type: 'string' } } };
  const copy = structuredClone(original);
  offered(original, ['a']);
  expect(original).toEqual(copy);
});
