/**
 * `/openapi.json` is built from the routes' zod schemas: the turn bodies document every option of a
 * turn's input (its `output`, the request controls), the legacy sampling fields refused by name do
 * not break it, every `$ref` names a component the document has, and a decision on a waiting call
 * takes an answer to a server's questions.
 */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { buildServeApp } from '../../src/serve/serve-app';

type Schema = { properties?: Record<string, Schema>; $ref?: string } & Record<string, unknown>;
type Doc = { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>; components?: { schemas?: Record<string, unknown> } };

let app: FastifyInstance;
let doc: Doc;
let text: string;

beforeAll(async () => {
  // No request is made: the routes only need a client to answer requests.
  app = await buildServeApp({
    client: {} as Client,
    address: '127.0.0.1:7233',
    namespace: 'default',
    taskQueue: 'q',
    uiUrl: 'http://127.0.0.1:8233',
    settings: resolveServeSettings(undefined, {}, {}),
    version: 'test',
    log: () => {},
  });
  await app.ready();
  doc = app.swagger() as unknown as Doc;
  text = JSON.stringify(doc);
});

afterAll(() => app.close());

const bodyOf = (path: string): Schema => doc.paths[path]!.post!.requestBody!.content['application/json']!.schema;

test("POST /v1/turns documents the turn's output and request controls", () => {
  const props = bodyOf('/v1/turns').properties!;
  expect(Object.keys(props)).toEqual(expect.arrayContaining(['output', 'effort', 'stopSequences', 'toolChoice', 'cache', 'userId']));
  expect(Object.keys(props.output!.properties!)).toEqual(expect.arrayContaining(['schema', 'name', 'description']));
});

test("a message's options (conversations, /api/chat) document them too", () => {
  const message = bodyOf('/v1/conversations/{id}/messages').properties!.options!.properties!;
  const chat = bodyOf('/api/chat').properties!.options!.properties!;
  for (const props of [message, chat]) expect(Object.keys(props)).toEqual(expect.arrayContaining(['output', 'effort', 'userId']));
});

test('every $ref names a component the document has', () => {
  const refs = [...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
  expect(refs.filter((r) => !doc.components?.schemas?.[r.replace('#/components/schemas/', '')] || !r.startsWith('#/components/schemas/'))).toEqual([]);
});

test('the legacy sampling fields are documented as refused, not as taking anything', () => {
  const props = bodyOf('/v1/turns').properties!;
  for (const field of ['temperature', 'top_p', 'top_k', 'topP', 'topK'])
    expect(props[field]).toEqual({ not: {}, deprecated: true, description: expect.stringMatching(/^Refused: the Messages API .* no longer takes temperature/) });
});

test('a decision on a waiting call documents approved, an answer to its questions (input, an object) and reason, none required, and a 400', () => {
  const body = bodyOf('/v1/approvals/{turn}/{call}');
  expect(Object.keys(body.properties!)).toEqual(['approved', 'input', 'reason']);
  expect(body.required ?? []).toEqual([]);
  expect(body.properties!.input).toMatchObject({ type: 'object' });
  const { responses } = doc.paths['/v1/approvals/{turn}/{call}']!.post as unknown as { responses: Record<string, unknown> };
  expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
});
