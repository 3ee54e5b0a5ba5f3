/**
 * Every refusal `serve` answers is `{ "error": "<one line>" }` with its status: 400 names the field
 * (or says the body or the path is malformed), 401/403 say what is missing, 404 names the id (an id
 * of another kind of workflow is not found too), 409 says why the request conflicts, 413 names the
 * limit, 414 the id length, 429 when to retry. Request data is repeated only in part (a line is at
 * most {@link ERROR_LINE_MAX} characters). Nothing else (no stack, no secret) leaves the server.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { WorkflowKindError } from '../client/workflow-kind';
import { missingSearchAttribute, missingSearchAttributeLine } from '../client/missing-search-attribute';
import { MAX_ID_LENGTH } from '../core/input-limits';
import { oneLine } from '../core/text';
import { InvalidIdError } from '../schemas/ids';
import { ChatTurnInputError } from '../schemas/turn-input';

const ERROR_LINE_MAX = 500;
/** How much of a request's path an error repeats. */
const PATH_ECHO_MAX = 100;

/** A refusal a route throws: its status, its one line, and the headers it needs (a 429's `Retry-After`). */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export const notFound = (what: string): HttpError => new HttpError(404, `no ${what}`);

/** `err` as a refusal naming its fields under `at` (`body.options`), when it is a turn input's; else `err`. */
export function asFieldRefusal(err: unknown, at: string): unknown {
  return err instanceof ChatTurnInputError ? new HttpError(400, err.problems.map((p) => `${at}.${p}`).join('; ')) : err;
}

/** The path of a request, as an error line repeats it: without its query, cut short. */
export function pathOf(request: FastifyRequest): string {
  return oneLine(request.url.split('?')[0] ?? '', PATH_ECHO_MAX);
}

function send(reply: FastifyReply, status: number, message: unknown): FastifyReply {
  return reply.code(status).send({ error: oneLine(String(message ?? 'the request failed'), ERROR_LINE_MAX) });
}

/** The error response of any failure a route or Fastify raised. */
export function errorReply(bodyLimitBytes: number, log: (line: string) => void, namespace = 'default') {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (error instanceof HttpError) return send(reply.headers(error.headers), error.statusCode, error.message);
    if (hasZodFastifySchemaValidationErrors(error)) {
      const problems = error.validation.map((v) => {
        const path = v.instancePath.split('/').filter(Boolean);
        // A record key the key schema refused: the key named apart (it may hold dots), with the key rule's own message.
        const keyRules = v.keyword === 'invalid_key' ? ((v.params as { issues?: Array<{ message: string }> }).issues ?? []) : [];
        const key = keyRules.length ? path.pop() : undefined;
        const where = [error.validationContext ?? 'body', ...path].join('.');
        return key !== undefined ? `${where}: key "${oneLine(key, 100)}": ${keyRules.map((i) => i.message).join('; ')}` : `${where}: ${v.message}`;
      });
      return send(reply, 400, problems.join('; '));
    }
    if (error instanceof ChatTurnInputError) return send(reply, 400, error.problems.join('; '));
    if (error instanceof InvalidIdError) return send(reply, 400, error.message);
    if (error instanceof WorkflowKindError) return send(reply, 404, error.message);
    if (error instanceof WorkflowNotFoundError) return send(reply, 404, `no workflow ${error.workflowId ?? ''}`.trim());
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(reply, 413, `the body is larger than ${bodyLimitBytes} bytes (serve.bodyLimitBytes)`);
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return send(reply, 400, `the body is not valid JSON: ${error.message}`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return send(reply, 415, 'send the body as application/json');
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return send(reply, error.statusCode, error.message);
    const missing = missingSearchAttribute(error, namespace);
    if (missing) {
      log(`serve: ${missingSearchAttributeLine(missing)}`);
      return send(reply, 503, missingSearchAttributeLine(missing));
    }
    log(`serve: ${request.method} ${pathOf(request)} failed: ${oneLine(String(error.message), 300)}`);
    return send(reply, 500, `the request failed: ${error.message}`);
  };
}

/** Fastify's router's own refusals (a path that is not valid percent-encoding, an id too long), as `{ error }`. */
export function routerErrorReply(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return send(reply, 414, `an id in the path is longer than ${MAX_ID_LENGTH} characters`);
  if (error.code === 'FST_ERR_BAD_URL') return send(reply, 400, `the path ${pathOf(request)} is not valid percent-encoding`);
  return send(reply, error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400, 'the request could not be routed');
}

/** A request Node's HTTP parser refused (a malformed request line, headers too large), answered as `{ error }`. */
export function clientErrorReply(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request took too long to arrive']
        : [400, 'the request is not valid HTTP'];
  const body = JSON.stringify({ error: message });
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
