/**
 * The MCP pool against real servers: the npm servers (server-everything over stdio and streamable
 * HTTP, server-memory, server-filesystem, from a `.mcp.json`), which speak only the legacy era, and
 * our own fixtures over stdio and streamable HTTP in each protocol era (legacy 2025-11-25, modern
 * 2026-07-28). Covers listing and filters, same-named tools, calls on several servers at once,
 * validation, unknown tools, injection, one process and one era probe for concurrent first use, the
 * era remembered across pools, a server killed mid-call, progress, timeouts, cancellation, a
 * restarted HTTP server, tool lists kept per era, a protocol setting the server does not speak, and
 * no orphans after close.
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
import { until } from '../support/until';
import {
  COUNTING,
  MCP_ERAS,
  countingStdio,
  modernStdio,
  schemasStdio,
  type McpEra,
} from '../support/mcp-servers';
import {
  EVERYTHING,
  FILESYSTEM,
  MEMORY,
  processTable,
  recordingLogger,
  sleep,
  startEverythingHttp,
  startTestServer,
  stopChild,
  textOf,
  type TestServer,
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
      parseConfig(JSON.stringify({ mcp_servers: servers }), 'json', process.env, 'test', testStateDir())
        .servers,
      log.logger,
    ),
    log,
  };
}

/** Our children running a server with this marker. */
const markedServers = (marker: string) =>
  processTable().filter((p) => p.ppid === process.pid && p.args.includes(marker));

/** A fresh file in the temp dir (a count file, a request log). */
const fileIn = (name: string): string => path.join(dir, `${name}-${randomUUID()}.jsonl`);

