/**
 * The MCP layer against real servers from npm: server-everything over stdio and streamable HTTP,
 * server-memory and server-filesystem, configured through a `.mcp.json`, plus the legacy SSE
 * fallback, reconnects, the circuit breaker, injection and process-group cleanup.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { McpPool, loadConfig, parseConfig } from '../../src/mcp';
import { buildToolCatalog } from '../../src/core/tool-naming';
import { EVERYTHING } from '../support/mcp-servers';
import { freePort } from '../support/ports';

jest.setTimeout(120_000);

const MEMORY = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-pool-'));
fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello from the filesystem server');

function startHttpEverything(port: number, mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (/listening on port|running on port/i.test(err)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`everything ${mode} exited ${code}: ${err}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** pids of live processes in a process group. */
function groupMembers(pgid: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,stat='], { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, g, stat]) => Number(g) === pgid && !stat!.startsWith('Z'))
    .map(([p]) => Number(p));
}

const text = (out: { content: Array<{ type: string; text?: string }> }): string => out.content.map((c) => c.text ?? '').join('\n');

describe('a pool over four real servers from a .mcp.json', () => {
  let http: ChildProcess;
  let pool: McpPool;

  beforeAll(async () => {
    const port = await freePort();
    http = await startHttpEverything(port);
    const file = path.join(dir, '.mcp.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          remote: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, allowedTools: ['echo', 'get-sum'] },
          memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } },
          files: { command: process.execPath, args: [FILESYSTEM, dir], excludeTools: ['write_file', 'edit_file', 'move_file'] },
        },
      }),
    );
    pool = new McpPool(loadConfig(file).servers);
  });

  afterAll(async () => {
    await pool?.close();
    await stop(http);
  });

  it('lists tools of all four, applies allow/exclude lists, and keeps same-named tools distinct', async () => {
    const listed = await pool.listTools();
    expect(listed.unavailable).toEqual([]);
    const byServer = (s: string) => listed.tools.filter((t) => t.server === s).map((t) => t.name);
    expect(byServer('remote').sort()).toEqual(['echo', 'get-sum']);
    expect(byServer('everything')).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']));
    expect(byServer('memory')).toEqual(expect.arrayContaining(['create_entities', 'read_graph']));
    expect(byServer('files')).toEqual(expect.arrayContaining(['read_text_file', 'list_directory']));
    expect(byServer('files')).not.toContain('write_file');
    expect(listed.policies.remote).toEqual({ startToCloseTimeoutMs: 40_000, heartbeatTimeoutMs: 15_000, retry: { maximumAttempts: 3, initialIntervalMs: 1000, backoffCoefficient: 2, maximumIntervalMs: 10_000 } });
    const catalog = buildToolCatalog(listed.tools, {}, 200);
    expect(catalog.targets['everything__echo']).toEqual({ server: 'everything', tool: 'echo' });
    expect(catalog.targets['remote__echo']).toEqual({ server: 'remote', tool: 'echo' });
  });

  it('calls tools on three servers at once', async () => {
    const [echo, graph, file] = await Promise.all([
      pool.callTool({ server: 'remote', tool: 'echo', arguments: { message: 'over http' }, toolUseId: 't1' }),
      pool.callTool({ server: 'memory', tool: 'create_entities', arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote notes'] }] }, toolUseId: 't2' }),
      pool.callTool({ server: 'files', tool: 'read_text_file', arguments: { path: path.join(dir, 'hello.txt') }, toolUseId: 't3' }),
    ]);
    expect(text(echo)).toBe('Echo: over http');
    expect(text(graph)).toContain('Ada');
    expect(text(file)).toBe('hello from the filesystem server');
  });

  it('turns an image into an image block and an artifact', async () => {
    const out = await pool.callTool({ server: 'everything', tool: 'get-tiny-image', arguments: {}, toolUseId: 't4' });
    expect(out.content.some((c) => c.type === 'image')).toBe(true);
    expect(out.artifacts[0]).toMatchObject({ type: 'image/png', id: 'everything-get-tiny-image-image-1' });
  });

  it('validates arguments before calling, and reports unknown tools as data', async () => {
    const bad = await pool.callTool({ server: 'everything', tool: 'get-sum', arguments: { a: 'two' }, toolUseId: 't5' });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toBe("Invalid arguments for get-sum: (arguments) must have required property 'b'; /a must be number");
    const unknown = await pool.callTool({ server: 'everything', tool: 'no-such-tool', arguments: {}, toolUseId: 't6' });
    expect(unknown.isError).toBe(true);
  });

  it('reconnects after its stdio server is killed', async () => {
    const before = pool.status().find((s) => s.server === 'everything')!;
    process.kill(-before.pid!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    const out = await pool.callTool({ server: 'everything', tool: 'echo', arguments: { message: 'back' }, toolUseId: 't7' });
    expect(text(out)).toBe('Echo: back');
    const after = pool.status().find((s) => s.server === 'everything')!;
    expect(after.pid).not.toBe(before.pid);
    expect(after.spawned).toBe(before.spawned + 1);
  });
});

it('opens one process for many concurrent first calls', async () => {
  const pool = new McpPool(parseConfig(JSON.stringify({ mcp_servers: { e: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }), 'json').servers);
  try {
    const outs = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.callTool({ server: 'e', tool: 'echo', arguments: { message: `m${i}` }, toolUseId: `c${i}` })));
    expect(outs.map(text)).toEqual(Array.from({ length: 20 }, (_, i) => `Echo: m${i}`));
    expect(pool.status()[0]!.spawned).toBe(1);
  } finally {
    await pool.close();
  }
});

