/**
 * The MCP pool against real servers from npm, spawned with node and a resolved path: server-everything
 * over stdio and over streamable HTTP, server-memory and server-filesystem, configured through a
 * `.mcp.json` in a temp dir. Covers listing and filters, same-named tools, calls on several servers
 * at once, validation, unknown tools, injection, one process for concurrent first use, a server killed
 * mid-call, progress, timeouts, cancellation, a restarted HTTP server, and no orphans after close.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { ApplicationFailure } from '@temporalio/common';
import { McpPool, type McpProgress } from '../../src/mcp';
import { loadConfig, parseConfig } from '../../src/config/config-file';
import { testStateDir } from '../support/settings';
import { buildToolCatalog } from '../../src/core/tool-naming';
import { freePort } from '../support/ports';
import {
  EVERYTHING,
  FILESYSTEM,
  MEMORY,
  processTable,
  recordingLogger,
  sleep,
  startEverythingHttp,
  stopChild,
  textOf,
} from './mcp-fixtures';

jest.setTimeout(60_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-pool-'));
fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello from the filesystem server');
const INJECTED_SECRET = 'inj-secret-5d1e0c-worker-only';
const HEADER_SECRET = 'hdr-secret-8a2f77-worker-only';

/** A pool over one config object in the snake_case shape. */
function poolOf(
  servers: Record<string, unknown>,
  log = recordingLogger(),
): { pool: McpPool; log: ReturnType<typeof recordingLogger> } {
  return {
    pool: new McpPool(
      parseConfig(JSON.stringify({ mcp_servers: servers }), 'json', process.env, 'test', testStateDir()).servers,
      log.logger,
    ),
    log,
  };
}

const everything = (marker = randomUUID()) => ({
  command: process.execPath,
  args: [EVERYTHING, 'stdio', `--marker=${marker}`],
});

/** Our children running server-everything with this marker. */
const markedServers = (marker: string) =>
  processTable().filter((p) => p.ppid === process.pid && p.args.includes(marker));