/** The JSON lines of a file our fixtures append to (none yet: []). */
function jsonLines<T>(file: string): T[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

/** The methods a stdio fixture received ($REQUEST_LOG), optionally only those of one process. */
const methodsIn = (requestLog: string, pid?: number): string[] =>
  jsonLines<{ method: string; pid: number }>(requestLog)
    .filter((r) => pid === undefined || r.pid === pid)
    .map((r) => r.method);

/** What a connect sends before its first request: the probe (unless the era is remembered), then a legacy server's handshake. */
const handshake = (era: McpEra, probed: boolean): string[] => [
  ...(probed ? ['server/discover'] : []),
  ...(era === 'legacy' ? ['initialize', 'notifications/initialized'] : []),
];

const times = (n: number, method: string): string[] => Array.from({ length: n }, () => method);

// The npm servers are built on the v1 SDK: they speak only the legacy era.
describe('a pool over four real servers from a .mcp.json (legacy era)', () => {
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
    pool = new McpPool(
      loadConfig(file, { ...process.env, HDR_SECRET: HEADER_SECRET }, testStateDir()).servers,
      log.logger,
    );
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
    for (let i = 0; i < 3; i++)
      await pool.callTool({
        server: 'remote',
        tool: 'get-sum',
        arguments: { a: i, b: 1 },
        toolUseId: `q${i}`,
      });
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

describe.each(MCP_ERAS)('a pool over our fixtures over stdio and streamable HTTP (%s era)', (era) => {
  let server: TestServer;
  let pool: McpPool;
  const log = recordingLogger();
  const counts = fileIn(`${era}-counts`);

  beforeAll(async () => {
    server = await startTestServer({ era });
    pool = poolOf(
      {
        local: countingStdio(counts, { exclude_tools: ['fail'] }, era),
        schemas: schemasStdio({ allowed_tools: ['echo', 'create_event', 'find_project'] }, era),
        remote: {
          type: 'http',
          url: server.url,
          allowed_tools: ['echo_args', 'slow', 't1'],
          headers: { 'X-Api-Key': HEADER_SECRET },
        },
        mirror: { type: 'http', url: server.url, allowed_tools: ['echo_args', 't2'] },
      },
      log,
    ).pool;
  });

  afterAll(async () => {
    await pool?.close();
    await server?.close();
  });

  it('lists every server (all pages), applies allow/exclude lists, keeps same-named tools distinct, and says the era', async () => {
    const listed = await pool.listTools();
    expect(listed.unavailable).toEqual([]);
    const byServer = (s: string) =>
      listed.tools
        .filter((t) => t.server === s)
        .map((t) => t.name)
        .sort();
    expect(byServer('local')).toEqual(['count', 'slow']);
    expect(byServer('schemas')).toEqual(['create_event', 'echo', 'find_project']);
    expect(byServer('remote')).toEqual(['echo_args', 'slow', 't1']);
    expect(byServer('mirror')).toEqual(['echo_args', 't2']);
    // The test server lists two of its ten tools a page: remote and mirror each read all five pages.
    expect(server.listRequests).toHaveLength(2 * 5);
    const catalog = buildToolCatalog(listed.tools, {}, 200);
    expect(catalog.targets['remote__echo_args']).toEqual({ server: 'remote', tool: 'echo_args' });
    expect(catalog.targets['mirror__echo_args']).toEqual({ server: 'mirror', tool: 'echo_args' });
    expect(JSON.stringify(listed)).not.toContain(HEADER_SECRET);
    expect(pool.status().map((s) => [s.server, s.connected, s.era, s.tools, s.spawned])).toEqual([
      ['local', true, era, 2, 1],
      ['schemas', true, era, 3, 1],
      ['remote', true, era, 3, 0],
      ['mirror', true, era, 2, 0],
    ]);
    // A legacy-era server opens a session per connection; a modern-era one has none.
    expect(server.sessions()).toBe(era === 'legacy' ? 2 : 0);
  });

  it('lists only the asked servers and reports unknown names', async () => {
    const listed = await pool.listTools({ servers: ['schemas', 'nope'] });
    expect(new Set(listed.tools.map((t) => t.server))).toEqual(new Set(['schemas']));
    expect(listed.unknownServers).toEqual(['nope']);
  });

  it('calls tools on three servers at once', async () => {
    const [counted, echoed, remote] = await Promise.all([
      pool.callTool({ server: 'local', tool: 'count', arguments: { label: 'at once' }, toolUseId: 'f1' }),
      pool.callTool({
        server: 'schemas',
        tool: 'echo',
        arguments: { message: 'over stdio' },
        toolUseId: 'f2',
      }),
      pool.callTool({
        server: 'remote',
        tool: 'echo_args',
        arguments: { message: 'over http', token: 'a' },
        toolUseId: 'f3',
      }),
    ]);
    expect(textOf(counted)).toBe('counted at once');
    expect(textOf(echoed)).toBe('echo ran with {"message":"over stdio"}');
    expect(JSON.parse(textOf(remote))).toEqual({ message: 'over http', token: 'a' });
    expect([counted, echoed, remote].map((o) => o.isError)).toEqual([false, false, false]);
    expect(jsonLines(counts)).toHaveLength(1);
  });

  it('lists a tool as local once its last three calls were quick', async () => {
    for (let i = 0; i < 3; i++)
      await pool.callTool({ server: 'remote', tool: 't1', arguments: {}, toolUseId: `q${i}` });
    const listed = await pool.listTools({ servers: ['remote'] });
    expect(listed.policies.remote!.localTools).toContain('t1');
    expect(listed.policies.remote!.localTools).not.toContain('slow');
  });

  it('validates arguments before calling (no call made), and refuses unknown, excluded or not allowed tools for good', async () => {
    const callsBefore = server.calls.length;
    const bad = await pool.callTool({
      server: 'remote',
      tool: 'echo_args',
      arguments: { message: 7 },
      toolUseId: 'f5',
    });
    expect(bad).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: "Invalid arguments for echo_args: (arguments) must have required property 'token'; /message must be string",
        },
      ],
      artifacts: [],
      truncatedBytes: 0,
    });
    expect(server.calls.length).toBe(callsBefore);
    for (const [server, tool] of [
      ['local', 'no-such-tool'],
      ['local', 'fail'], // excluded: not callable either
      ['remote', 'crash'], // not in allowed_tools
    ] as const) {
      const err = await pool
        .callTool({ server, tool, arguments: {}, toolUseId: 'f6' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({
        type: 'McpInvalidRequest',
        nonRetryable: true,
        message: `unknown tool ${tool} on server ${server}`,
      });
    }
    expect(server.calls.length).toBe(callsBefore);
    expect(pool.status().map((s) => s.consecutiveFailures)).toEqual([0, 0, 0, 0]);
  });

  it('heartbeat material: reports progress notifications of a long call', async () => {
    const progress: McpProgress[] = [];
    const out = await pool.callTool(
      { server: 'remote', tool: 'slow', arguments: { ms: 500 }, toolUseId: 'f7' },
      { onProgress: (p) => progress.push(p) },
    );
    expect(textOf(out)).toBe('slept 500 ms');
    expect(progress.map((p) => p.progress)).toEqual([100, 200, 300, 400, 500]);
    expect(progress[0]!.total).toBe(500);
  });

  it(
    era === 'legacy'
      ? 'keeps a tool list until the server says it changed'
      : 'asks for a tool list again at every listing when it carries no ttlMs, and keeps one for its ttlMs even when the list changes meanwhile',
    async () => {
      const pages = () => server.listRequests.length;
      const listRemote = () => pool.listTools({ servers: ['remote'] });
      await listRemote();
      const before = pages();
      await listRemote();
      if (era === 'legacy') {
        expect(pages()).toBe(before);
        await server.addTool({ name: 'added', inputSchema: { type: 'object' } });
        await until(
          () => log.lines.some((l) => l.message === 'mcp tool list changed'),
          'the list_changed notification',
          5000,
          25,
        );
        await listRemote();
        expect(pages()).toBeGreaterThan(before);
        return;
      }
      // The test server's lists carry the SDK's default `ttlMs: 0`; a listing is 5 pages.
      expect(pages()).toBe(before + 5);
      const kept = await startTestServer({ era, toolsTtlMs: 60_000 });
      const { pool: keeping, log: keepingLog } = poolOf({ kept: { type: 'streamable-http', url: kept.url } });
      try {
        await keeping.listTools();
        await keeping.listTools();
        expect(kept.listRequests).toHaveLength(5);
        await kept.addTool({ name: 'added', inputSchema: { type: 'object' } });
        await sleep(200);
        await keeping.listTools();
        expect(kept.listRequests).toHaveLength(5);
        expect(keepingLog.lines.map((l) => l.message)).not.toContain('mcp tool list changed');
      } finally {
        await keeping.close();
        await kept.close();
      }
    },
  );

  it(
    era === 'legacy'
      ? 're-initialises transparently when the HTTP server restarts and forgets the session'
      : 'carries on when the HTTP server restarts: there is no session to lose',
    async () => {
      await server.close();
      // A restart takes a moment, in which the client sees its connections to the old server close.
      await sleep(100);
      server = await startTestServer({ era, port: server.port });
      const out = await pool.callTool({
        server: 'remote',
        tool: 'echo_args',
        arguments: { message: 'after restart', token: 'b' },
        toolUseId: 'f8',
      });
      expect(JSON.parse(textOf(out))).toEqual({ message: 'after restart', token: 'b' });
      const reinitialised = log.lines.filter(
        (l) => l.message === 'mcp session expired; re-initialising' && l.fields.server === 'remote',
      );
      const connects = log.lines.filter(
        (l) => l.message === 'mcp server connected' && l.fields.server === 'remote',
      );
      if (era === 'legacy') {
        expect(reinitialised).toHaveLength(1);
        expect(connects).toHaveLength(2);
        expect(server.sessions()).toBe(1);
      } else {
        expect(reinitialised).toEqual([]);
        expect(connects).toHaveLength(1);
        expect(server.sessions()).toBe(0);
      }
    },
  );

  it('kills a stdio server mid-call: that call fails retryably, the next reconnects and succeeds', async () => {
    const before = pool.status().find((s) => s.server === 'local')!;
    const inflight = pool.callTool({
      server: 'local',
      tool: 'slow',
      arguments: { label: 'killed', ms: 5000 },
      toolUseId: 'f9',
    });
    await until(
      () => jsonLines<{ tool: string }>(counts).some((c) => c.tool === 'slow'),
      'the slow call to start',
      5000,
      25,
    );
    process.kill(-before.pid!, 'SIGKILL');
    const err = await inflight.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'McpTransportError', nonRetryable: false });
    const out = await pool.callTool({
      server: 'local',
      tool: 'count',
      arguments: { label: 'back' },
      toolUseId: 'f10',
    });
    expect(textOf(out)).toBe('counted back');
    const after = pool.status().find((s) => s.server === 'local')!;
    expect(after.pid).not.toBe(before.pid);
    expect(after.spawned).toBe(before.spawned + 1);
    expect(after).toMatchObject({ state: 'closed', era });
  });

  it('never logs a configured secret', () => {
    expect(log.lines.length).toBeGreaterThan(0);
    expect(log.all()).not.toContain(HEADER_SECRET);
  });
});