it('merges injected values worker-side and hides them from the listed schema', async () => {
  const pool = new McpPool(
    parseConfig(JSON.stringify({ mcp_servers: { e: { command: process.execPath, args: [EVERYTHING, 'stdio'], inject: { message: 'from the worker config' } } } }), 'json').servers,
  );
  try {
    const listed = await pool.listTools();
    const echo = listed.tools.find((t) => t.name === 'echo')!;
    expect(echo.inputSchema.properties).not.toHaveProperty('message');
    expect(echo.inputSchema.required ?? []).not.toContain('message');
    const out = await pool.callTool({ server: 'e', tool: 'echo', arguments: {}, toolUseId: 'i1' });
    expect(text(out)).toBe('Echo: from the worker config');
  } finally {
    await pool.close();
  }
});

it('reaches a legacy HTTP+SSE server through the SSE fallback', async () => {
  const port = await freePort();
  const sse = await startHttpEverything(port, 'sse');
  const pool = new McpPool(parseConfig(JSON.stringify({ mcpServers: { legacy: { type: 'http', url: `http://127.0.0.1:${port}/sse` } } }), 'json').servers);
  try {
    const out = await pool.callTool({ server: 'legacy', tool: 'echo', arguments: { message: 'via sse' }, toolUseId: 's1' });
    expect(text(out)).toBe('Echo: via sse');
  } finally {
    await pool.close();
    await stop(sse);
  }
});

it('opens the breaker on a dead HTTP server, half-opens after the cooldown, and closes when it is back', async () => {
  const port = await freePort();
  const pool = new McpPool(
    parseConfig(
      JSON.stringify({ mcp_servers: { api: { type: 'streamable-http', url: `http://127.0.0.1:${port}/mcp`, connect_timeout_ms: 2000, breaker: { failure_threshold: 3, cooldown_ms: 1500, max_cooldown_ms: 5000 } } } }),
      'json',
    ).servers,
  );
  const call = () => pool.callTool({ server: 'api', tool: 'echo', arguments: { message: 'hi' }, toolUseId: 'b' });
  try {
    for (let i = 0; i < 3; i++) await expect(call()).rejects.toThrow(/api\/echo/); // transport failures: Temporal retries these
    expect(pool.status()[0]!.state).toBe('open');
    const refused = await call();
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^server api is unavailable \(circuit open, next probe in [12] s\)$/);
    expect((await pool.listTools()).unavailable[0]).toMatchObject({ server: 'api', reason: expect.stringMatching(/circuit open/) });

    const server = await startHttpEverything(port);
    try {
      await new Promise((r) => setTimeout(r, 1600));
      expect(pool.status()[0]!.state).toBe('half-open');
      const probe = await call();
      expect(text(probe)).toBe('Echo: hi');
      expect(pool.status()[0]).toMatchObject({ state: 'closed', consecutiveFailures: 0, opens: 1 });
    } finally {
      await stop(server);
    }
  } finally {
    await pool.close();
  }
});

it('leaves no server processes behind after close, grandchildren included', async () => {
  // A launcher that forks a grandchild, as npx does: only a process-group kill reaches both.
  const launcher = path.join(dir, 'launcher.js');
  fs.writeFileSync(
    launcher,
    `const { spawn } = require('node:child_process');\n` +
      `spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });\n` +
      `const child = spawn(process.execPath, [${JSON.stringify(EVERYTHING)}, 'stdio'], { stdio: 'inherit' });\n` +
      `child.on('exit', (c) => process.exit(c ?? 0));\n`,
  );
  const pool = new McpPool(parseConfig(JSON.stringify({ mcp_servers: { launched: { command: process.execPath, args: [launcher] } } }), 'json').servers);
  const out = await pool.callTool({ server: 'launched', tool: 'echo', arguments: { message: 'x' }, toolUseId: 'o' });
  expect(text(out)).toBe('Echo: x');
  const pgid = pool.status()[0]!.pid!;
  expect(groupMembers(pgid).length).toBeGreaterThanOrEqual(3);
  await pool.close();
  await new Promise((r) => setTimeout(r, 300));
  expect(groupMembers(pgid)).toEqual([]);
});
