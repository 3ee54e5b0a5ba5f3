#!/usr/bin/env node
// A real stdio MCP server (the SDK's low-level Server, so the schemas go out exactly as written)
// whose tools publish input schemas as servers in the wild do: a top-level allOf (the shape of the
// conformance suite's JSON Schema 2020-12 tool), a top-level anyOf without a root type (what a zod
// union serialises to), a top-level oneOf with a discriminator, one that is no object schema at
// all, and a plain one. Every tool answers with its name and the arguments it received; `refuse`
// answers JSON-RPC invalid params and `broken` an internal error, on every call.
// $MCP_FIXTURE_ERA=modern serves the 2026-07-28 era, otherwise the legacy era (serve-fixture.js).
const { rpcError, serveRawTools } = require('./serve-fixture');

const tools = [
  {
    name: 'create_event',
    description: 'Creates a calendar event',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { when: { type: 'string', format: 'date' } },
      properties: { title: { type: 'string', minLength: 1 } },
      allOf: [
        { required: ['title'] },
        { properties: { date: { $ref: '#/$defs/when' }, attendees: { type: 'array', items: { type: 'string' } } }, required: ['date'] },
      ],
    },
  },
  {
    name: 'find_project',
    description: 'Finds a project by id or by path',
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      anyOf: [
        { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'], additionalProperties: false },
        { type: 'object', properties: { full_path: { type: 'string' } }, required: ['full_path'], additionalProperties: false },
      ],
    },
  },
  {
    name: 'draw',
    description: 'Draws a shape',
    inputSchema: {
      type: 'object',
      properties: { color: { type: 'string' } },
      required: ['color'],
      oneOf: [
        { title: 'circle', properties: { shape: { const: 'circle' }, radius: { type: 'number', exclusiveMinimum: 0 } }, required: ['shape', 'radius'] },
        { title: 'square', properties: { shape: { const: 'square' }, side: { type: 'number', exclusiveMinimum: 0 } }, required: ['shape', 'side'] },
      ],
    },
  },
  { name: 'shout', description: 'Takes a bare string, which no tool call can be', inputSchema: { type: 'string' } },
  { name: 'echo', description: 'Echoes a message', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
  { name: 'refuse', description: 'Refuses every call (JSON-RPC invalid params)', inputSchema: { type: 'object' } },
  { name: 'broken', description: 'Fails every call (JSON-RPC internal error)', inputSchema: { type: 'object' } },
];

serveRawTools({ name: 'schemas', version: '1.0.0' }, tools, (name, args) => {
  if (name === 'refuse') throw rpcError('InvalidParams', 'refused: these arguments can never work');
  if (name === 'broken') throw rpcError('InternalError', 'internal trouble');
  if (!tools.some((t) => t.name === name)) throw rpcError('InvalidParams', `Tool ${name} not found`);
  return { content: [{ type: 'text', text: `${name} ran with ${JSON.stringify(args)}` }] };
});