describe.each(MCP_ERAS)('one shared connection (%s era)', (era) => {
  it('opens one process for many concurrent first calls, and asks the era once, not per call', async () => {
    const marker = randomUUID();
    const requests = fileIn('requests');
    const { pool } = poolOf({
      c: countingStdio(
        fileIn('counts'),
        { args: [COUNTING, `--marker=${marker}`], env: { REQUEST_LOG: requests } },
        era,
      ),
    });
    try {
      const outs = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          pool.callTool({ server: 'c', tool: 'count', arguments: { label: `m${i}` }, toolUseId: `c${i}` }),
        ),
      );
      expect(outs.map(textOf)).toEqual(Array.from({ length: 25 }, (_, i) => `counted m${i}`));
      const procs = markedServers(marker);
      expect(procs).toHaveLength(1);
      expect(procs[0]!.pid).toBe(pool.status()[0]!.pid);
      expect(procs[0]!.pgid).toBe(procs[0]!.pid); // it leads its own process group
      expect(pool.status()[0]).toMatchObject({ spawned: 1, era });
      expect(methodsIn(requests)).toEqual([
        ...handshake(era, true),
        'tools/list',
        ...times(25, 'tools/call'),
      ]);
    } finally {
      await pool.close();
    }
  });

  it('remembers the era: a second pool in the same process spawns once and connects without a probe', async () => {
    const requests = fileIn('requests');
    // The modern fixture's discover result may be reused for a minute (the SDK's default, 0, may not).
    const config = countingStdio(
      fileIn('counts'),
      { env: { REQUEST_LOG: requests, DISCOVER_TTL_MS: '60000' } },
      era,
    );
    const pids: number[] = [];
    for (const label of ['first', 'second']) {
      const { pool } = poolOf({ c: config });
      try {
        const out = await pool.callTool({
          server: 'c',
          tool: 'count',
          arguments: { label },
          toolUseId: label,
        });
        expect(textOf(out)).toBe(`counted ${label}`);
        expect(pool.status()[0]).toMatchObject({ spawned: 1, era });
        pids.push(pool.status()[0]!.pid!);
      } finally {
        await pool.close();
      }
    }
    expect(methodsIn(requests, pids[0])).toEqual([...handshake(era, true), 'tools/list', 'tools/call']);
    expect(methodsIn(requests, pids[1])).toEqual([...handshake(era, false), 'tools/list', 'tools/call']);
  });
});

