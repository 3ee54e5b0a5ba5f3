/**
 * `mcp-turns server`, run as a user runs it: gRPC and the Web UI on the ports asked for, persistence
 * across a restart, reuse of a running server, and one clear line for each kind of bad input.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../support/ports';
import { ownStateEnv, runCli, startCli } from '../support/cli';
import { connectionRefused } from '../../src/temporal/dev-server';

jest.setTimeout(120_000);

describe('mcp-turns server', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-server-'));
  const db = path.join(dir, 'temporal.db');

  it('serves gRPC and the UI, keeps workflows across a restart, and reuses a running server', async () => {
    const port = await freePort();
    const uiPort = await freePort();
    const args = ['server', '--port', String(port), '--ui-port', String(uiPort), '--db', db];
    let server = await startCli(args, /Temporal Web UI: (http\S+)/);
    expect(server.output()).toContain(`Temporal Web UI: http://127.0.0.1:${uiPort}`);
    const ui = await fetch(`http://127.0.0.1:${uiPort}/`);
    expect(ui.status).toBe(200);

    const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    const client = new Client({ connection });
    const workflowId = `persisted-${Date.now()}`;
    // No worker serves this queue: the run stays open, which is what must survive the restart.
    await client.workflow.start('chatTurn', { taskQueue: 'nobody-serves-this', workflowId, args: [{ question: 'still there?' }] });

    const again = await runCli(args);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already answers on 127\.0\.0\.1:\d+; reusing it/);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    await connection.close();

    server = await startCli(args, /Temporal Web UI:/);
    const connection2 = await Connection.connect({ address: `127.0.0.1:${port}` });
    const described = await new Client({ connection: connection2 }).workflow.getHandle(workflowId).describe();
    expect(described.status.name).toBe('RUNNING');
    await connection2.close();
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(0);
  });

  it('holds a database for one server: a second one on it, at any port and from any command, is refused', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-twin-'));
    const env = ownStateEnv(home, 'http://127.0.0.1:2'); // Claude is never reached
    const [port, typo, other] = [await freePort(), await freePort(), await freePort()];
    const server = await startCli(['server', '--port', String(port), '--ui-port', String(await freePort())], /Temporal Web UI:/, { env });
    const { pid } = JSON.parse(fs.readFileSync(path.join(home, 'state', 'dev-servers', `${port}.json`), 'utf8')) as { pid: number };
    try {
      const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
      const workflowId = `twin-${Date.now()}`;
      await new Client({ connection }).workflow.start('chatTurn', { taskQueue: 'nobody-serves-this', workflowId, args: [{ question: 'kept?' }] });
      const held = `database ${path.join(home, 'state', 'temporal.db')} is held by the Temporal dev server on 127.0.0.1:${port} (pid ${pid}); ` +
        `use that server (--address 127.0.0.1:${port})`;

      // A typo'd address: no second server on the same database.
      const run = await runCli(['run', 'hi', '--address', `localhost:${typo}`], { env });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(`mcp-turns: cannot start a Temporal dev server on localhost:${typo}: ${held}, or stop it first (\`mcp-turns server --stop --port ${port}\`)`);
      // `server` on another port with the same database.
      const twin = await runCli(['server', '--port', String(other)], { env });
      expect(twin.code).toBe(1);
      expect(twin.stderr.trim()).toBe(`mcp-turns: cannot start a Temporal dev server on 127.0.0.1:${other}: ${held}, pass another --db, or stop it first (\`mcp-turns server --stop --port ${port}\`)`);

      expect(await connectionRefused('127.0.0.1', typo)).toBe(true);
      expect(await connectionRefused('127.0.0.1', other)).toBe(true);
      // The first server goes on, on its database, with its work.
      expect((await new Client({ connection }).workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');
      await connection.close();
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
    // Stopped: the database is free again, and its claim is gone.
    expect(fs.existsSync(path.join(home, 'state', 'temporal.db.server.json'))).toBe(false);
  });

  it('refuses an unknown flag with one line', async () => {
    const res = await runCli(['server', '--prot', '1']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')[0]).toBe("error: unknown option '--prot'");
  });

  it('fails clearly when something that is not Temporal holds the port', async () => {
    const squatter = net.createServer((s) => {
      s.on('error', () => undefined); // the probe hangs up abruptly
      s.end('not grpc\n');
    });
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
    const port = (squatter.address() as net.AddressInfo).port;
    try {
      const res = await runCli(['server', '--port', String(port), '--db', db]);
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toBe(`mcp-turns: port ${port} on 127.0.0.1 is in use by something that is not a Temporal server`);
    } finally {
      squatter.close();
    }
  });

  it('fails clearly on a database path it cannot write', async () => {
    const res = await runCli(['server', '--port', String(await freePort()), '--ui-port', String(await freePort()), '--db', '/etc/hostname/x.db']);
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toMatch(/^mcp-turns: database file \/etc\/hostname\/x\.db is not writable: /);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a bad port number', async () => {
    const res = await runCli(['server', '--port', 'seventy']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('mcp-turns: --port must be a port number (1-65535), got "seventy"');
  });
});