describe('a pool over four real servers from a .mcp.json', () => {
  let http: ChildProcess;
  let port: number;
  let pool: McpPool;
  const log = recordingLogger();

  beforeAll(async () => {
    port = await freePort();
    http = await startEverythingHttp(port);
    const file = path.join(dir, '.mcp.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          remote: {
            type: 'http',
            url: `http://127.0.0.1:${port}/mcp`,
            allowedTools: ['echo', 'get-sum', 'trigger-long-running-operation'],
            headers: { 'X-Api-Key': '${HDR_SECRET}' },
          },
          memory: {
            command: process.execPath,
            args: [MEMORY],
            env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
          },
          files: {
            command: process.execPath,
            args: [FILESYSTEM, dir],
            excludeTools: ['write_file', 'edit_file', 'move_file'],
          },
        },
      }),
    );
    pool = new McpPool(loadConfig(file, { ...process.env, HDR_SECRET: HEADER_SECRET }, testStateDir()).servers, log.logger);
  });

  afterAll(async () => {
    await pool?.close();
    if (http) await stopChild(http);
  });

  it('lists tools of all four, applies allow/exclude lists, and keeps same-named tools distinct', async () => {
    const listed = await pool.listTools();
    expect(listed.unavailable).toEqual([]);
    expect(listed.unknownServers).toEqual([]);
    const byServer = (s: string) => listed.tools.filter((t) => t.server === s).map((t) => t.name);
    expect(byServer('remote').sort()).toEqual(['echo', 'get-sum', 'trigger-long-running-operation']);
    expect(byServer('everything')).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'get-env']),
    );
    expect(byServer('memory')).toEqual(expect.arrayContaining(['create_entities', 'read_graph']));
    expect(byServer('files')).toEqual(expect.arrayContaining(['read_text_file', 'list_directory']));
    expect(byServer('files')).not.toEqual(expect.arrayContaining(['write_file']));
    expect(byServer('files')).not.toContain('edit_file');
    expect(Object.keys(listed.policies).sort()).toEqual(['everything', 'files', 'memory', 'remote']);
    expect(listed.policies.remote).toEqual({
      localTools: [], // no call seen yet (src/mcp/tool-speed.ts)
      unseenTools: ['echo', 'get-sum', 'trigger-long-running-operation'],
      startToCloseTimeoutMs: 40_000,
      heartbeatTimeoutMs: 15_000,
      inputTimeoutMs: 600_000,
      retry: {
        maximumAttempts: 3,
        initialIntervalMs: 1000,
        backoffCoefficient: 2,
        maximumIntervalMs: 10_000,
      },
    });
    // The two everything instances both have `echo`; they stay two tools.
    const catalog = buildToolCatalog(listed.tools, {}, 200);
    expect(catalog.targets['everything__echo']).toEqual({ server: 'everything', tool: 'echo' });
    expect(catalog.targets['remote__echo']).toEqual({ server: 'remote', tool: 'echo' });
    // Nothing secret crosses into the listing.
    expect(JSON.stringify(listed)).not.toContain(HEADER_SECRET);
    expect(pool.status().map((s) => [s.server, s.connected, s.tools! > 0])).toEqual([
      ['everything', true, true],
      ['remote', true, true],
      ['memory', true, true],
      ['files', true, true],
    ]);
  });

  it('lists only the asked servers and reports unknown names', async () => {
    const listed = await pool.listTools({ servers: ['memory', 'nope'] });
    expect(new Set(listed.tools.map((t) => t.server))).toEqual(new Set(['memory']));
    expect(listed.unknownServers).toEqual(['nope']);
  });

  it('calls tools on three servers at once', async () => {
    const [echo, graph, file] = await Promise.all([
      pool.callTool({ server: 'remote', tool: 'echo', arguments: { message: 'over http' }, toolUseId: 't1' }),
      pool.callTool({
        server: 'memory',
        tool: 'create_entities',
        arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote notes'] }] },
        toolUseId: 't2',
      }),
      pool.callTool({
        server: 'files',
        tool: 'read_text_file',
        arguments: { path: path.join(dir, 'hello.txt') },
        toolUseId: 't3',
      }),
    ]);
    expect(textOf(echo)).toBe('Echo: over http');
    expect(textOf(graph)).toContain('Ada');
    expect(textOf(file)).toBe('hello from the filesystem server');
    expect([echo, graph, file].map((o) => o.isError)).toEqual([false, false, false]);
  });

  it('lists a tool as local once its last three calls were quick', async () => {
    for (let i = 0; i < 3; i++) await pool.callTool({ server: 'remote', tool: 'get-sum', arguments: { a: i, b: 1 }, toolUseId: `q${i}` });
    const listed = await pool.listTools({ servers: ['remote'] });
    expect(listed.policies.remote!.localTools).toContain('get-sum');
    expect(listed.policies.remote!.localTools).not.toContain('trigger-long-running-operation');
  });

  it('turns an image into an image block and an artifact', async () => {
    const out = await pool.callTool({
      server: 'everything',
      tool: 'get-tiny-image',
      arguments: {},
      toolUseId: 't4',
    });
    expect(out.content.some((c) => c.type === 'image')).toBe(true);
    expect(out.artifacts![0]).toMatchObject({ type: 'image/png', id: 'everything-get-tiny-image-image-1' });
  });

  it('validates arguments before calling (no call made), and refuses unknown or excluded tools for good', async () => {
    const bad = await pool.callTool({
      server: 'everything',
      tool: 'get-sum',
      arguments: { a: 'two' },
      toolUseId: 't5',
    });
    expect(bad).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: "Invalid arguments for get-sum: (arguments) must have required property 'b'; /a must be number",
        },
      ],
      artifacts: [],
      truncatedBytes: 0,
    });
    for (const [server, tool] of [
      ['everything', 'no-such-tool'],
      ['files', 'write_file'], // excluded: not callable either
      ['remote', 'get-env'], // not in allowedTools
    ] as const) {
      const err = await pool
        .callTool({ server, tool, arguments: {}, toolUseId: 't6' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({
        type: 'McpInvalidRequest',
        nonRetryable: true,
        message: `unknown tool ${tool} on server ${server}`,
      });
    }
    expect(pool.status().find((s) => s.server === 'everything')!.consecutiveFailures).toBe(0);
  });

  it('heartbeat material: reports progress notifications of a long call', async () => {
    const progress: McpProgress[] = [];
    const out = await pool.callTool(
      {
        server: 'remote',
        tool: 'trigger-long-running-operation',
        arguments: { duration: 0.5, steps: 5 },
        toolUseId: 't7',
      },
      { onProgress: (p) => progress.push(p) },
    );
    expect(textOf(out)).toContain('Long running operation completed');
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5]);
    expect(progress[0]!.total).toBe(5);
  });

  it('re-initialises transparently when the HTTP server restarts and forgets the session', async () => {
    await stopChild(http);
    http = await startEverythingHttp(port);
    const out = await pool.callTool({
      server: 'remote',
      tool: 'echo',
      arguments: { message: 'after restart' },
      toolUseId: 't8',
    });
    expect(textOf(out)).toBe('Echo: after restart');
    expect(
      log.lines.some(
        (l) => l.message === 'mcp session expired; re-initialising' && l.fields.server === 'remote',
      ),
    ).toBe(true);
  });

  it('kills a stdio server mid-call: that call fails retryably, the next reconnects and succeeds', async () => {
    const before = pool.status().find((s) => s.server === 'everything')!;
    const inflight = pool.callTool({
      server: 'everything',
      tool: 'trigger-long-running-operation',
      arguments: { duration: 5, steps: 5 },
      toolUseId: 't9',
    });
    await sleep(300);
    process.kill(-before.pid!, 'SIGKILL');
    const err = await inflight.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'McpTransportError', nonRetryable: false });
    const out = await pool.callTool({
      server: 'everything',
      tool: 'echo',
      arguments: { message: 'back' },
      toolUseId: 't10',
    });
    expect(textOf(out)).toBe('Echo: back');
    const after = pool.status().find((s) => s.server === 'everything')!;
    expect(after.pid).not.toBe(before.pid);
    expect(after.spawned).toBe(before.spawned + 1);
    expect(after.state).toBe('closed');
  });

  it('logs server stderr tagged with the server name, and never a configured secret', () => {
    expect(log.lines.some((l) => l.message === 'mcp server stderr' && l.fields.server === 'everything')).toBe(
      true,
    );
    expect(log.all()).not.toContain(HEADER_SECRET);
  });
});

