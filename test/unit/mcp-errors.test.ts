/** MCP SDK and transport errors as Temporal failures: one mapping, by the error alone. */
import { ApplicationFailure } from '@temporalio/common';
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { McpFailureType } from '../../src/core/failure-types';
import {
  isProtocolRefusal,
  serverAnswered,
  toMcpFailure,
  unknownServerFailure,
  unknownToolFailure,
} from '../../src/mcp/errors';

describe('toMcpFailure', () => {
  it('makes a refusal the server repeats on every retry a non-retryable McpInvalidRequest', () => {
    for (const code of [
      ProtocolErrorCode.InvalidParams,
      ProtocolErrorCode.MethodNotFound,
      ProtocolErrorCode.InvalidRequest,
      ProtocolErrorCode.MissingRequiredClientCapability,
      ProtocolErrorCode.UnsupportedProtocolVersion,
    ]) {
      const err = new ProtocolError(code, 'no such thing');
      expect(isProtocolRefusal(err)).toBe(true);
      const f = toMcpFailure(err, `s/t: ${err.message}`);
      expect(f).toBeInstanceOf(ApplicationFailure);
      expect(f).toMatchObject({
        type: 'McpInvalidRequest',
        nonRetryable: true,
        message: `s/t: no such thing (the server refused the call)`,
      });
    }
  });

  it('makes any other error the server answered a retryable McpServerError', () => {
    for (const code of [ProtocolErrorCode.InternalError, ProtocolErrorCode.ParseError, -32099]) {
      const err = new ProtocolError(code, 'internal trouble');
      expect([isProtocolRefusal(err), serverAnswered(err)]).toEqual([false, true]);
      expect(toMcpFailure(err, 'm')).toMatchObject({ type: 'McpServerError', nonRetryable: false, message: 'm' });
    }
  });

  it('makes a request timeout a retryable McpTimeout', () => {
    const err = new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out');
    expect(serverAnswered(err)).toBe(false);
    expect(toMcpFailure(err, 'm')).toMatchObject({ type: 'McpTimeout', nonRetryable: false });
  });

  it('makes no answer at all (a closed connection, a broken transport) a retryable McpTransportError', () => {
    const closed = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed');
    expect(serverAnswered(closed)).toBe(false);
    expect(toMcpFailure(closed, 'm')).toMatchObject({ type: 'McpTransportError', nonRetryable: false });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(toMcpFailure(refused, 'm')).toMatchObject({ type: 'McpTransportError', nonRetryable: false, message: 'm' });
    expect(toMcpFailure('not even an Error', 'm').type).toBe('McpTransportError');
  });

  it('passes an ApplicationFailure through', () => {
    const f = ApplicationFailure.create({ type: 'X', message: 'x' });
    expect(toMcpFailure(f, 'm')).toBe(f);
  });
});

it('refuses an unknown server or tool non-retryably, naming it', () => {
  expect(unknownServerFailure('kb')).toMatchObject({
    type: McpFailureType.UnknownServer,
    nonRetryable: true,
    message: 'server kb is not configured on this worker',
  });
  expect(unknownToolFailure('kb', 'search')).toMatchObject({
    type: McpFailureType.InvalidRequest,
    nonRetryable: true,
    message: 'unknown tool search on server kb',
  });
});

it('keeps the failure type values that histories and nonRetryableErrorTypes name', () => {
  expect(McpFailureType).toEqual({
    UnknownServer: 'McpUnknownServer',
    InvalidRequest: 'McpInvalidRequest',
    ServerError: 'McpServerError',
    Timeout: 'McpTimeout',
    TransportError: 'McpTransportError',
  });
});
