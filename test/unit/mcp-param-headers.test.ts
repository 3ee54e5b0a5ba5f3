/** The 2026-07-28 rule for a tool's `x-mcp-header` annotations (SEP-2243): which tools a client leaves out. */
import { invalidParamHeaders } from '../../src/mcp/param-headers';

const tool = (
  properties: Record<string, unknown>,
  more: Record<string, unknown> = {},
): Record<string, unknown> => ({
  type: 'object',
  properties,
  ...more,
});

it('accepts tools without annotations, and annotated string, integer and boolean properties at any depth', () => {
  expect(invalidParamHeaders(tool({ q: { type: 'string' } }))).toBeUndefined();
  expect(invalidParamHeaders({ anyOf: [{ type: 'object' }] })).toBeUndefined();
  expect(
    invalidParamHeaders(
      tool({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        priority: { type: 'integer', 'x-mcp-header': 'Priority' },
        options: tool({ verbose: { type: 'boolean', 'x-mcp-header': 'X-Verbose.1' } }),
      }),
    ),
  ).toBeUndefined();
});

it.each([
  ['that is empty', tool({ v: { type: 'string', 'x-mcp-header': '' } })],
  ['that is not a string', tool({ v: { type: 'string', 'x-mcp-header': 7 } })],
  ['with a space', tool({ v: { type: 'string', 'x-mcp-header': 'My Region' } })],
  ['with a colon', tool({ v: { type: 'string', 'x-mcp-header': 'Region:Primary' } })],
  ['with a letter outside ASCII', tool({ v: { type: 'string', 'x-mcp-header': 'Région' } })],
  ['with a control character', tool({ v: { type: 'string', 'x-mcp-header': 'Region\t1' } })],
  ['on an object', tool({ v: { type: 'object', 'x-mcp-header': 'Data' } })],
  ['on an array', tool({ v: { type: 'array', items: { type: 'string' }, 'x-mcp-header': 'Items' } })],
  ['on null', tool({ v: { type: 'null', 'x-mcp-header': 'Nil' } })],
  ['on a number', tool({ v: { type: 'number', 'x-mcp-header': 'Score' } })],
  ['on an untyped property', tool({ v: { 'x-mcp-header': 'Any' } })],
  ['on a nullable type list', tool({ v: { type: ['string', 'null'], 'x-mcp-header': 'Maybe' } })],
  [
    'repeated',
    tool({
      a: { type: 'string', 'x-mcp-header': 'Region' },
      b: { type: 'string', 'x-mcp-header': 'Region' },
    }),
  ],
  [
    'repeated in another case',
    tool({
      a: { type: 'string', 'x-mcp-header': 'MyField' },
      b: { type: 'string', 'x-mcp-header': 'myfield' },
    }),
  ],
  ['on the root', { type: 'object', 'x-mcp-header': 'Root' }],
  ['under items', tool({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } })],
  ['under anyOf', { anyOf: [tool({ v: { type: 'string', 'x-mcp-header': 'V' } })] }],
  ['under $defs', tool({}, { $defs: { id: { type: 'string', 'x-mcp-header': 'Id' } } })],
  [
    'under additionalProperties',
    tool({}, { additionalProperties: { type: 'string', 'x-mcp-header': 'Extra' } }),
  ],
])('refuses an x-mcp-header %s', (_, schema) => {
  expect(invalidParamHeaders(schema)).toMatch(/x-mcp-header/);
});