describe('one shared connection', () => {
  it('opens one process for many concurrent first calls (counted in the process table)', async () => {
    const marker = randomUUID();
    const { pool } = poolOf({ e: everything(marker) });
    try {
      const outs = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          pool.callTool({ server: 'e', tool: 'echo', arguments: { message: `m${i}` }, toolUseId: `c${i}` }),
        ),
      );
      expect(outs.map(textOf)).toEqual(Array.from({ length: 25 }, (_, i) => `Echo: m${i}`));
      const procs = markedServers(marker);
      expect(procs).toHaveLength(1);
      expect(procs[0]!.pid).toBe(pool.status()[0]!.pid);
      expect(procs[0]!.pgid).toBe(procs[0]!.pid); // it leads its own process group
      expect(pool.status()[0]!.spawned).toBe(1);
    } finally {
      await pool.close();
    }
  });
});

describe('injected values', () => {
  it('are merged worker-side, hidden from the listed schema, win over Claude, and are redacted from results', async () => {
    const { pool, log } = poolOf({
      e: { ...everything(), inject: { a: 40 } },
      echo: { ...everything(), inject: { message: INJECTED_SECRET } },
    });
    try {
      const listed = await pool.listTools();
      const sum = listed.tools.find((t) => t.server === 'e' && t.name === 'get-sum')!;
      expect(sum.inputSchema.properties).not.toHaveProperty('a');
      expect(sum.inputSchema.required).toEqual(['b']);
      const echo = listed.tools.find((t) => t.server === 'echo' && t.name === 'echo')!;
      expect(echo.inputSchema.properties).not.toHaveProperty('message');
      expect(echo.inputSchema.required ?? []).not.toContain('message');
      expect(JSON.stringify(listed)).not.toContain(INJECTED_SECRET);

      // The injected number reached the server (and Claude's own `a` does not override it).
      const out = await pool.callTool({ server: 'e', tool: 'get-sum', arguments: { b: 2 }, toolUseId: 'i1' });
      expect(textOf(out)).toBe('The sum of 40 and 2 is 42.');
      const forced = await pool.callTool({
        server: 'e',
        tool: 'get-sum',
        arguments: { a: 1000, b: 2 },
        toolUseId: 'i2',
      });
      expect(textOf(forced)).toBe('The sum of 40 and 2 is 42.');

      // The injected secret reached the server too: it echoes exactly it, which is kept out of the result.
      const echoed = await pool.callTool({ server: 'echo', tool: 'echo', arguments: {}, toolUseId: 'i3' });
      expect(textOf(echoed)).toBe('Echo: [redacted]');
      expect(log.all()).not.toContain(INJECTED_SECRET);
    } finally {
      await pool.close();
    }
  });
});

