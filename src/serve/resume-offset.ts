/**
 * Where a stream resumes: after `Last-Event-ID`, else at `?from=`, else at 0. Both are offsets
 * written as whole numbers in decimal digits, read the same strict way (no sign, no hex, no
 * exponent, no spaces inside).
 */
import type { FastifyRequest } from 'fastify';

const OFFSET = /^\d{1,15}$/;

/** The offset to resume from; undefined when `Last-Event-ID` or `from` is not an offset. */
export function resumeOffset(request: FastifyRequest): number | undefined {
  const last = request.headers['last-event-id'];
  const from = (request.query as { from?: string } | undefined)?.from;
  if (typeof last === 'string' && last.trim() !== '') return OFFSET.test(last.trim()) ? Number(last.trim()) + 1 : undefined;
  if (from !== undefined) return OFFSET.test(from) ? Number(from) : undefined;
  return 0;
}
