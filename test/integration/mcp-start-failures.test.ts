/**
 * A server that fails to start says why: a stdio server that exits with a traceback is reported
 * with the last lines of its stderr (configured secrets redacted) in the unavailable reason and the
 * worker log, and an HTTP server that refuses `initialize` and then the SSE fallback is reported
 * with both errors.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpPool } from '../../src/mcp';
import { parseConfig } from '../../src/config/config-file';
import { testStateDir } from '../support/settings';
import { crashingStdio } from '../support/mcp-servers';
import { recordingLogger } from './mcp-fixtures';

jest.setTimeout(30_000);

const SECRET = 'db-pass-7c1e9a-worker-only';
function poolOf(servers: Record<string, unknown>, log = recordingLogger()): McpPool {
  return new McpPool(parseConfig(JSON.stringify({ mcp_servers: servers }), 'json', process.env, 'test', testStateDir()).servers, log.logger);
}

it('a stdio server that exits at start is reported with the last lines of its stderr, secrets redacted', async () => {
  const log = recordingLogger();
  const pool = poolOf({ inventory: crashingStdio(SECRET) }, log);
  try {
    const listed = await pool.listTools();
    expect(listed.unavailable).toHaveLength(1);
    const { reason } = listed.unavailable[0]!;
    expect(reason).toMatch(/^connect to inventory failed: Connection closed; server stderr: /);
    expect(reason).toContain('crashing-mcp-server.py", line 11, in connect | raise ConnectionError(');
    expect(reason).toMatch(/\| ConnectionError: could not reach the database at postgres:\/\/app:\[redacted\]@db:5432\/inventory$/);
    expect(reason).not.toContain(SECRET);

    const failed = log.lines.find((l) => l.message === 'mcp server connect failed');
    expect(String(failed?.fields.error)).toContain('ConnectionError: could not reach the database at postgres://app:[redacted]@db');
    expect(log.all()).not.toContain(SECRET);
  } finally {
    await pool.close();
  }
});

it('a stdio server that exits without writing to stderr is reported as before', async () => {
  const pool = poolOf({ quits: { command: process.execPath, args: ['-e', 'process.exit(3)'] } });
  try {
    expect((await pool.listTools()).unavailable[0]!.reason).toBe('connect to quits failed: Connection closed');
  } finally {
    await pool.close();
  }
});

it('an HTTP server that refuses initialize and then the SSE fallback is reported with both errors', async () => {
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unsupported protocol version 2025-11-25' }));
    } else {
      res.writeHead(405).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const log = recordingLogger();
  const pool = poolOf({ api: { type: 'http', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` } }, log);
  try {
    const { reason } = (await pool.listTools()).unavailable[0]!;
    expect(reason).toMatch(/^connect to api failed: streamable HTTP: .*unsupported protocol version 2025-11-25.*; SSE fallback: SSE error: Non-200 status code \(405\)$/);
    expect(String(log.lines.find((l) => l.message === 'mcp server connect failed')?.fields.error)).toContain('unsupported protocol version');
  } finally {
    await pool.close();
    server.closeAllConnections();
    server.close();
  }
});