describe('the modern era: what the server and the protocol setting decide', () => {
  it('probes again at each connect when the discover result may not be reused (ttlMs 0), and never per call', async () => {
    const requests = fileIn('requests');
    const config = countingStdio(fileIn('counts'), { env: { REQUEST_LOG: requests } }, 'modern');
    const pids: number[] = [];
    for (const label of ['first', 'second']) {
      const { pool } = poolOf({ c: config });
      try {
        for (let i = 0; i < 3; i++)
          await pool.callTool({
            server: 'c',
            tool: 'count',
            arguments: { label },
            toolUseId: `${label}${i}`,
          });
        expect(pool.status()[0]).toMatchObject({ spawned: 1, era: 'modern' });
        pids.push(pool.status()[0]!.pid!);
      } finally {
        await pool.close();
      }
    }
    for (const pid of pids)
      expect(methodsIn(requests, pid)).toEqual(['server/discover', 'tools/list', ...times(3, 'tools/call')]);
  });

  it.each([
    ['legacy', 'auto', '2026-07-28'],
    ['modern', 'auto', 'legacy'],
  ] as const)(
    "a %s era learned by one entry never overrides another entry's setting for the same server (protocol %s, then %s)",
    async (era, first, second) => {
      const requests = fileIn('requests');
      const counts = fileIn('counts');
      const env = { REQUEST_LOG: requests, DISCOVER_TTL_MS: '60000' };
      const { pool: learning } = poolOf({ s: countingStdio(counts, { protocol: first, env }, era) });
      const { pool: pinned } = poolOf({ s: countingStdio(counts, { protocol: second, env }, era) });
      try {
        expect((await learning.listTools()).unavailable).toEqual([]);
        expect(learning.status()[0]!.era).toBe(era);
        const listed = await pinned.listTools();
        expect(listed.unavailable).toHaveLength(1);
        expect(listed.unavailable[0]!.reason).toMatch(
          era === 'legacy'
            ? /did not offer pinned protocol version 2026-07-28/
            : /speaks only the 2026-07-28 protocol/,
        );
        // The second entry spoke as its setting says: the pinned one probed, the legacy one shook hands.
        expect(methodsIn(requests)).toEqual([
          ...handshake(era, true),
          'tools/list',
          era === 'legacy' ? 'server/discover' : 'initialize',
        ]);
      } finally {
        await learning.close();
        await pinned.close();
      }
    },
  );

  describe.each(['stdio', 'streamable HTTP'] as const)('over %s', (transport) => {
    /**
     * A pool over one server of `era` with this `protocol` setting, and how many `initialize`
     * handshakes the server received (stdio: its request log; HTTP: the sessions it opened).
     */
    async function mismatched(
      era: McpEra,
      protocol: 'legacy' | '2026-07-28',
    ): Promise<{ pool: McpPool; handshakes(): number; close(): Promise<void> }> {
      if (transport === 'stdio') {
        const requests = fileIn('requests');
        const env = { REQUEST_LOG: requests };
        const entry =
          era === 'modern'
            ? modernStdio(undefined, { protocol, env })
            : countingStdio(fileIn('counts'), { protocol, env }, era);
        const { pool } = poolOf({ s: entry });
        return {
          pool,
          handshakes: () => methodsIn(requests).filter((m) => m === 'initialize').length,
          close: () => pool.close(),
        };
      }
      const server = await startTestServer({ era });
      const { pool } = poolOf({ s: { type: 'http', url: server.url, protocol } });
      return {
        pool,
        handshakes: () => server.sessions(),
        close: async () => {
          await pool.close();
          await server.close();
        },
      };
    }

    it('protocol 2026-07-28 against a legacy server fails with one clear line, and never falls back to initialize', async () => {
      const { pool, handshakes, close } = await mismatched('legacy', '2026-07-28');
      try {
        const listed = await pool.listTools();
        expect(listed.unavailable).toHaveLength(1);
        const reason = listed.unavailable[0]!.reason;
        expect(reason).toBe(
          'connect to s failed: Version negotiation failed: the server did not offer pinned protocol version 2026-07-28 via server/discover (no fallback in pin mode) (the server may speak only 2025-11-25: set protocol: auto)',
        );
        expect(pool.status()[0]).toMatchObject({ connected: false, spawned: transport === 'stdio' ? 1 : 0 });
        expect(handshakes()).toBe(0);
      } finally {
        await close();
      }
    });

    it('protocol legacy against a modern-only server fails with a line that says so and names the setting', async () => {
      const { pool, handshakes, close } = await mismatched('modern', 'legacy');
      try {
        const listed = await pool.listTools();
        expect(listed.unavailable).toHaveLength(1);
        const reason = listed.unavailable[0]!.reason;
        expect(reason).toMatch(
          /^connect to s failed: the server speaks only the 2026-07-28 protocol and refused the 2025-11-25 handshake \(set protocol: auto or 2026-07-28\): /,
        );
        expect(reason).not.toContain('\n');
        expect(pool.status()[0]).toMatchObject({ connected: false });
        // Over stdio the server received the one handshake it refused; over HTTP it keeps no sessions.
        expect(handshakes()).toBe(transport === 'stdio' ? 1 : 0);
      } finally {
        await close();
      }
    });
  });
});

