/** The one line `mcp-turns server` gives when the Temporal dev server stops during start-up. */
import { startupFailureReason } from '../../src/temporal/dev-server';

describe('startupFailureReason', () => {
  it('names the panic, not the stack under it', () => {
    const lines = [
      '{"level":"warn","ts":"2026-11-26T00:55:20Z","msg":"slow start"}',
      'panic: listen tcp 127.0.0.1:41234: bind: address already in use',
      '',
      'goroutine 2451 [running]:',
      'go.temporal.io/server/service/worker.(*Service).Start.func1()',
      '\t/home/runner/go/pkg/mod/go.temporal.io/server@v1.32.0/service/worker/service.go:281 +0x6b',
    ];
    expect(startupFailureReason(lines)).toBe('panic: listen tcp 127.0.0.1:41234: bind: address already in use');
  });

  it('names a fatal log entry with its error', () => {
    const lines = ['{"level":"fatal","ts":"x","msg":"Failed to serve on worker listener","error":"use of closed network connection"}', 'stack'];
    expect(startupFailureReason(lines)).toBe('Failed to serve on worker listener: use of closed network connection');
  });

  it('falls back to the last lines', () => {
    expect(startupFailureReason(['a', 'b'])).toBe('a | b');
    expect(startupFailureReason([])).toBe('no output');
  });
});
