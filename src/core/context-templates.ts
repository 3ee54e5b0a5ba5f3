/**
 * A turn's `context` (non-secret values its caller set: tenant, user, conversation id) reaching MCP
 * servers through their `inject` values: a string `${context.tenant}` is the context's `tenant`
 * (`${context.user.id}` goes deeper). A string that is only the template takes the value as it is
 * (a number stays a number); a template inside a longer string is replaced by the value's text.
 * Claude never sees the context: injected arguments are hidden from the schemas it is offered.
 */

/** The turn's context: a JSON object of non-secret values. */
export type TurnContext = Record<string, unknown>;

const TEMPLATE = /\$\{context\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\}/g;
const WHOLE = /^\$\{context\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\}$/;

function lookup(context: TurnContext | undefined, path: string): unknown {
  let value: unknown = context;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function eachString(value: unknown, visit: (s: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const v of value) eachString(v, visit);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) eachString(v, visit);
}

/** The context paths `inject` refers to (`tenant`, `user.id`), each once. */
export function contextPathsOf(inject: unknown): string[] {
  const paths = new Set<string>();
  eachString(inject, (s) => {
    for (const m of s.matchAll(TEMPLATE)) paths.add(m[1]!);
  });
  return [...paths];
}

/** The paths of `inject`'s templates that `context` does not set. */
export function missingContextPaths(inject: unknown, context: TurnContext | undefined): string[] {
  return contextPathsOf(inject).filter((p) => lookup(context, p) === undefined);
}

/** `value` with every template filled from `context` (see the file comment); a path it lacks is left as written. */
export function fillContext<T>(value: T, context: TurnContext | undefined): T {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) {
      const found = lookup(context, whole[1]!);
      return (found === undefined ? value : found) as T;
    }
    return value.replace(TEMPLATE, (all, path: string) => {
      const found = lookup(context, path);
      if (found === undefined) return all;
      return typeof found === 'string' ? found : JSON.stringify(found);
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => fillContext(v, context)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillContext(v, context)])) as T;
  }
  return value;
}