describe.each(MCP_ERAS)('injected values (%s era)', (era) => {
  it('are merged worker-side, hidden from the listed schema, win over Claude, and are redacted from results', async () => {
    const server = await startTestServer({ era });
    const counts = fileIn('counts');
    const { pool, log } = poolOf({
      local: countingStdio(counts, { inject: { label: 'from the worker' } }, era),
      remote: { type: 'streamable-http', url: server.url, inject: { token: INJECTED_SECRET } },
    });
    try {
      const listed = await pool.listTools();
      const count = listed.tools.find((t) => t.server === 'local' && t.name === 'count')!;
      expect(count.inputSchema.properties).not.toHaveProperty('label');
      expect(count.inputSchema.required ?? []).not.toContain('label');
      const echo = listed.tools.find((t) => t.server === 'remote' && t.name === 'echo_args')!;
      expect(echo.inputSchema.properties).not.toHaveProperty('token');
      expect(echo.inputSchema.required).toEqual(['message']);
      expect(JSON.stringify(listed)).not.toContain(INJECTED_SECRET);

      // The injected label reached the server, over Claude's own; an injected value is redacted wherever it comes back.
      const counted = await pool.callTool({
        server: 'local',
        tool: 'count',
        arguments: { label: 'claude' },
        toolUseId: 'i1',
      });
      expect(jsonLines(counts)).toMatchObject([{ tool: 'count', args: { label: 'from the worker' } }]);
      expect(textOf(counted)).toBe('counted [redacted]');

      // The injected secret reached the server too (over Claude's token), and is kept out of the result.
      const echoed = await pool.callTool({
        server: 'remote',
        tool: 'echo_args',
        arguments: { message: 'hi', token: 'from claude' },
        toolUseId: 'i2',
      });
      expect(server.calls.at(-1)).toEqual({
        tool: 'echo_args',
        args: { message: 'hi', token: INJECTED_SECRET },
      });
      expect(JSON.parse(textOf(echoed))).toEqual({ message: 'hi', token: '[redacted]' });
      expect(log.all()).not.toContain(INJECTED_SECRET);
    } finally {
      await pool.close();
      await server.close();
    }
  });
});

