/**
 * The JSON body parser of `serve`: Fastify's own (prototype-poisoning keys refused), plus a bound on
 * how deep a body nests. Nothing a route reads nests deeper than {@link MAX_JSON_DEPTH}, and a body
 * that does would reach recursive code (validation, the payload converter) that can run out of stack.
 */
import type { FastifyInstance } from 'fastify';
import { HttpError } from './http-error';

export const MAX_JSON_DEPTH = 100;

/** How deep `value` nests (a scalar is 0, `[]` and `{}` are 1), counted without recursion; stops past `limit`. */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, here]);
  }
  return deepest;
}

/** Replaces the app's `application/json` parser with the bounded one. */
export function useBoundedJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    parse(request, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err, undefined);
      if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return done(new HttpError(400, `the body nests deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      done(null, value);
    }),
  );
}
