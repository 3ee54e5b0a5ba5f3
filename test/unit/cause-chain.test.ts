import { causeChain } from '../../src/client/describe-failure';
import { isLoopbackAddress, splitAddress } from '../../src/temporal/dev-server-record';

describe('causeChain', () => {
  it('joins an error and its causes, outermost first, without gRPC status prefixes or repeats', () => {
    const grpc = new Error(
      '3 INVALID_ARGUMENT: Namespace x has no mapping defined for search attribute McpTurnsStatus',
    );
    const err = new Error('Failed to start Workflow', { cause: grpc });
    expect(causeChain(err)).toBe(
      'Failed to start Workflow: Namespace x has no mapping defined for search attribute McpTurnsStatus',
    );
    const wrapped = new Error('boom: inner', { cause: new Error('inner') });
    expect(causeChain(wrapped)).toBe('boom: inner');
    expect(causeChain('plain text')).toBe('plain text');
  });
});

describe('addresses', () => {
  it('splits host:port and knows which are on this machine', () => {
    expect(splitAddress('127.0.0.1:7233')).toEqual({ host: '127.0.0.1', port: 7233 });
    expect(splitAddress('[::1]:17233')).toEqual({ host: '::1', port: 17233 });
    expect(splitAddress('no-port')).toBeUndefined();
    expect(isLoopbackAddress('localhost:7233')).toBe(true);
    expect(isLoopbackAddress('temporal.example.com:7233')).toBe(false);
  });
});