describe.each(MCP_ERAS)('timeouts and cancellation (%s era)', (era) => {
  const requests = fileIn('requests');
  const { pool, log } = poolOf({
    c: countingStdio(
      fileIn('counts'),
      { timeout_ms: 700, breaker: { failure_threshold: 2 }, env: { REQUEST_LOG: requests } },
      era,
    ),
  });
  afterAll(() => pool.close());

  it('a call over its request timeout throws a retryable McpTimeout that counts against the breaker', async () => {
    const err = await pool
      .callTool({ server: 'c', tool: 'slow', arguments: { label: 'late', ms: 3000 }, toolUseId: 'x1' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'McpTimeout', nonRetryable: false });
    expect((err as Error).message).toMatch(/timed out/i);
    expect(pool.status()[0]).toMatchObject({ state: 'closed', consecutiveFailures: 1, connected: true, era });
    // A slow call does not kill the server other calls share.
    expect(
      textOf(
        await pool.callTool({
          server: 'c',
          tool: 'count',
          arguments: { label: 'still here' },
          toolUseId: 'x2',
        }),
      ),
    ).toBe('counted still here');
  });

  it('progress keeps a call alive past its request timeout, up to max_total_timeout_ms', async () => {
    const { pool: patient } = poolOf({
      c: countingStdio(fileIn('counts'), { timeout_ms: 700, max_total_timeout_ms: 10_000 }, era),
    });
    try {
      const out = await patient.callTool(
        { server: 'c', tool: 'slow', arguments: { label: 'patient', ms: 1500 }, toolUseId: 'x3' },
        { onProgress: () => undefined },
      );
      expect(textOf(out)).toBe('slow patient done after 1500 ms');
    } finally {
      await patient.close();
    }
  });

  it('aborting the signal rejects at once, cancels the call on the server, and does not count against the breaker', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const call = pool.callTool(
      { server: 'c', tool: 'slow', arguments: { label: 'abandoned', ms: 5000 }, toolUseId: 'x4' },
      { signal: abort.signal },
    );
    setTimeout(() => abort.abort(new Error('activity cancelled')), 300);
    await expect(call).rejects.toThrow('activity cancelled');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(pool.status()[0]!.consecutiveFailures).toBe(0); // the count success reset it; the abort added nothing
    // The server was told, stopped, and said so on stderr, which the worker logs under the server's name.
    await until(
      () =>
        log.lines.some(
          (l) =>
            l.message === 'mcp server stderr' &&
            l.fields.server === 'c' &&
            l.fields.line === 'slow abandoned cancelled',
        ),
      'the server to log the cancellation',
      5000,
      25,
    );
    expect(methodsIn(requests)).toContain('notifications/cancelled');
  });
});