describe('timeouts and cancellation', () => {
  const { pool } = poolOf({ e: { ...everything(), timeout_ms: 700, breaker: { failure_threshold: 2 } } });
  afterAll(() => pool.close());

  it('a call over its request timeout throws a retryable McpTimeout that counts against the breaker', async () => {
    const err = await pool
      .callTool({
        server: 'e',
        tool: 'trigger-long-running-operation',
        arguments: { duration: 3, steps: 1 },
        toolUseId: 'x1',
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'McpTimeout', nonRetryable: false });
    expect((err as Error).message).toMatch(/timed out/i);
    expect(pool.status()[0]).toMatchObject({ state: 'closed', consecutiveFailures: 1, connected: true });
    // A slow call does not kill the server other calls share.
    expect(
      textOf(
        await pool.callTool({
          server: 'e',
          tool: 'echo',
          arguments: { message: 'still here' },
          toolUseId: 'x2',
        }),
      ),
    ).toBe('Echo: still here');
  });

  it('progress keeps a call alive past its request timeout, up to max_total_timeout_ms', async () => {
    const { pool: patient } = poolOf({
      e: { ...everything(), timeout_ms: 700, max_total_timeout_ms: 10_000 },
    });
    try {
      const out = await patient.callTool(
        {
          server: 'e',
          tool: 'trigger-long-running-operation',
          arguments: { duration: 2, steps: 8 },
          toolUseId: 'x3',
        },
        { onProgress: () => undefined },
      );
      expect(textOf(out)).toContain('completed');
    } finally {
      await patient.close();
    }
  });

  it('aborting the signal rejects at once and does not count against the breaker', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const call = pool.callTool(
      {
        server: 'e',
        tool: 'trigger-long-running-operation',
        arguments: { duration: 5, steps: 5 },
        toolUseId: 'x4',
      },
      { signal: abort.signal },
    );
    setTimeout(() => abort.abort(new Error('activity cancelled')), 300);
    await expect(call).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(pool.status()[0]!.consecutiveFailures).toBe(0); // the echo success reset it; the abort added nothing
  });
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
  const { pool } = poolOf({ launched: { command: process.execPath, args: [launcher] }, plain: everything() });
  await Promise.all(
    ['launched', 'plain'].map((server) =>
      pool.callTool({ server, tool: 'echo', arguments: { message: 'x' }, toolUseId: 'o' }),
    ),
  );
  const pgids = pool.status().map((s) => s.pid!);
  const inGroups = () => processTable().filter((p) => pgids.includes(p.pgid));
  expect(inGroups().length).toBeGreaterThanOrEqual(4); // launcher + grandchild + server, and the plain server
  const t0 = Date.now();
  await pool.close();
  expect(inGroups()).toEqual([]);
  expect(Date.now() - t0).toBeLessThan(5000);
  // Closed means closed: no call can spawn a new process afterwards.
  await expect(
    pool.callTool({ server: 'plain', tool: 'echo', arguments: { message: 'x' }, toolUseId: 'late' }),
  ).rejects.toThrow(/closed/);
});
