/**
 * Where an event stream starts: after the event a client received last, as SSE resumes. That event's
 * offset comes in `Last-Event-ID` (what a reconnecting EventSource sends) or, for a client that
 * cannot set the header (a link, EventSource's first connect), in `?after=`: both mean the same,
 * resume after offset N, and the header wins. Without either the stream starts at its first event.
 * Both are written as whole numbers in decimal digits, read the same strict way (no sign, no hex, no
 * exponent, no spaces inside). `?from=` is refused (it reads as "from N", not "after N").
 */
import type { FastifyRequest } from 'fastify';
import { HttpError } from './http-error';

const OFFSET = /^\d{1,15}$/;

/** The first offset to send; a header or parameter that is not an offset is a 400 naming it. */
export function resumeOffset(request: FastifyRequest): number {
  const last = request.headers['last-event-id'];
  const query = (request.query ?? {}) as { after?: unknown; from?: unknown };
  if (query.from !== undefined)
    throw new HttpError(400, 'from: not a parameter; after=N resumes after the event at offset N (as Last-Event-ID: N), and without it the stream starts at offset 0');
  const after = typeof last === 'string' && last.trim() !== '' ? { name: 'Last-Event-ID', value: last.trim() } : query.after !== undefined ? { name: 'after', value: String(query.after) } : undefined;
  if (!after) return 0;
  if (!OFFSET.test(after.value)) throw new HttpError(400, `${after.name} must be an offset: a whole number, 0 or more (the last event received; the stream resumes after it)`);
  return Number(after.value) + 1;
}