// A launcher that forks a grandchild, as npx does: only a process-group kill reaches both.
const launcher = path.join(dir, 'launcher.js');
fs.writeFileSync(
  launcher,
  `const { spawn } = require('node:child_process');\n` +
    `spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });\n` +
    `const child = spawn(process.execPath, [${JSON.stringify(COUNTING)}], { stdio: 'inherit' });\n` +
    `child.on('exit', (c) => process.exit(c ?? 0));\n`,
);

describe.each(MCP_ERAS)('closing the pool (%s era)', (era) => {
  it('leaves no server processes behind after close, grandchildren included', async () => {
    const { pool } = poolOf({
      launched: countingStdio(fileIn('counts'), { args: [launcher] }, era),
      plain: countingStdio(fileIn('counts'), {}, era),
    });
    await Promise.all(
      ['launched', 'plain'].map((server) =>
        pool.callTool({ server, tool: 'count', arguments: { label: 'x' }, toolUseId: 'o' }),
      ),
    );
    expect(pool.status().map((s) => s.era)).toEqual([era, era]);
    const pgids = pool.status().map((s) => s.pid!);
    const inGroups = () => processTable().filter((p) => pgids.includes(p.pgid));
    expect(inGroups().length).toBeGreaterThanOrEqual(4); // launcher + grandchild + server, and the plain server
    const t0 = Date.now();
    await pool.close();
    expect(inGroups()).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(5000);
    // Closed means closed: no call can spawn a new process afterwards.
    await expect(
      pool.callTool({ server: 'plain', tool: 'count', arguments: { label: 'x' }, toolUseId: 'late' }),
    ).rejects.toThrow(/closed/);
  });
});
