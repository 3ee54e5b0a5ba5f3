/**
 * Why the pool exists, in both protocol eras: the median latency of an `echo` call through one
 * pooled connection, versus connecting per call (what session-per-call clients do), plus 50
 * concurrent calls through the one pooled connection. Three servers: server-everything over stdio
 * (legacy era, the v1 SDK's server), the project's modern-only fixture over stdio and over
 * streamable HTTP (2026-07-28, the v2 SDK's server). Prints the ratio per server (target: pooled
 * ≥ 50× on stdio) and how many processes and era probes each way cost.
 *
 *   npm run bench:mcp
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { McpPool, type ServerConfig } from '../src/mcp';
import { parseConfig } from '../src/config/config-file';
import { testStateDir } from '../test/support/settings';

const POOLED_CALLS = 200;
const SPAWNED_CALLS = Number(process.env.BENCH_SPAWNS ?? 20);
const CONCURRENT = 50;

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const MODERN = path.join(__dirname, '..', '..', 'test', 'support', 'modern-mcp-server.js');

interface Target {
  label: string;
  entry: Record<string, unknown>;
  /** The echo's answer to `message`. */
  echoed: (message: string) => string;
}

function serverOf(entry: Record<string, unknown>): ServerConfig[] {
  return parseConfig(JSON.stringify({ mcp_servers: { s: entry } }), 'json', process.env, 'bench', testStateDir()).servers;
}

/** The modern fixture over HTTP on a free port (spawned from the source tree: the bench runs from dist/, which has no .js fixtures). */
function startModernHttp(): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MODERN, 'http'], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const port = /listening on port (\d+)/.exec(err)?.[1];
      if (port) resolve({ child, url: `http://127.0.0.1:${port}/mcp` });
    });
    child.once('exit', (code) => reject(new Error(`modern server exited ${code}: ${err}`)));
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/**
 * One echo call, checked: the pool answers failures (open circuit, dead server) as `isError` results
 * without throwing, and those come back fast, so an unchecked bench could time errors as successes.
 */
async function call(pool: McpPool, target: Target, i: number): Promise<void> {
  const out = await pool.callTool({ server: 's', tool: 'echo', arguments: { message: `m${i}` }, toolUseId: `b${i}` });
  const text = out.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  if (out.isError || text !== target.echoed(`m${i}`))
    throw new Error(`echo m${i} answered ${out.isError ? 'an error' : 'unexpectedly'}: ${text}`);
}

async function measure(target: Target): Promise<void> {
  const servers = serverOf(target.entry);
  const pool = new McpPool(servers);
  await call(pool, target, -1); // connect once; the pool's whole point is not paying this again
  const era = pool.status()[0]!.era;
  const pooled: number[] = [];
  for (let i = 0; i < POOLED_CALLS; i++) {
    const t = performance.now();
    await call(pool, target, i);
    pooled.push(performance.now() - t);
  }
  const t0 = performance.now();
  const concurrent = await Promise.all(
    Array.from({ length: CONCURRENT }, async (_, i) => {
      const t = performance.now();
      await call(pool, target, 1000 + i);
      return performance.now() - t;
    }),
  );
  const concurrentWall = performance.now() - t0;
  const spawnedBefore = pool.status()[0]!.spawned;
  await pool.close();

  // Session-per-call: what each call costs without a pool. Timed to the answer (spawn or connect, the
  // era's opening exchange, the call) and, separately, with the shutdown a client must also pay
  // before the next call. Each new connection adopts the era this worker already learned (no probe).
  const spawned: number[] = [];
  const withShutdown: number[] = [];
  for (let i = 0; i < SPAWNED_CALLS; i++) {
    const t = performance.now();
    const fresh = new McpPool(servers);
    await call(fresh, target, i);
    spawned.push(performance.now() - t);
    await fresh.close();
    withShutdown.push(performance.now() - t);
  }

  const ratio = median(spawned) / median(pooled);
  const stdio = target.entry.command !== undefined;
  console.log(`\nMCP echo latency, ${target.label} (${era} era, median)`);
  console.log(
    `  pooled connection:   ${median(pooled).toFixed(2)} ms per call (${POOLED_CALLS} sequential calls, ${spawnedBefore} process${stdio ? '' : 'es'} spawned)`,
  );
  console.log(
    `  connect per call:    ${median(spawned).toFixed(1)} ms to the answer, ` +
      `${median(withShutdown).toFixed(1)} ms with the shutdown (${SPAWNED_CALLS} calls, fewer than ${POOLED_CALLS} because each costs a ${stdio ? 'process' : 'connection'})`,
  );
  console.log(
    `  ratio:               pooled is ${ratio.toFixed(0)}× faster to the answer${stdio ? ` (target ≥ 50×: ${ratio >= 50 ? 'met' : 'NOT met'})` : ''}`,
  );
  console.log(
    `  ${CONCURRENT} concurrent calls through one connection: ${concurrentWall.toFixed(1)} ms wall, ${median(concurrent).toFixed(1)} ms median per call`,
  );
}

async function main(): Promise<void> {
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${os.cpus().length} cores`);
  await measure({
    label: 'server-everything over stdio',
    entry: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    echoed: (m) => `Echo: ${m}`,
  });
  await measure({ label: 'the modern-only fixture over stdio', entry: { command: process.execPath, args: [MODERN] }, echoed: (m) => m });
  const http = await startModernHttp();
  try {
    await measure({ label: 'the modern-only fixture over streamable HTTP', entry: { type: 'streamable-http', url: http.url }, echoed: (m) => m });
  } finally {
    http.child.kill('SIGKILL');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
