/**
 * Every refusal `serve` answers is `{ "error": "<one line>" }` with its status: 400 names the field
 * (or says the body is not JSON), 401/403 say what is missing, 404 names the id, 409 says why the
 * request conflicts, 413 names the limit, 429 when to retry. Nothing else (no stack, no secret)
 * leaves the server.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { oneLine } from '../core/text';
import { ChatTurnInputError } from '../schemas/turn-input';

/** A refusal a route throws: its status and its one line. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string): HttpError => new HttpError(404, `no ${what}`);

/** The error response of any failure a route or Fastify raised. */
export function errorReply(bodyLimitBytes: number, log: (line: string) => void) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const send = (status: number, message: string) => reply.code(status).send({ error: oneLine(message, 500) });
    if (error instanceof HttpError) return send(error.statusCode, error.message);
    if (hasZodFastifySchemaValidationErrors(error)) {
      const problems = error.validation.map((v) => {
        const where = `${error.validationContext ?? 'body'}${v.instancePath.replace(/\//g, '.')}`;
        return `${where}: ${v.message}`;
      });
      return send(400, problems.join('; '));
    }
    if (error instanceof ChatTurnInputError) return send(400, error.problems.join('; '));
    if (error instanceof WorkflowNotFoundError) return send(404, `no workflow ${error.workflowId ?? ''}`.trim());
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(413, `the body is larger than ${bodyLimitBytes} bytes (serve.bodyLimitBytes)`);
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return send(400, `the body is not valid JSON: ${error.message}`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return send(415, 'send the body as application/json');
    }
    if (error.statusCode === 429) return send(429, error.message);
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return send(error.statusCode, error.message);
    log(`serve: ${request.method} ${request.url.split('?')[0]} failed: ${oneLine(error.message, 300)}`);
    return send(500, `the request failed: ${error.message}`);
  };
}
